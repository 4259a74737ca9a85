// Wall-clock limit on guest calls. A caller arms a deadline around one call
// into an instance; if the deadline passes before the caller disarms it, the
// watchdog calls Instance::RequestInterrupt() and the running call traps with
// TrapKind::kInterrupted at its next function entry or loop header.
//
// Invariants: the fire callback runs under mu_, and Disarm takes mu_, so once
// Disarm(token) has returned the watchdog never touches that target again;
// the caller may then destroy the instance. A fire that lands after the call
// returned but before Disarm leaves the instance's interrupt flag set: callers
// clear it (Instance::ClearInterrupt) before their next call.
//
// Threading: Arm, Disarm and Poll may be called from any thread. Start()
// runs one thread that calls Poll(clock->NowUs()) every poll_interval_us
// while deadlines are armed, and sleeps until the next Arm once none has
// been for 50 polls (an idle server's watchdog costs nothing);
// tests instead call Poll with a FakeClock's time and never start it. At most
// one armed deadline exists per concurrently running guest call (one per
// worker), so the list is small and scanned linearly.
#ifndef TESSERA_GUEST_WATCHDOG_H_
#define TESSERA_GUEST_WATCHDOG_H_

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/thread_annotations.h"

namespace tessera::wasm {
class Instance;
}

namespace tessera::guest {

class Watchdog {
 public:
  using Token = uint64_t;
  // Called (under the watchdog's lock, on the polling thread) when a
  // deadline passes. Must be quick and must not call back into the Watchdog.
  using FireFn = void (*)(void* arg);

  // `clock` is not owned and must outlive the watchdog.
  explicit Watchdog(const Clock* clock, int64_t poll_interval_us = 1000);
  ~Watchdog();  // Stop()s the thread if started.
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // Starts / stops the polling thread. Idempotent. Not concurrently with
  // each other.
  void Start();
  void Stop();

  const Clock* clock() const { return clock_; }

  // Arms a deadline (on clock()'s timeline). `instance` must stay alive
  // until Disarm returns.
  Token Arm(wasm::Instance* instance, int64_t deadline_us);
  Token Arm(FireFn fire, void* arg, int64_t deadline_us);
  // Removes the deadline. Returns true if it had fired. Unknown tokens
  // (already disarmed) return false.
  bool Disarm(Token token);

  // Fires every armed deadline <= now_us that has not fired yet. Returns
  // how many fired.
  int Poll(int64_t now_us);

  // Number of armed (not yet disarmed) deadlines.
  size_t armed() const;
  // Whether the thread sleeps until the next Arm.
  bool sleeping() const;

 private:
  struct Entry {
    Token token;
    int64_t deadline_us;
    FireFn fire;
    void* arg;
    bool fired;
  };
  void Run();

  const Clock* const clock_;
  const int64_t poll_interval_us_;

  mutable std::mutex mu_;
  std::vector<Entry> entries_ GUARDED_BY(mu_);
  Token next_token_ GUARDED_BY(mu_) = 1;
  bool stopping_ GUARDED_BY(mu_) = false;
  // The thread sleeps until a deadline is armed (nothing was for a while).
  bool idle_ GUARDED_BY(mu_) = false;
  std::condition_variable cv_;
  std::thread thread_;
};

}  // namespace tessera::guest

#endif  // TESSERA_GUEST_WATCHDOG_H_
