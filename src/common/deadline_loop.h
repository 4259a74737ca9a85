// The loop of a thread that works through items due at deadlines
// (server::EntityWriter's flushes, server::StopFunctions' calls): with
// `lock` held, it sleeps on `cv` until the earliest deadline that
// `next_due_us()` reports (INT64_MAX: none, sleep until notified) has
// passed on `clock`, then calls `run_due()` with the lock released, and
// returns once `stopping` is set (and `cv` notified). Whoever adds an item
// or sets `stopping` notifies `cv` under the same mutex.
#ifndef TESSERA_COMMON_DEADLINE_LOOP_H_
#define TESSERA_COMMON_DEADLINE_LOOP_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

#include "common/clock.h"

namespace tessera {

template <typename NextDue, typename RunDue>
void RunDeadlineLoop(std::unique_lock<std::mutex>& lock,
                     std::condition_variable& cv, const Clock& clock,
                     const bool& stopping, NextDue next_due_us,
                     RunDue run_due) {
  while (!stopping) {
    const int64_t now = clock.NowUs();
    const int64_t next = next_due_us();
    if (next > now) {
      if (next == INT64_MAX) {
        cv.wait(lock);
      } else {
        cv.wait_for(lock, std::chrono::microseconds(next - now));
      }
      continue;
    }
    lock.unlock();
    run_due();
    lock.lock();
  }
}

}  // namespace tessera

#endif  // TESSERA_COMMON_DEADLINE_LOOP_H_
