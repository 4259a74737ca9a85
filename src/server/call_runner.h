// CallRunner: the shards' keyed calls to the app's functions (DATA.md
// "Keyed calls", docs/guest-abi.md): the shard::CallGateway the shard host
// submits every new call key to.
//
// Calls queue (Submit never blocks) and one thread runs them in batches:
// one data::DataTxn (the store's one writer) per batch, a Savepoint per
// call (group commit: a batch costs one durable commit). Per call:
//   - the run that asked has ended (ShardHost::Get(id)->run_id differs or
//     it stopped): dropped, nothing runs (the new run lists it again);
//   - GetCall(key) stored with the same args hash (data::CanonicalJsonHash
//     of the args): the stored outcome, the function does not run
//     ("replayed"); stored with other args: "KEY_REUSED: ..." (not stored);
//   - else the function (engine ResolveFunction, then InvokeInTxn as a
//     management caller with caller_shard_id = the shard, params = the
//     args, {} for null): ok -> PutCall(ok, result) in the call's scope and Release; a
//     refusal by the function (its error, trap, fuel, watchdog, a contract's
//     BAD_REQUEST) -> RollbackTo, then PutCall(!ok, "CODE: message") in the
//     batch so the same key answers the same way; FUNCTION_NOT_FOUND (and
//     an ambiguous name) -> an error, not stored;
//   - transient failures (kUnavailable: module disabled, not compiled yet,
//     circuit open, shutting down, the writer busy; kIo; a failed commit of
//     the batch) -> rolled back, not stored, retried after 100 ms, doubling
//     up to 10 s, for as long as that shard run lives.
// After the commit (fault points call_runner_before_commit /
// call_runner_after_commit around it) each outcome goes to
// ShardHost::DeliverCallResult and the batch's deferred effects and change
// events to ComputeEngine::AfterCommit.
//
// Metrics: tessera_calls_total{outcome="ok"|"error"|"replayed"|"transient"}
// (transient: each failed attempt).
//
// Time: backoff due times are read from `clock`. Without Start (tests),
// RunBatch runs the due calls on the calling thread.
//
// Threading: Submit from any thread; Attach, Start and Stop from the
// controlling thread; RunBatch from one thread at a time (the runner's own
// once started). Ownership: the store, the engine and the host are not
// owned and must outlive the runner (Stop it first).
#ifndef TESSERA_SERVER_CALL_RUNNER_H_
#define TESSERA_SERVER_CALL_RUNNER_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/metrics.h"
#include "common/status.h"
#include "common/thread_annotations.h"
#include "compute/engine.h"
#include "data/data_store.h"
#include "shard/shard_calls.h"
#include "shard/shard_host.h"

namespace tessera::server {

struct CallRunnerOptions {
  const Clock* clock = nullptr;  // null: RealClock
  Metrics* metrics = nullptr;    // null: not counted
  // Server log lines (a call's first transient failure, refused results);
  // any thread, must not block. Null: not logged.
  std::function<void(const std::string&)> log;
  size_t max_batch = 1000;        // calls per transaction
  int64_t writer_wait_ms = 2000;  // Begin's wait for the writer
  int64_t first_backoff_ms = 100;
  int64_t max_backoff_ms = 10'000;
};

class CallRunner final : public shard::CallGateway {
 public:
  CallRunner(data::DataStore* store, CallRunnerOptions options);
  // Stop().
  ~CallRunner() override;
  CallRunner(const CallRunner&) = delete;
  CallRunner& operator=(const CallRunner&) = delete;

  // Queues the call (see the file comment). Any thread.
  void Submit(shard::ShardCall call) override;

  // What runs and receives the calls; before Start / RunBatch.
  void Attach(compute::ComputeEngine* engine, shard::ShardHost* host);
  // Starts the runner's thread (after the compute manifest sync).
  void Start();
  // Finishes the batch in progress and stops the thread; calls still
  // queued are dropped (their runs ended with the host's shutdown and list
  // them again at the next start). Idempotent.
  void Stop();

  // One batch of the calls due now (queued ones, retries whose backoff is
  // over) on the calling thread; returns how many it took. Not while the
  // runner's thread runs.
  size_t RunBatch();
  // Calls queued or waiting for a retry.
  size_t pending() const;
  // When the earliest retry is due (clock us), nullopt when none waits.
  std::optional<int64_t> next_retry_us() const;

  struct Counts {
    uint64_t ok = 0, error = 0, replayed = 0, transient = 0, dropped = 0;
    uint64_t batches = 0;
  };
  Counts counts() const;

 private:
  struct Pending {
    shard::ShardCall call;
    int64_t due_us = 0;
    int64_t backoff_ms = 0;  // 0: never failed
  };
  enum class Kind { kDeliver, kRetry, kDrop };
  struct Outcome {
    Kind kind = Kind::kDeliver;
    shard::CallResult result;
    const char* counted = "ok";  // the metric's outcome when delivered
  };

  Outcome RunOne(data::DataTxn& txn, const shard::ShardCall& call,
                 compute::Deferred* deferred);
  bool RunLives(const shard::ShardCall& call) const;
  void Retry(Pending pending, const std::string& why, int64_t now_us);
  void Count(const char* outcome);
  void Log(const std::string& line) const;
  void Loop();

  data::DataStore* const store_;
  const CallRunnerOptions options_;
  const Clock* const clock_;
  Counter* metric_ok_ = nullptr;
  Counter* metric_error_ = nullptr;
  Counter* metric_replayed_ = nullptr;
  Counter* metric_transient_ = nullptr;

  compute::ComputeEngine* engine_ = nullptr;
  shard::ShardHost* host_ = nullptr;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Pending> queue_ GUARDED_BY(mu_);
  std::vector<Pending> retries_ GUARDED_BY(mu_);
  Counts counts_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace tessera::server

#endif  // TESSERA_SERVER_CALL_RUNNER_H_
