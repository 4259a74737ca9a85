// Time sources. Logic takes the time as an argument (Tick(now_us)) or reads
// it through a Clock (monotonic: durations, deadlines, rates) or a WallClock
// (unix time: ticket expiry, saved timestamps), so tests drive it with a
// FakeClock / FakeWallClock and never sleep. Components take a
// `const Clock*` / `const WallClock*` option defaulting to the real one.
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

// Unix (calendar) time. Unlike a Clock it may jump (NTP, an operator), so
// it dates things for other machines and processes (tickets, records) and
// never measures a duration.
class WallClock {
 public:
  virtual ~WallClock() = default;
  // Microseconds since 1970-01-01T00:00:00Z.
  virtual int64_t UnixNowUs() const = 0;
  // The same, floored to milliseconds / seconds.
  int64_t UnixNowMs() const { return FloorDiv(UnixNowUs(), 1000); }
  int64_t UnixNowSecs() const { return FloorDiv(UnixNowUs(), 1000000); }

 private:
  static int64_t FloorDiv(int64_t a, int64_t b) {
    return a / b - ((a % b != 0) && ((a < 0) != (b < 0)) ? 1 : 0);
  }
};

// std::chrono::system_clock.
class RealWallClock final : public WallClock {
 public:
  int64_t UnixNowUs() const override;
  // A process-wide instance (never destroyed).
  static const RealWallClock* Get();
};

// Unix time that moves only when told to.
class FakeWallClock final : public WallClock {
 public:
  explicit FakeWallClock(int64_t start_unix_us = 0) : now_us_(start_unix_us) {}
  int64_t UnixNowUs() const override {
    return now_us_.load(std::memory_order_acquire);
  }
  void Advance(int64_t delta_us) {
    now_us_.fetch_add(delta_us, std::memory_order_acq_rel);
  }
  void Set(int64_t unix_us) {
    now_us_.store(unix_us, std::memory_order_release);
  }

 private:
  std::atomic<int64_t> now_us_;
};

}  // namespace tessera

#endif  // TESSERA_COMMON_CLOCK_H_
