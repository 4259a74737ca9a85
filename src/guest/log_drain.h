// LogDrain: where guest log lines go on their way to the server log. A
// guest is hostile until proven otherwise, and its log must cost the host
// no more than a bounded amount of time, memory and output:
//
// - Push never blocks on the output: lines wait in a bounded queue (lines
//   and bytes) that the drain's own thread writes out; a full queue drops
//   the line. A stalled reader of stderr then stalls only that thread.
// - Each line is cut to max_line_bytes (on a UTF-8 boundary, "..." marking
//   the cut), invalid UTF-8 is replaced and control characters are escaped
//   (EscapeForLog), so one guest line is one line of the log and cannot
//   forge another source's prefix or drive the terminal.
// - Each source (a shard) has its own token bucket: lines_per_second with a
//   burst of `burst` lines; beyond it lines are dropped. When a source is
//   allowed to log again after drops, a note with the count of lines it
//   lost comes first (at most one note per source every 5 s, so a source
//   held at its limit does not double its lines with notes).
// Drops are counted by reason (tessera_guest_log_dropped_total{reason=
// "rate"|"queue"} when a Metrics registry is given; dropped() otherwise).
//
// Output lines look like "[<source>] <level>: <text>\n", e.g.
// "[shard arena-1] warn: low fuel\n".
//
// Time: the rate limiter reads `clock` (a FakeClock in tests).
// Thread-safety: Push and dropped() from any thread. The output function is
// called on the drain's thread only, one whole line at a time.
#ifndef TESSERA_GUEST_LOG_DRAIN_H_
#define TESSERA_GUEST_LOG_DRAIN_H_

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "common/clock.h"
#include "common/metrics.h"
#include "common/thread_annotations.h"

namespace tessera::guest {

struct LogDrainOptions {
  // Longest guest text kept per line, in bytes, before escaping (the
  // documented limit: GuestShard::kMaxLogLineBytes).
  size_t max_line_bytes = 4096;
  // Lines waiting for the output (including the batch being written), and
  // their bytes; beyond either, lines are dropped.
  size_t max_queued_lines = 1024;
  size_t max_queued_bytes = 4 << 20;
  // Per source: a sustained rate and a burst. lines_per_second <= 0
  // disables the limit.
  double lines_per_second = 20;
  double burst = 80;
  // Sources whose bucket is full are forgotten once more than this many
  // are tracked (bounds the limiter's memory as shards come and go).
  size_t max_sources = 1024;
  const Clock* clock = nullptr;  // null: RealClock
  Metrics* metrics = nullptr;    // null: counted only in dropped()
};

class LogDrain {
 public:
  // Receives one formatted line ending in '\n'; may block.
  using Output = std::function<void(std::string_view line)>;

  // Starts the drain's thread.
  LogDrain(Output output, LogDrainOptions options = {});
  // Stop().
  ~LogDrain();
  LogDrain(const LogDrain&) = delete;
  LogDrain& operator=(const LogDrain&) = delete;

  // Queues one line from `source` (e.g. "shard arena-1"; also the rate
  // limiter's key) at `level` (tessera::abi::kLog*; others print as "log").
  // Returns false if it was dropped. Never waits for the output.
  bool Push(std::string_view source, int level, std::string_view text);

  // Queues one line of the host's own (not rate-limited, not escaped: the
  // caller escapes any guest text in it; a newline is added), for host
  // threads that must not block on the log either (shard workers logging a
  // stop). Returns false if the queue was full (counted as "queue").
  bool PushLine(std::string_view line);

  // Writes out everything queued, then joins the thread; later pushes are
  // dropped. Waits for the output: a stalled output stalls Stop().
  // Idempotent.
  void Stop();

  // Lines dropped so far, by the rate limit and by a full queue.
  uint64_t dropped_by_rate() const;
  uint64_t dropped_by_queue() const;
  uint64_t dropped() const { return dropped_by_rate() + dropped_by_queue(); }

  // Sources the rate limiter tracks (for tests).
  size_t tracked_sources() const;

  // Writes a line to stderr in one write (the production output).
  static void WriteToStderr(std::string_view line);

  // "[<source>] <level>: <escaped text>\n" with the text cut to
  // `max_line_bytes` (see the file comment); for callers that print
  // guest lines synchronously (`tessera run`).
  static std::string FormatLine(std::string_view source, int level,
                                std::string_view text, size_t max_line_bytes);

 private:
  struct Bucket {
    int64_t credit = 0;  // line-microseconds (a line costs 1e6)
    int64_t updated_us = 0;
    uint64_t dropped = 0;  // since the last note
    int64_t noted_us = 0;  // when the last note was written
  };

  // Takes a token for `source`; on success, `dropped_before` is how many of
  // its lines were dropped since its last accepted one.
  bool Admit(std::string_view source, uint64_t* dropped_before)
      EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Queues `first` (unless empty) and `second`, or drops both (counted
  // once, as "queue").
  bool Enqueue(std::string first, std::string second);
  void Run();

  const Output output_;
  const LogDrainOptions options_;
  const Clock* const clock_;
  Counter* rate_metric_ = nullptr;
  Counter* queue_metric_ = nullptr;

  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::string> queue_ GUARDED_BY(mu_);
  // Lines and bytes in queue_ plus the batch being written.
  size_t pending_lines_ GUARDED_BY(mu_) = 0;
  size_t pending_bytes_ GUARDED_BY(mu_) = 0;
  std::map<std::string, Bucket, std::less<>> buckets_ GUARDED_BY(mu_);
  uint64_t dropped_rate_ GUARDED_BY(mu_) = 0;
  uint64_t dropped_queue_ GUARDED_BY(mu_) = 0;
  bool stopping_ GUARDED_BY(mu_) = false;
  std::mutex stop_mu_;  // serialises Stop()
  std::thread thread_;
};

}  // namespace tessera::guest

#endif  // TESSERA_GUEST_LOG_DRAIN_H_
