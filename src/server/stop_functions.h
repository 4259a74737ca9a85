// StopFunctions: a kind's onStop *function* (DATA.md "onStop functions"):
// an observer of the shard host (registered beside StopNotices, which
// keeps the http(s):// URLs). When a shard whose kind's on_stop is not an
// http(s) URL stops (any reason: the host reports no stop at its own
// shutdown), the function it names ("module.export", or an export name one
// module's invoke trigger has) is invoked as a management caller with
// caller_shard_id = the shard and params
//   {"shardId", "kind", "reason", "error"}   (error: the failure line for
//                                             reason "failed", else null)
// on the observer's own queue thread, in its own transaction (the engine's
// Invoke). Transient failures (kUnavailable, kIo) are retried, 5 tries in
// all, 100 ms apart doubling; other failures and the last transient one are
// logged ("shard <id> (<kind>): onStop <function> failed: ...").
//
// Threading: OnStopped on shard workers (only queues); the queue thread
// invokes. Attach/Start/Stop from the controlling thread; Stop drops what
// is still queued (logged). Ownership: host, kinds and engine not owned.
#ifndef TESSERA_SERVER_STOP_FUNCTIONS_H_
#define TESSERA_SERVER_STOP_FUNCTIONS_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "common/clock.h"
#include "common/status.h"
#include "common/thread_annotations.h"
#include "compute/engine.h"
#include "server/stop_notices.h"
#include "shard/kind_registry.h"
#include "shard/shard_host.h"

namespace tessera::server {

struct StopFunctionsOptions {
  const Clock* clock = nullptr;  // null: RealClock (retry due times)
  // One line per failed call; any thread, must not block. Null: stderr.
  std::function<void(const std::string&)> log;
  int max_tries = 5;
  int64_t first_backoff_ms = 100;
};

class StopFunctions final : public StopObserver {
 public:
  StopFunctions(const shard::ShardHost& host, const shard::KindRegistry& kinds,
                StopFunctionsOptions options = {});
  // Stop().
  ~StopFunctions() override;

  // Before Start / RunDue.
  void Attach(compute::ComputeEngine* engine) { engine_ = engine; }
  void Start();
  void Stop();

  void OnStopped(std::string_view shard_id, shard::StopReason reason,
                 std::string_view message) override;

  // Runs the calls due at the clock's now on the calling thread (tests,
  // without Start); returns how many it ran.
  size_t RunDue();
  size_t pending() const;

  struct Counts {
    uint64_t ok = 0, failed = 0, retried = 0;
  };
  Counts counts() const;

 private:
  struct Pending {
    std::string function;
    std::string shard_id;
    std::string kind;
    std::string params_json;
    int tries = 0;
    int64_t due_us = 0;
  };
  // One try; true when it is done (ok or given up).
  bool RunOne(Pending& p);
  void Log(const std::string& line) const;
  void Loop();

  const shard::ShardHost& host_;
  const shard::KindRegistry& kinds_;
  const StopFunctionsOptions options_;
  const Clock* const clock_;
  compute::ComputeEngine* engine_ = nullptr;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Pending> queue_ GUARDED_BY(mu_);
  Counts counts_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace tessera::server

#endif  // TESSERA_SERVER_STOP_FUNCTIONS_H_
