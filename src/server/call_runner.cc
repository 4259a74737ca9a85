#include "server/call_runner.h"

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <utility>

#include "common/fault_point.h"
#include "data/schema.h"

namespace tessera::server {

namespace {

constexpr char kMetricName[] = "tessera_calls_total";
constexpr char kMetricHelp[] =
    "Keyed calls from shards by outcome: ok (the function ran), error "
    "(refused, KEY_REUSED, unknown function), replayed (the stored outcome), "
    "transient (a failed attempt, retried).";

bool IsTransient(StatusCode code) {
  return code == StatusCode::kUnavailable || code == StatusCode::kIo ||
         code == StatusCode::kAborted;
}

// "CODE: message" keeps a message that already starts with a code
// ("BAD_REQUEST: ..."); others get one from the status code.
bool HasCode(const std::string& message) {
  size_t colon = message.find(": ");
  if (colon == 0 || colon == std::string::npos || colon > 40) return false;
  return std::all_of(message.begin(), message.begin() + colon, [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

std::string RefusalText(const Status& status) {
  if (HasCode(status.message())) return status.message();
  const char* code = "FUNCTION_FAILED";  // an error return, a trap
  switch (status.code()) {
    case StatusCode::kResourceExhausted:
      code = "FUNCTION_LIMIT";  // fuel, memory
      break;
    case StatusCode::kDeadlineExceeded:
      code = "FUNCTION_TIMEOUT";  // the watchdog
      break;
    case StatusCode::kInvalidArgument:
      code = "BAD_REQUEST";
      break;
    case StatusCode::kPermissionDenied:
      code = "PERMISSION_DENIED";
      break;
    default:
      break;
  }
  return std::string(code) + ": " + status.message();
}

// The function's result as JSON text: "null" for none, a JSON string for
// bytes that are not JSON.
std::string ResultJson(const compute::InvokeResult& result) {
  if (result.result.empty()) return "null";
  if (result.result_is_json || nlohmann::json::accept(result.result)) {
    return result.result;
  }
  return nlohmann::json(result.result)
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

shard::CallResult Error(const std::string& key, std::string error) {
  shard::CallResult r;
  r.key = key;
  r.ok = false;
  r.result_json = "null";
  r.error = std::move(error);
  return r;
}

}  // namespace

CallRunner::CallRunner(data::DataStore* store, CallRunnerOptions options)
    : store_(store),
      options_(std::move(options)),
      clock_(options_.clock != nullptr ? options_.clock : RealClock::Get()) {
  if (Metrics* m = options_.metrics; m != nullptr) {
    metric_ok_ = m->GetCounter(kMetricName, kMetricHelp, {{"outcome", "ok"}});
    metric_error_ =
        m->GetCounter(kMetricName, kMetricHelp, {{"outcome", "error"}});
    metric_replayed_ =
        m->GetCounter(kMetricName, kMetricHelp, {{"outcome", "replayed"}});
    metric_transient_ =
        m->GetCounter(kMetricName, kMetricHelp, {{"outcome", "transient"}});
  }
}

CallRunner::~CallRunner() { Stop(); }

void CallRunner::Submit(shard::ShardCall call) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_) return;
  queue_.push_back(Pending{std::move(call), 0, 0});
  cv_.notify_one();
}

void CallRunner::Attach(compute::ComputeEngine* engine,
                        shard::ShardHost* host) {
  engine_ = engine;
  host_ = host;
}

void CallRunner::Start() {
  if (thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
  }
  thread_ = std::thread([this] { Loop(); });
}

void CallRunner::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    cv_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lock(mu_);
  queue_.clear();
  retries_.clear();
}

size_t CallRunner::pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.size() + retries_.size();
}

std::optional<int64_t> CallRunner::next_retry_us() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::optional<int64_t> next;
  for (const Pending& p : retries_) {
    if (!next || p.due_us < *next) next = p.due_us;
  }
  return next;
}

CallRunner::Counts CallRunner::counts() const {
  std::lock_guard<std::mutex> lock(mu_);
  return counts_;
}

void CallRunner::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    const int64_t now = clock_->NowUs();
    bool due = !queue_.empty();
    int64_t next = INT64_MAX;
    for (const Pending& p : retries_) {
      if (p.due_us <= now) due = true;
      next = std::min(next, p.due_us);
    }
    if (!due) {
      if (next == INT64_MAX) {
        cv_.wait(lock);
      } else {
        cv_.wait_for(lock, std::chrono::microseconds(next - now));
      }
      continue;
    }
    lock.unlock();
    RunBatch();
    lock.lock();
  }
}

