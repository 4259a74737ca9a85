// messages_bench: small shard-to-shard messages per second on one core
// (issue 18: target >= 1,000,000 in-process).
//
// One ShardHost without worker threads (workers = 0) on a FakeClock,
// stepped by StepForTest on this thread: everything below runs on one
// core. kShards shards of the `talk` test guest (tests/guests/talk) in a
// ring: before every tick each shard gets one input `{"burst": {"kind":
// "shard", "to": <the next shard>, "count": K, "bytes": 16}}`, so its tick
// queues K messages of 16 data bytes (topic "b") that the host takes from
// its outbox after the tick, checks, routes to the next shard's inbox and
// hands to that shard's on_messages before its next tick. The host's
// per-tick limits (64 sent, 64 applied, 1,024 queued per shard by default,
// tessera/abi.h) are raised through HostOptions so that a shard may send
// and take K messages a tick; the guest's fuel per tick is raised to
// match.
//
// Timed: this thread's CPU time of the StepForTest calls (the guest's
// burst loop, outbox encode, the host's decode, checks, routing and
// inboxes, the messages' encode for on_messages and the guest's decode
// and handler, plus the ticks themselves). The baseline, measured in the
// same run on a fresh host: the same shards, the same ticks and inputs
// with count 0 (everything but the messages). Reported: messages
// delivered per CPU second with everything counted (the figure held
// against the target), the per-message cost (the difference of the two
// runs' time over the messages) and the ratio of the two runs.
//
// Correctness, never timing, decides the exit status: every message sent
// is delivered (the host's counters: sent = delivered, nothing refused),
// each shard's snapshot counts exactly the messages its neighbour sent,
// and its last received message is the neighbour's last of the last tick.
// --quick (the messages_bench_smoke test) runs a few ticks of small
// bursts.
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/clock.h"
#include "shard/kind_registry.h"
#include "shard/message_router.h"
#include "shard/shard_abi.h"
#include "shard/shard_host.h"
#include "shard/shard_sink.h"
#include "tessera/abi.h"
#include "wasm/loader.h"

namespace {

using nlohmann::json;
using tessera::FakeClock;
using tessera::Status;
using tessera::ThreadCpuClock;
namespace shard = tessera::shard;

constexpr int kShards = 8;
constexpr int kDataBytes = 16;
constexpr int64_t kTickUs = 50'000;  // 20 Hz

std::string Msgpack(const json& value) {
  const std::vector<uint8_t> bytes = json::to_msgpack(value);
  return std::string(bytes.begin(), bytes.end());
}

std::string ShardId(int i) { return "talk-" + std::to_string(i % kShards); }

// Keeps the last snapshot of every shard, and counts refused inputs and
// stops (none may happen).
class Sink final : public shard::ShardSink {
 public:
  void OnFrame(std::string_view shard_id, uint64_t, std::string_view snapshot,
               const std::vector<shard::InputResult>& inputs) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (keep_) snapshots_[std::string(shard_id)] = std::string(snapshot);
    for (const shard::InputResult& r : inputs) {
      if (!r.accepted) {
        if (problems_++ == 0) {
          std::fprintf(stderr, "%.*s refused an input: %s\n",
                       static_cast<int>(shard_id.size()), shard_id.data(),
                       r.rejection.c_str());
        }
      }
    }
  }
  void OnStopped(std::string_view shard_id, shard::StopReason,
                 std::string_view message) override {
    std::lock_guard<std::mutex> lock(mu_);
    ++problems_;
    std::fprintf(stderr, "%.*s stopped: %.*s\n",
                 static_cast<int>(shard_id.size()), shard_id.data(),
                 static_cast<int>(message.size()), message.data());
  }
  void Keep(bool keep) {
    std::lock_guard<std::mutex> lock(mu_);
    keep_ = keep;
  }
  std::map<std::string, std::string> snapshots() {
    std::lock_guard<std::mutex> lock(mu_);
    return snapshots_;
  }
  int problems() {
    std::lock_guard<std::mutex> lock(mu_);
    return problems_;
  }

 private:
  std::mutex mu_;
  bool keep_ = false;
  std::map<std::string, std::string> snapshots_;
  int problems_ = 0;
};

