#include "shard/tick_schedule.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace tessera::shard {
namespace {

constexpr int64_t kHourUs = 3600LL * 1000 * 1000;

// Steps a fake time in `step_us` increments for an hour (the last step
// lands exactly on the hour), taking each tick as soon as it is due;
// returns the ticks taken.
uint64_t RunHour(TickSchedule& s, int64_t start_us, int64_t step_us) {
  const int64_t end = start_us + kHourUs;
  uint64_t ticks = 0;
  for (int64_t now = start_us;; now += step_us) {
    if (now > end) now = end;
    while (s.Due(now)) {
      s.Take(now);
      ++ticks;
    }
    if (now == end) break;
  }
  return ticks;
}

TEST(TickScheduleTest, NoDriftOverAnHour) {
  for (uint32_t rate : {1u, 7u, 20u, 30u, 60u, 64u}) {
    const int64_t start = 123456789;
    TickSchedule s(start, rate);
    // 7 ms steps: every tick is taken up to 7 ms late, never a whole period
    // (rates up to 64 Hz have periods >= 15.6 ms).
    uint64_t ticks = RunHour(s, start, 7000);
    EXPECT_EQ(ticks, 3600u * rate) << rate;
    EXPECT_EQ(s.overruns(), 0u) << rate;
    // The next deadline is exactly one (rounded) period past the hour.
    EXPECT_EQ(s.next_deadline_us(), start + kHourUs + 1000000 / rate) << rate;
  }
}

TEST(TickScheduleTest, DeadlinesAreAbsolute) {
  TickSchedule s(0, 60);
  EXPECT_EQ(s.next_deadline_us(), 16666);
  s.Take(16666 + 10000);                   // 10 ms late
  EXPECT_EQ(s.next_deadline_us(), 33333);  // not 16666 + 10000 + 16666
  s.Take(33333);
  EXPECT_EQ(s.next_deadline_us(), 50000);
  EXPECT_EQ(s.overruns(), 0u);
}

TEST(TickScheduleTest, OverrunSkipsAhead) {
  TickSchedule s(0, 20);  // 50 ms
  ASSERT_TRUE(s.Due(50000));
  // 3.5 periods late: deadlines 50, 100, 150 and 200 ms have all passed.
  TickSchedule::Taken t = s.Take(225000);
  EXPECT_TRUE(t.overrun);
  EXPECT_EQ(t.index, 4u);
  EXPECT_EQ(t.skipped, 3u);
  EXPECT_EQ(s.overruns(), 1u);
  EXPECT_EQ(s.next_deadline_us(), 250000);
  EXPECT_FALSE(s.Due(249999));
  // Back on time: no more overruns.
  t = s.Take(250000);
  EXPECT_FALSE(t.overrun);
  EXPECT_EQ(s.overruns(), 1u);
}

TEST(TickScheduleTest, LateByLessThanAPeriodIsNotAnOverrun) {
  TickSchedule s(0, 20);
  TickSchedule::Taken t = s.Take(99999);  // deadline 50 ms, next at 100 ms
  EXPECT_FALSE(t.overrun);
  EXPECT_EQ(s.next_deadline_us(), 100000);
  t = s.Take(150000);  // deadline 100 ms; 150 ms has passed too
  EXPECT_TRUE(t.overrun);
  EXPECT_EQ(t.index, 3u);
}

TEST(TickScheduleTest, SkipTargetsTheLatestPassedDeadline) {
  // With a non-integer period (3 Hz: 333333.33 us) the skip must land on
  // the latest deadline <= now, and never on one in the future.
  TickSchedule s(0, 3);
  TickSchedule::Taken t = s.Take(666666);  // D(1)=333333, D(2)=666666
  EXPECT_TRUE(t.overrun);
  EXPECT_EQ(t.index, 2u);
  EXPECT_EQ(s.next_deadline_us(), 1000000);
}

}  // namespace
}  // namespace tessera::shard
