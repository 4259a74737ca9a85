// Time sources. Logic takes the time as an argument (Tick(now_us)) or reads
// it through a Clock, so tests drive it with a FakeClock and never sleep.
//
// Thread-safety: every method of every Clock may be called from any thread.
#ifndef TESSERA_COMMON_CLOCK_H_
#define TESSERA_COMMON_CLOCK_H_

#include <atomic>
#include <cstdint>

namespace tessera {

class Clock {
 public:
  virtual ~Clock() = default;
  // Microseconds on a monotonic timeline with an arbitrary origin.
  virtual int64_t NowUs() const = 0;
};

// std::chrono::steady_clock.
class RealClock final : public Clock {
 public:
  int64_t NowUs() const override;
  // A process-wide instance (never destroyed).
  static const RealClock* Get();
};

// CPU time consumed by the *calling* thread (CLOCK_THREAD_CPUTIME_ID). Two
// readings are only comparable when taken on the same thread.
class ThreadCpuClock final : public Clock {
 public:
  int64_t NowUs() const override;
  static const ThreadCpuClock* Get();
};

// Time moves only when told to.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(int64_t start_us = 0) : now_us_(start_us) {}
  int64_t NowUs() const override {
    return now_us_.load(std::memory_order_acquire);
  }
  void Advance(int64_t delta_us) {
    now_us_.fetch_add(delta_us, std::memory_order_acq_rel);
  }
  void Set(int64_t now_us) { now_us_.store(now_us, std::memory_order_release); }

 private:
  std::atomic<int64_t> now_us_;
};

}  // namespace tessera

#endif  // TESSERA_COMMON_CLOCK_H_