struct Outcome {
  double cpu_ms = 0;  // the measured StepForTest calls
  uint64_t sent = 0;
  uint64_t delivered = 0;
  uint64_t refused = 0;
  int mismatches = 0;
};

Outcome Run(const shard::KindRegistry& kinds, uint64_t per_tick, int warmup,
            int measured) {
  Outcome out;
  FakeClock clock(0);
  Sink sink;
  shard::HostOptions options;
  options.workers = 0;
  options.clock = &clock;
  options.save_interval_us = 0;
  // Raised for the bench (defaults: tessera/abi.h).
  const size_t limit = per_tick > 0 ? per_tick : 1;
  options.max_messages_sent_per_tick = limit;
  options.max_messages_applied_per_tick = limit;
  options.max_inbox_messages = 2 * limit;
  shard::ShardHost host(&kinds, &sink, nullptr, options);
  const std::string params = Msgpack({{"groups", json::array()}});
  for (int i = 0; i < kShards; ++i) {
    Status created = host.Create("talk", ShardId(i), params);
    if (!created.ok()) {
      std::fprintf(stderr, "create %s: %s\n", ShardId(i).c_str(),
                   created.ToString().c_str());
      ++out.mismatches;
      return out;
    }
  }
  std::vector<std::string> bursts;
  for (int i = 0; i < kShards; ++i) {
    bursts.push_back(Msgpack({{"burst",
                               {{"kind", "shard"},
                                {"to", ShardId(i + 1)},
                                {"count", per_tick},
                                {"bytes", kDataBytes}}}}));
  }
  int64_t now = 0;
  uint64_t seq = 0;
  const int ticks = warmup + measured;
  shard::ShardHost::TalkCounters before{}, after{};
  for (int n = 0; n <= ticks; ++n) {
    // The last pass only delivers the last tick's messages (and its
    // snapshots count them): no inputs.
    if (n < ticks) {
      for (int i = 0; i < kShards; ++i) {
        Status s = host.SubmitInput(ShardId(i), "bench", ++seq, bursts[i]);
        if (!s.ok()) {
          std::fprintf(stderr, "input: %s\n", s.ToString().c_str());
          ++out.mismatches;
          return out;
        }
      }
    }
    if (n == ticks) {
      sink.Keep(true);
      after = host.talk_counters();
    }
    if (n == warmup) before = host.talk_counters();
    now += kTickUs;
    clock.Set(now);
    const int64_t c0 = ThreadCpuClock::Get()->NowUs();
    host.StepForTest(now);
    const int64_t c1 = ThreadCpuClock::Get()->NowUs();
    if (n >= warmup && n < ticks) out.cpu_ms += (c1 - c0) / 1000.0;
  }
  const shard::ShardHost::TalkCounters c = host.talk_counters();
  // Messages of the measured passes: sent by their ticks, delivered before
  // them (the first delivers the last warm-up tick's).
  out.sent = after.messages_sent - before.messages_sent;
  out.delivered = after.messages_delivered - before.messages_delivered;
  for (uint64_t r : c.messages_refused) out.refused += r;
  if (c.messages_sent != c.messages_delivered || out.refused != 0) {
    std::fprintf(stderr,
                 "sent %" PRIu64 ", delivered %" PRIu64 ", refused %" PRIu64
                 "\n",
                 c.messages_sent, c.messages_delivered, out.refused);
    ++out.mismatches;
  }
  const uint64_t expected = per_tick * static_cast<uint64_t>(ticks);
  if (c.messages_sent != expected * kShards) {
    std::fprintf(stderr, "sent %" PRIu64 ", expected %" PRIu64 "\n",
                 c.messages_sent, expected * kShards);
    ++out.mismatches;
  }
  // Each shard received what its neighbour sent, the last one last.
  for (const auto& [id, bytes] : sink.snapshots()) {
    const json snap = json::from_msgpack(bytes, true, false);
    const uint64_t received =
        snap.is_object() ? snap.value("received", uint64_t{0}) : 0;
    bool last_ok = per_tick == 0;
    if (per_tick > 0 && snap.is_object() && snap.contains("inbox") &&
        snap["inbox"].is_array() && !snap["inbox"].empty()) {
      const json& last = snap["inbox"].back();
      // [from, topic, data]; data "i:<index>" padded to kDataBytes.
      const std::string want = "i:" + std::to_string(per_tick - 1);
      const int index = std::stoi(id.substr(id.find('-') + 1));
      last_ok = last.is_array() && last.size() == 3 &&
                last[0] == ShardId(index + kShards - 1) && last[1] == "b" &&
                last[2].is_string() &&
                last[2].get<std::string>().size() ==
                    static_cast<size_t>(kDataBytes) &&
                last[2].get<std::string>().rfind(want, 0) == 0;
    }
    if (received != expected || !last_ok) {
      std::fprintf(stderr,
                   "%s: received %" PRIu64 " (expected %" PRIu64 ")%s\n",
                   id.c_str(), received, expected,
                   last_ok ? "" : ", last message not the neighbour's last");
      ++out.mismatches;
    }
  }
  if (sink.snapshots().size() != static_cast<size_t>(kShards)) {
    std::fprintf(stderr, "%zu snapshots of %d shards\n",
                 sink.snapshots().size(), kShards);
    ++out.mismatches;
  }
  out.mismatches += sink.problems();
  return out;
}

