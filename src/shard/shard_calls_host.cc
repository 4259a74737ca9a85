// ShardHost: keyed calls and entity writes (shard_calls.h; docs/guest-abi.md
// "Keyed calls and entity writes").
//
// Per shard run: after every tick the module's calls() are read; each key
// not in flight for this run is submitted once to the CallGateway (at most
// abi::kMaxCallsInFlight at a time; the others wait for a later tick, as
// the module lists them again). DeliverCallResult (any thread) queues a
// result in the shard's mailbox and pokes its worker, which gives it to
// on_call_result before the next tick's inputs; only then does the key
// leave the in-flight set, so a module still listing it meanwhile does not
// submit it twice. After every tick the module's writes() go to the
// EntityWriteSink; when the shard stops (and at Shutdown) its last writes
// are taken and ShardStopped is called, before the sink hears OnStopped.
#include <string>
#include <utility>
#include <vector>

#include "common/text.h"
#include "shard/calls_json.h"
#include "shard/hosted_shard.h"
#include "shard/message_router.h"
#include "shard/shard_host.h"

namespace tessera::shard {
namespace {

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// The log limiter's key for a shard's call or write refusals (apart from
// its message refusals and from each other).
std::string LimiterKey(const char* what, std::string_view shard_id) {
  return std::string(what) + "\n" + std::string(shard_id);
}

}  // namespace

uint64_t ShardHost::NewRunId() {
  // SplitMix64 is a bijection: distinct counters give distinct ids.
  for (;;) {
    const uint64_t id =
        SplitMix64((move_id_seed_ ^ 0x5bd1e9955bd1e995ULL) +
                   run_counter_.fetch_add(1, std::memory_order_relaxed));
    if (id != 0) return id;
  }
}

void ShardHost::NoteCallPorts(std::string_view shard_id,
                              const GuestShard& guest) {
  if (guest.has_calls() && options_.calls == nullptr) {
    HostLog(shard_id, std::string("the module exports ") + abi::kExportCalls +
                          " but this host makes no keyed calls: its calls "
                          "wait forever");
  }
  if (guest.has_writes() && options_.writes == nullptr) {
    HostLog(shard_id, std::string("the module exports ") + abi::kExportWrites +
                          " but this host has no entity writer: its writes "
                          "are not taken");
  }
}

bool ShardHost::DeliverCallResult(std::string_view id, uint64_t run_id,
                                  CallResult result) {
  std::shared_ptr<HostedShard> shard = Find(id);
  bool queued = false;
  if (shard != nullptr) {
    std::lock_guard<std::mutex> lock(shard->mu);
    auto it = shard->calls_in_flight.find(result.key);
    if (shard->info.status == ShardStatus::kRunning &&
        shard->info.run_id == run_id && run_id != 0 &&
        it != shard->calls_in_flight.end() && !it->second) {
      it->second = true;
      shard->call_results.push_back(std::move(result));
      queued = true;
    }
  }
  if (!queued) {
    results_dropped_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  pool_->Poke(shard);
  return true;
}

void ShardHost::DeliverCallResults(HostedShard& shard, int64_t now_us) {
  std::deque<CallResult> results;
  {
    std::lock_guard<std::mutex> lock(shard.mu);
    if (shard.call_results.empty()) return;
    results.swap(shard.call_results);
  }
  GuestShard& guest = *shard.guest;
  size_t delivered = 0;
  for (const CallResult& result : results) {
    if (guest.failed()) break;
    if (guest.DeliverCallResult(result).ok()) ++delivered;
  }
  results_delivered_.fetch_add(delivered, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(shard.mu);
    for (const CallResult& result : results) {
      shard.calls_in_flight.erase(result.key);
    }
  }
  if (guest.failed()) {
    Finish(shard, StopReason::kFailed, guest.failure(), now_us);
  }
}

void ShardHost::AfterTickCalls(HostedShard& shard, int64_t now_us) {
  GuestShard& guest = *shard.guest;
  if (options_.calls != nullptr && guest.has_calls()) {
    Result<ParsedCalls> parsed = guest.TakeCalls();
    if (parsed.ok()) {
      calls_refused_.fetch_add(parsed->refused, std::memory_order_relaxed);
      std::vector<ShardCall> submit;
      size_t waiting = 0;  // over the in-flight limit, for a later tick
      {
        std::lock_guard<std::mutex> lock(shard.mu);
        for (CallRequest& call : parsed->calls) {
          if (shard.calls_in_flight.count(call.key) > 0) continue;
          if (shard.calls_in_flight.size() >= abi::kMaxCallsInFlight) {
            ++waiting;
            continue;
          }
          shard.calls_in_flight.emplace(call.key, false);
          submit.push_back(ShardCall{shard.id, shard.kind->config.name,
                                     shard.run_id, std::move(call.key),
                                     std::move(call.function),
                                     std::move(call.args_json)});
        }
      }
      if (waiting > 0) {
        parsed->refusals.push_back(
            std::to_string(waiting) + " call" + (waiting == 1 ? "" : "s") +
            " wait for a later tick: " +
            std::to_string(abi::kMaxCallsInFlight) + " are in flight");
      }
      CallRefusals("calls", shard.id, parsed->refusals, now_us);
      calls_submitted_.fetch_add(submit.size(), std::memory_order_relaxed);
      for (ShardCall& call : submit) options_.calls->Submit(std::move(call));
    }
  }
  if (!guest.failed()) TakeWrites(shard, now_us);
  if (guest.failed()) {
    Finish(shard, StopReason::kFailed, guest.failure(), now_us);
  }
}

void ShardHost::TakeWrites(HostedShard& shard, int64_t now_us) {
  GuestShard& guest = *shard.guest;
  if (options_.writes == nullptr || !guest.has_writes()) return;
  Result<ParsedWrites> parsed = guest.TakeWrites();
  if (!parsed.ok()) return;
  writes_refused_.fetch_add(parsed->refused, std::memory_order_relaxed);
  CallRefusals("writes", shard.id, parsed->refusals, now_us);
  if (parsed->writes.empty()) return;
  writes_passed_.fetch_add(parsed->writes.size(), std::memory_order_relaxed);
  options_.writes->Write(shard.id, shard.kind->config.write_flush_ms,
                         std::move(parsed->writes));
}

void ShardHost::StopCalls(HostedShard& shard, bool deliver, int64_t now_us) {
  std::deque<CallResult> results;
  {
    std::lock_guard<std::mutex> lock(shard.mu);
    shard.calls_in_flight.clear();
    results.swap(shard.call_results);
  }
  log_limiter_->Forget(LimiterKey("calls", shard.id));
  log_limiter_->Forget(LimiterKey("writes", shard.id));
  GuestShard* guest = shard.guest.get();
  const auto alive = [guest] { return guest != nullptr && !guest->failed(); };
  // Results that came before the stop still reach the module, so that its
  // last writes show them.
  size_t delivered = 0;
  for (const CallResult& result : results) {
    if (!deliver || !alive()) break;
    if (guest->DeliverCallResult(result).ok()) ++delivered;
  }
  results_delivered_.fetch_add(delivered, std::memory_order_relaxed);
  if (options_.writes == nullptr) return;
  // What the module changed since its last tick (a result, a message).
  if (alive()) TakeWrites(shard, now_us);
  options_.writes->ShardStopped(shard.id);
}

void ShardHost::CallRefusals(const char* what, std::string_view shard_id,
                             const std::vector<std::string>& lines,
                             int64_t now_us) {
  if (lines.empty() || !options_.host_log) return;
  std::optional<uint64_t> suppressed =
      log_limiter_->Allow(LimiterKey(what, shard_id), now_us);
  if (!suppressed) return;
  std::string line;
  for (const std::string& part : lines) {
    if (!line.empty()) line += "; ";
    line += part;
    if (line.size() > 1024) {
      line += "; ...";
      break;
    }
  }
  if (*suppressed > 0) {
    line += " (" + std::to_string(*suppressed) +
            " more refusal lines held back since the last one)";
  }
  HostLog(shard_id, line);
}

ShardHost::CallCounters ShardHost::call_counters() const {
  CallCounters c;
  c.calls_submitted = calls_submitted_.load(std::memory_order_relaxed);
  c.calls_refused = calls_refused_.load(std::memory_order_relaxed);
  c.results_delivered = results_delivered_.load(std::memory_order_relaxed);
  c.results_dropped = results_dropped_.load(std::memory_order_relaxed);
  c.writes_passed = writes_passed_.load(std::memory_order_relaxed);
  c.writes_refused = writes_refused_.load(std::memory_order_relaxed);
  return c;
}

}  // namespace tessera::shard