bool CallRunner::RunLives(const shard::ShardCall& call) const {
  if (host_ == nullptr) return false;
  std::optional<shard::ShardInfo> info = host_->Get(call.shard_id);
  return info && info->run_id == call.run_id &&
         info->status != shard::ShardStatus::kStopped;
}

void CallRunner::Count(const char* outcome) {
  Counter* c = nullptr;
  std::string_view o(outcome);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (o == "ok") {
      ++counts_.ok;
      c = metric_ok_;
    } else if (o == "error") {
      ++counts_.error;
      c = metric_error_;
    } else if (o == "replayed") {
      ++counts_.replayed;
      c = metric_replayed_;
    } else {
      ++counts_.transient;
      c = metric_transient_;
    }
  }
  if (c != nullptr) c->Add();
}

void CallRunner::Log(const std::string& line) const {
  if (options_.log) options_.log(line);
}

void CallRunner::Retry(Pending pending, const std::string& why,
                       int64_t now_us) {
  Count("transient");
  if (pending.backoff_ms == 0) {
    Log("call " + pending.call.key + " of shard " + pending.call.shard_id +
        " to " + pending.call.function + ": " + why + " (retrying)");
    pending.backoff_ms = options_.first_backoff_ms;
  } else {
    pending.backoff_ms =
        std::min(pending.backoff_ms * 2, options_.max_backoff_ms);
  }
  pending.due_us = now_us + pending.backoff_ms * 1000;
  std::lock_guard<std::mutex> lock(mu_);
  if (!stopping_) retries_.push_back(std::move(pending));
}

size_t CallRunner::RunBatch() {
  const int64_t now = clock_->NowUs();
  std::vector<Pending> batch;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Retries due first (oldest first), then the queue in order.
    std::stable_sort(
        retries_.begin(), retries_.end(),
        [](const Pending& a, const Pending& b) { return a.due_us < b.due_us; });
    auto it = retries_.begin();
    while (it != retries_.end() && batch.size() < options_.max_batch) {
      if (it->due_us > now) break;
      batch.push_back(std::move(*it));
      it = retries_.erase(it);
    }
    while (!queue_.empty() && batch.size() < options_.max_batch) {
      batch.push_back(std::move(queue_.front()));
      queue_.pop_front();
    }
    if (!batch.empty()) ++counts_.batches;
  }
  const size_t taken = batch.size();
  // Calls of runs that ended: nothing runs for them.
  std::erase_if(batch, [&](const Pending& p) {
    if (RunLives(p.call)) return false;
    std::lock_guard<std::mutex> lock(mu_);
    ++counts_.dropped;
    return true;
  });
  if (batch.empty()) return taken;
  if (engine_ == nullptr) {
    for (Pending& p : batch) Retry(std::move(p), "no compute engine", now);
    return taken;
  }

  Result<std::unique_ptr<data::DataTxn>> txn =
      store_->Begin(data::TxnMode::kWrite, options_.writer_wait_ms);
  if (!txn.ok()) {
    for (Pending& p : batch) Retry(std::move(p), txn.status().message(), now);
    return taken;
  }
  compute::Deferred deferred;
  std::vector<Outcome> outcomes;
  outcomes.reserve(batch.size());
  for (const Pending& p : batch) {
    compute::Deferred own;
    outcomes.push_back(RunOne(**txn, p.call, &own));
    if (outcomes.back().kind == Kind::kDeliver && !own.empty()) {
      deferred.Append(std::move(own));
    }
  }
  const bool any =
      std::any_of(outcomes.begin(), outcomes.end(),
                  [](const Outcome& o) { return o.kind == Kind::kDeliver; });
  if (!any) {
    // Every call failed for now: nothing to commit (the txn rolls back).
    txn->reset();
    for (size_t i = 0; i < batch.size(); ++i) {
      Retry(std::move(batch[i]), outcomes[i].result.error, now);
    }
    return taken;
  }
  FaultPoint("call_runner_before_commit");
  Result<std::vector<data::ChangeEvent>> committed = (*txn)->Commit();
  txn->reset();
  if (!committed.ok()) {
    const std::string why = "commit failed: " + committed.status().message();
    for (Pending& p : batch) Retry(std::move(p), why, now);
    return taken;
  }
  FaultPoint("call_runner_after_commit");
  for (size_t i = 0; i < batch.size(); ++i) {
    Outcome& o = outcomes[i];
    switch (o.kind) {
      case Kind::kDeliver:
        Count(o.counted);
        host_->DeliverCallResult(batch[i].call.shard_id, batch[i].call.run_id,
                                 std::move(o.result));
        break;
      case Kind::kRetry:
        Retry(std::move(batch[i]), o.result.error, now);
        break;
      case Kind::kDrop:
        break;
    }
  }
  if (!deferred.empty() || !committed->empty()) {
    engine_->AfterCommit(std::move(deferred), *committed, "");
  }
  return taken;
}

