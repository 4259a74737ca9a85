// What the bots of one thread observed, and the sums over threads.
//
// Threading: a thread's BotStats is written only by its io thread; the
// driver reads (and merges) them after every io thread was joined. The
// phase is read by the io threads and set by the driver.
#ifndef TESSERA_BENCH_NET_BOT_STATS_H_
#define TESSERA_BENCH_NET_BOT_STATS_H_

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

namespace tessera::bench {

// The driver's phases; frames and bytes are counted per phase.
enum Phase : int {
  kJoining = 0,
  kBaseline = 1,  // connected, no inputs
  kLoad = 2,      // every bot sends inputs
  kDrain = 3,     // waiting for the last ACKs
  kClosing = 4,
  kPhaseCount = 5,
};

// Inputs sent and not answered yet, over every bot of a round: the driver
// waits for zero at the end. Any thread.
class InFlight {
 public:
  void Sent() { count_.fetch_add(1, std::memory_order_relaxed); }
  void Answered() {
    if (count_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      std::lock_guard<std::mutex> lock(mu_);
      cv_.notify_all();
    }
  }
  // True once nothing is in flight; false after `timeout`.
  bool WaitForNone(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, timeout, [this] {
      return count_.load(std::memory_order_acquire) == 0;
    });
  }

 private:
  std::atomic<int64_t> count_{0};
  std::mutex mu_;
  std::condition_variable cv_;
};

struct BotStats {
  BotStats(const std::atomic<int>* phase, InFlight* in_flight)
      : phase(phase), in_flight(in_flight) {}
  int current_phase() const { return phase->load(std::memory_order_relaxed); }
  // Adds `other`'s counts and samples into this one.
  void Merge(const BotStats& other);

  const std::atomic<int>* phase;
  InFlight* in_flight;  // may be null
  uint64_t joined = 0;
  uint64_t join_failures = 0;
  uint64_t inputs_sent = 0;
  uint64_t acks = 0;
  uint64_t rejects = 0;
  uint64_t errors = 0;  // I/O errors and undecodable messages
  std::array<uint64_t, kPhaseCount> frames{};
  std::array<uint64_t, kPhaseCount> bytes_received{};
  // Closes by the server before the driver closed the bot, by code.
  std::map<int, uint64_t> server_closes;
  std::vector<uint32_t> rtt_us;  // input -> ACK/REJECT, per answered input
};

// Percentile `p` (0..1) of `samples` (sorted in place); 0 when empty.
double PercentileMs(std::vector<uint32_t>& samples, double p);

}  // namespace tessera::bench

#endif  // TESSERA_BENCH_NET_BOT_STATS_H_
