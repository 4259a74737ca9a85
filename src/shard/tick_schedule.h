// When a shard ticks: on absolute deadlines D(n) = start + n * 1e6 / rate
// (integer microseconds, computed from n each time so rounding never
// accumulates: after an hour at 60 Hz the 216,000th deadline is exactly
// start + 3,600,000,000 us). A tick taken late does not move later deadlines.
// When a tick is taken a whole period or more after its deadline (the next
// deadline has passed too) the shard has fallen behind: that counts one
// overrun and the schedule skips ahead to the latest deadline not after now,
// instead of running a burst of catch-up ticks.
//
// Pure value type; no clock, no threads.
#ifndef TESSERA_SHARD_TICK_SCHEDULE_H_
#define TESSERA_SHARD_TICK_SCHEDULE_H_

#include <cstdint>

namespace tessera::shard {

class TickSchedule {
 public:
  // `tick_rate` ticks per second (0 is treated as 1). The first deadline is
  // one period after `start_us`.
  TickSchedule(int64_t start_us, uint32_t tick_rate);

  // The deadline of the next tick to take.
  int64_t next_deadline_us() const { return DeadlineOf(next_); }
  bool Due(int64_t now_us) const { return now_us >= next_deadline_us(); }

  struct Taken {
    uint64_t index = 0;    // schedule index of the tick taken (1-based)
    uint64_t skipped = 0;  // deadlines skipped by this call
    bool overrun = false;
  };
  // Consumes the due deadline (call only when Due(now_us)), skipping ahead
  // first if it is a whole period late.
  Taken Take(int64_t now_us);

  // Nominal dt of one tick: 1e6 / rate, rounded down.
  int64_t period_us() const { return 1000000 / rate_; }
  uint64_t overruns() const { return overruns_; }
  uint64_t skipped() const { return skipped_; }
  uint32_t tick_rate() const { return rate_; }

 private:
  int64_t DeadlineOf(uint64_t n) const {
    return start_us_ + static_cast<int64_t>(n) * 1000000 / rate_;
  }

  int64_t start_us_;
  uint32_t rate_;
  uint64_t next_ = 1;
  uint64_t overruns_ = 0;
  uint64_t skipped_ = 0;
};

}  // namespace tessera::shard

#endif  // TESSERA_SHARD_TICK_SCHEDULE_H_
