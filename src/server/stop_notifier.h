// StopNotifier: delivers onStop notifications (a JSON POST to the kind's
// http:// URL) at least once: each notice is retried with exponential
// backoff until the receiver answers 2xx. The queue is bounded (a full
// queue drops the new notice, logged and counted) and lives in memory
// only: notices still pending at Stop are dropped.
//
// Threading: one background thread does the posting (started by Start),
// so Enqueue never blocks on the network and may be called from any thread
// (shard workers). Notices are posted one at a time, earliest due first;
// a slow receiver delays the others by at most its timeout per attempt.
//
// Time: due times are read from an injected Clock (the real one by
// default). While a notice waits for its due time the thread re-reads the
// clock at least every kRecheckMs (and at most every 1 ms, so a notice may
// go out up to 1 ms late), so a FakeClock moved by a test is seen without
// the test notifying anything.
#ifndef TESSERA_SERVER_STOP_NOTIFIER_H_
#define TESSERA_SERVER_STOP_NOTIFIER_H_

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/metrics.h"
#include "common/status.h"
#include "common/thread_annotations.h"

namespace tessera::server {

struct NotifierOptions {
  size_t max_pending = 1024;
  int64_t initial_backoff_ms = 500;
  int64_t max_backoff_ms = 60'000;
  int timeout_ms = 3000;  // per attempt
  // Posts `body` to `url`, returning the HTTP status; null:
  // net::client::PostJson (net/client/http_client.h).
  // Called on the notifier's thread.
  std::function<Result<int>(const std::string& url, const std::string& body)>
      post;
  // Failures and drops; null: stderr. Called on any thread.
  std::function<void(const std::string&)> log;
  // Monotonic time of the retries' due times; null: RealClock. Not owned;
  // must outlive the notifier.
  const Clock* clock = nullptr;
};

class StopNotifier {
 public:
  // The longest the thread waits without re-reading the clock while a
  // notice is not yet due.
  static constexpr int64_t kRecheckMs = 50;

  // `metrics` may be null; it is not owned and must outlive the notifier.
  explicit StopNotifier(NotifierOptions options, Metrics* metrics = nullptr);
  // Stop().
  ~StopNotifier();
  StopNotifier(const StopNotifier&) = delete;
  StopNotifier& operator=(const StopNotifier&) = delete;

  // Starts the posting thread. Call once.
  void Start();
  // Queues a notice, due at once. Returns false (and logs) if the queue is
  // full or the notifier has stopped. Any thread; never blocks on I/O.
  bool Enqueue(std::string url, std::string body);
  // Stops the thread after its current attempt (bounded by timeout_ms) and
  // drops what is still pending (logged). Idempotent. Not from the
  // notifier's own thread.
  void Stop();

  size_t pending() const;
  uint64_t delivered() const;

 private:
  struct Notice {
    std::string url;
    std::string body;
    int attempts = 0;
    int64_t due_us = 0;  // on clock_
  };

  void Run();
  // Index of the earliest due notice; queue_ must not be empty.
  size_t Earliest() const EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Log(const std::string& line) const;

  const NotifierOptions options_;
  const Clock& clock_;
  Counter* delivered_metric_ = nullptr;
  Counter* failures_metric_ = nullptr;
  Counter* dropped_metric_ = nullptr;
  Gauge* pending_metric_ = nullptr;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Notice> queue_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  uint64_t delivered_ GUARDED_BY(mu_) = 0;
  std::thread thread_;
};

}  // namespace tessera::server

#endif  // TESSERA_SERVER_STOP_NOTIFIER_H_
