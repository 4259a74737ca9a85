#include "common/clock.h"

#include <time.h>

#include <chrono>

namespace tessera {

int64_t RealClock::NowUs() const {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

const RealClock* RealClock::Get() {
  static const RealClock* clock = new RealClock();
  return clock;
}

int64_t ThreadCpuClock::NowUs() const {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

const ThreadCpuClock* ThreadCpuClock::Get() {
  static const ThreadCpuClock* clock = new ThreadCpuClock();
  return clock;
}

int64_t RealWallClock::UnixNowUs() const {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

const RealWallClock* RealWallClock::Get() {
  static const RealWallClock* clock = new RealWallClock();
  return clock;
}

}  // namespace tessera