CallRunner::Outcome CallRunner::RunOne(data::DataTxn& txn,
                                       const shard::ShardCall& call,
                                       compute::Deferred* deferred) {
  Outcome out;
  auto retry = [&](std::string why) {
    out.kind = Kind::kRetry;
    out.result = Error(call.key, std::move(why));
    return out;
  };
  auto deliver_error = [&](std::string error) {
    out.kind = Kind::kDeliver;
    out.counted = "error";
    out.result = Error(call.key, std::move(error));
    return out;
  };
  Result<std::string> hash = data::CanonicalJsonHash(
      call.args_json.empty() ? std::string_view("null") : call.args_json);
  if (!hash.ok()) {
    return deliver_error("BAD_REQUEST: the call's args are not JSON: " +
                         hash.status().message());
  }
  if (Status s = txn.Savepoint(); !s.ok()) return retry(s.message());
  Result<std::optional<data::StoredCall>> stored = txn.GetCall(call.key);
  if (!stored.ok()) {
    (void)txn.RollbackTo();
    return retry(stored.status().message());
  }
  if (stored->has_value()) {
    (void)txn.Release();
    const data::StoredCall& s = **stored;
    if (s.args_hash != *hash) {
      return deliver_error(std::string(data::codes::kKeyReused) + ": key \"" +
                           call.key + "\" was used before with other args (" +
                           s.function + ")");
    }
    out.kind = Kind::kDeliver;
    out.counted = "replayed";
    out.result.key = call.key;
    out.result.ok = s.ok;
    out.result.result_json = s.ok ? s.result_json : "null";
    if (out.result.result_json.empty()) out.result.result_json = "null";
    out.result.error = s.ok ? "" : s.error;
    return out;
  }
  Result<compute::FunctionRef> ref = engine_->ResolveFunction(call.function);
  if (!ref.ok()) {
    (void)txn.Release();
    if (IsTransient(ref.status().code())) return retry(ref.status().message());
    std::string message = ref.status().message();
    if (!HasCode(message)) message = "FUNCTION_NOT_FOUND: " + message;
    return deliver_error(std::move(message));
  }
  const std::string function = ref->module + "." + ref->export_name;
  compute::InvokeRequest request;
  request.module = ref->module;
  request.export_name = ref->export_name;
  // No args (null) are no params, as for an invoke without a body.
  request.params_json = call.args_json.empty() || call.args_json == "null"
                            ? "{}"
                            : call.args_json;
  request.management = true;
  request.caller_shard_id = call.shard_id;
  Result<compute::InvokeResult> ran =
      engine_->InvokeInTxn(txn, request, deferred);
  data::StoredCall record;
  record.key = call.key;
  record.function = function;
  record.args_hash = *hash;
  if (ran.ok()) {
    record.ok = true;
    record.result_json = ResultJson(*ran);
    if (Status put = txn.PutCall(record); !put.ok()) {
      (void)txn.RollbackTo();
      *deferred = compute::Deferred();
      return retry(put.message());
    }
    if (Status s = txn.Release(); !s.ok()) {
      *deferred = compute::Deferred();
      return retry(s.message());
    }
    out.kind = Kind::kDeliver;
    out.counted = "ok";
    out.result.key = call.key;
    out.result.ok = true;
    out.result.result_json = record.result_json;
    return out;
  }
  (void)txn.RollbackTo();
  *deferred = compute::Deferred();
  const Status& failed = ran.status();
  if (IsTransient(failed.code())) return retry(failed.message());
  if (failed.code() == StatusCode::kNotFound) {
    std::string message = failed.message();
    if (!HasCode(message)) message = "FUNCTION_NOT_FOUND: " + message;
    return deliver_error(std::move(message));
  }
  // The function refused: stored, so the same key answers the same way.
  record.ok = false;
  record.result_json = "null";
  record.error = RefusalText(failed);
  if (Status put = txn.PutCall(record); !put.ok()) return retry(put.message());
  return deliver_error(record.error);
}

}  // namespace tessera::server
