#include "common/clock.h"

#include <gtest/gtest.h>

#include <chrono>

namespace tessera {
namespace {

int64_t SystemUnixUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

TEST(ClockTest, FakeClockMovesOnlyWhenTold) {
  FakeClock clock(5);
  EXPECT_EQ(clock.NowUs(), 5);
  EXPECT_EQ(clock.NowUs(), 5);
  clock.Advance(10);
  EXPECT_EQ(clock.NowUs(), 15);
  clock.Set(3);
  EXPECT_EQ(clock.NowUs(), 3);
}

TEST(ClockTest, RealClockNeverGoesBack) {
  const Clock& clock = *RealClock::Get();
  int64_t last = clock.NowUs();
  for (int i = 0; i < 1000; ++i) {
    const int64_t now = clock.NowUs();
    ASSERT_GE(now, last);
    last = now;
  }
  EXPECT_EQ(RealClock::Get(), &clock);  // one instance
}

TEST(WallClockTest, FakeWallClockMovesOnlyWhenTold) {
  FakeWallClock clock(1'700'000'000'123'456);
  EXPECT_EQ(clock.UnixNowUs(), 1'700'000'000'123'456);
  EXPECT_EQ(clock.UnixNowMs(), 1'700'000'000'123);
  EXPECT_EQ(clock.UnixNowSecs(), 1'700'000'000);
  clock.Advance(876'544);
  EXPECT_EQ(clock.UnixNowUs(), 1'700'000'001'000'000);
  EXPECT_EQ(clock.UnixNowSecs(), 1'700'000'001);
  clock.Set(42);
  EXPECT_EQ(clock.UnixNowUs(), 42);
  EXPECT_EQ(clock.UnixNowMs(), 0);
}

TEST(WallClockTest, MillisecondsAndSecondsAreFloored) {
  // Before the epoch, truncation towards zero would round up.
  FakeWallClock clock(-1);
  EXPECT_EQ(clock.UnixNowMs(), -1);
  EXPECT_EQ(clock.UnixNowSecs(), -1);
  clock.Set(-1'000'000);
  EXPECT_EQ(clock.UnixNowMs(), -1000);
  EXPECT_EQ(clock.UnixNowSecs(), -1);
  clock.Set(-1'000'001);
  EXPECT_EQ(clock.UnixNowSecs(), -2);
  clock.Set(999'999);
  EXPECT_EQ(clock.UnixNowMs(), 999);
  EXPECT_EQ(clock.UnixNowSecs(), 0);
}

TEST(WallClockTest, RealWallClockIsTheSystemClock) {
  const WallClock& clock = *RealWallClock::Get();
  const int64_t before = SystemUnixUs();
  const int64_t now = clock.UnixNowUs();
  const int64_t after = SystemUnixUs();
  EXPECT_LE(before, now);
  EXPECT_LE(now, after);
  EXPECT_GT(clock.UnixNowSecs(), 1'577'836'800);  // after 2020-01-01
  EXPECT_EQ(RealWallClock::Get(), &clock);
}

}  // namespace
}  // namespace tessera
