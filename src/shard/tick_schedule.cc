#include "shard/tick_schedule.h"

namespace tessera::shard {

TickSchedule::TickSchedule(int64_t start_us, uint32_t tick_rate)
    : start_us_(start_us), rate_(tick_rate == 0 ? 1 : tick_rate) {}

TickSchedule::Taken TickSchedule::Take(int64_t now_us) {
  Taken taken;
  // A whole period late: the deadline after this one has passed too. Jump
  // to the latest deadline <= now, i.e. the largest k with
  // floor(k * 1e6 / rate) <= now - start.
  if (now_us >= DeadlineOf(next_ + 1)) {
    const int64_t elapsed = now_us - start_us_;
    const uint64_t latest =
        static_cast<uint64_t>(((elapsed + 1) * rate_ - 1) / 1000000);
    taken.skipped = latest - next_;
    taken.overrun = true;
    skipped_ += taken.skipped;
    ++overruns_;
    next_ = latest;
  }
  taken.index = next_;
  ++next_;
  return taken;
}

}  // namespace tessera::shard