// The host's part alone, without guests: the same messages made, routed by
// a MessageRouter to the next shard's Inbox and taken out again, pass after
// pass. Returns this thread's CPU ms of the measured passes; `delivered`
// counts the messages taken.
double RouteOnly(uint64_t per_tick, int warmup, int measured,
                 uint64_t* delivered, int* mismatches) {
  shard::MessageRouter router;
  std::vector<std::shared_ptr<shard::Inbox>> inboxes;
  for (int i = 0; i < kShards; ++i) {
    inboxes.push_back(std::make_shared<shard::Inbox>(2 * per_tick));
    router.Add(ShardId(i), inboxes.back(), /*handler=*/true);
  }
  std::vector<shard::RoutedRefusal> refused;
  double cpu_ms = 0;
  *delivered = 0;
  for (int n = 0; n < warmup + measured; ++n) {
    const int64_t c0 = ThreadCpuClock::Get()->NowUs();
    uint64_t taken = 0;
    for (int i = 0; i < kShards; ++i) {
      const std::string from = ShardId(i);
      const shard::MessageTarget to{shard::TargetKind::kShard, ShardId(i + 1)};
      for (uint64_t k = 0; k < per_tick; ++k) {
        std::string data = "i:" + std::to_string(k);
        data.resize(kDataBytes, '.');
        router.Route(from, to,
                     std::make_shared<const shard::ShardMessage>(
                         shard::ShardMessage{from, "b", std::move(data)}),
                     &refused);
      }
    }
    for (const auto& inbox : inboxes) taken += inbox->Take(per_tick).size();
    const int64_t c1 = ThreadCpuClock::Get()->NowUs();
    if (n >= warmup) {
      cpu_ms += (c1 - c0) / 1000.0;
      *delivered += taken;
    }
    if (taken != per_tick * kShards || !refused.empty()) ++*mismatches;
  }
  return cpu_ms;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else {
      std::fprintf(stderr, "usage: %s [--quick]\n", argv[0]);
      return 2;
    }
  }
  std::ifstream in(TESSERA_BENCH_TALK_WASM, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "the talk guest is missing: %s\n",
                 TESSERA_BENCH_TALK_WASM);
    return 1;
  }
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                   std::istreambuf_iterator<char>());
  shard::KindConfig kind;
  kind.name = "talk";
  kind.fuel_per_tick = 20'000'000'000;  // K messages a tick, both ways
  kind.tick_budget_ms = 1000;
  kind.max_run_ms = 2000;
  kind.idle_shutdown_secs = 0;
  tessera::wasm::LoadOptions load;
  load.check = shard::ShardCheckOptions(kind.memory_mb);
  load.fuel = true;
  load.cache_dir = TESSERA_BENCH_CACHE;  // the compiled guest
  auto module = tessera::wasm::LoadModule(bytes, load);
  if (!module.ok()) {
    std::fprintf(stderr, "load the talk guest: %s\n",
                 module.status().ToString().c_str());
    return 1;
  }
  shard::KindRegistry kinds;
  if (Status s = kinds.Add(kind, *module); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 1;
  }

  const uint64_t per_tick = quick ? 50 : 4000;
  const int warmup = quick ? 2 : 10;
  const int measured = quick ? 5 : 100;
  std::printf(
      "messages_bench: %d talk shards in a ring on one core (ShardHost, "
      "workers = 0,\nStepForTest, FakeClock); each sends %" PRIu64
      " messages of %d bytes per tick to the next;\n%d warm-up + %d measured "
      "ticks. Host limits raised for the bench: %" PRIu64
      " sent and applied\nper shard per tick, %" PRIu64
      " queued (defaults %u, %u, %u)%s\n\n",
      kShards, per_tick, kDataBytes, warmup, measured, per_tick, 2 * per_tick,
      tessera::abi::kMaxMessagesSentPerTick,
      tessera::abi::kMaxMessagesAppliedPerTick, tessera::abi::kMaxInboxMessages,
      quick ? " (--quick: timings not meaningful)" : "");
  const Outcome with = Run(kinds, per_tick, warmup, measured);
  const Outcome base = Run(kinds, 0, warmup, measured);
  uint64_t routed = 0;
  int route_mismatches = 0;
  const double route_ms =
      RouteOnly(per_tick, warmup, measured, &routed, &route_mismatches);
  const int mismatches = with.mismatches + base.mismatches + route_mismatches;
  const double rate = with.cpu_ms > 0 ? static_cast<double>(with.delivered) /
                                            (with.cpu_ms / 1000.0)
                                      : 0;
  const double extra_ms = with.cpu_ms - base.cpu_ms;
  const double per_message_ns =
      with.delivered > 0 ? extra_ms * 1e6 / static_cast<double>(with.delivered)
                         : 0;
  std::printf("%-34s %12s %12s\n", "", "messages", "baseline");
  std::printf("%-34s %12.1f %12.1f\n", "CPU ms, measured ticks", with.cpu_ms,
              base.cpu_ms);
  std::printf("%-34s %12" PRIu64 " %12" PRIu64 "\n", "messages delivered",
              with.delivered, base.delivered);
  std::printf("%-34s %12.2f\n", "CPU time, messages / baseline",
              base.cpu_ms > 0 ? with.cpu_ms / base.cpu_ms : 0.0);
  std::printf("%-34s %12.0f ns\n", "per message (difference / messages)",
              per_message_ns);
  std::printf("%-34s %12.2f M/s  (target >= 1 M/s: %s)\n",
              "delivered per CPU second, all in", rate / 1e6,
              rate >= 1e6 ? "ok" : "--");
  std::printf("%-34s %12.2f M/s\n", "messages alone (1 / per message)",
              per_message_ns > 0 ? 1e3 / per_message_ns : 0.0);
  const double route_rate =
      route_ms > 0 ? static_cast<double>(routed) / (route_ms / 1000.0) : 0;
  std::printf(
      "%-34s %12.2f M/s  (%.0f ns each; %.0f%% of the all-in "
      "time)\n",
      "host alone: make, route, take", route_rate / 1e6,
      routed > 0 ? route_ms * 1e6 / static_cast<double>(routed) : 0.0,
      with.cpu_ms > 0 && routed > 0 && with.delivered > 0
          ? 100.0 * (route_ms / static_cast<double>(routed)) /
                (with.cpu_ms / static_cast<double>(with.delivered))
          : 0.0);
  std::printf(
      "\nall in: the messages' run's CPU time, ticks, inputs and snapshots "
      "included;\nbaseline: the same shards, ticks and inputs with count 0, "
      "on a fresh host;\nhost alone: the same messages made, routed "
      "(shard::MessageRouter) to the next\nshard's Inbox and taken out, "
      "without guests (no outbox, encode or handler).\n");
  std::printf(
      "\ncross-check: %d mismatches (every message delivered, in "
      "order, counted)\n",
      mismatches);
  return mismatches == 0 ? 0 : 1;
}
