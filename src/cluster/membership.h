// A machine's membership of the cluster (docs/cluster.md): joining under
// its id with a fresh epoch, heartbeating every 2 s, and fencing itself
// when its heartbeats stop landing.
//
// Two threads (Start):
//  - the heartbeat thread runs Step: a join while it is not a member (a
//    live process still holding the id is waited for, at most until it has
//    been silent for the store's dead time), then a heartbeat every
//    heartbeat_every_us. A heartbeat that lands moves the fence deadline to
//    the time it was *sent* plus fence_after_us. A heartbeat the store
//    answers with "lapsed" fences at once.
//  - the fence thread runs CheckFence every 100 ms and does no I/O: past
//    the deadline it marks the machine fenced and calls on_fenced, even
//    while the heartbeat thread hangs inside a database call.
// After a fence the next Step joins again with a new epoch (replacing its
// own previous one, which it may do at once), and on_joined tells the
// owner it may run work again.
//
// Time comes in (Step(now), CheckFence(now)) so tests drive it with a fake
// clock; the threads read the options' clock.
//
// Threading: Step from one thread at a time (the heartbeat thread, or a
// test); CheckFence, view, may_run and epoch from any thread. Callbacks run
// on the thread that detected the change, with no lock of this object held.
#ifndef TESSERA_CLUSTER_MEMBERSHIP_H_
#define TESSERA_CLUSTER_MEMBERSHIP_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <limits>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "cluster/epoch_source.h"
#include "cluster/machine_store.h"
#include "common/clock.h"
#include "common/thread_annotations.h"

namespace tessera::cluster {

struct MembershipOptions {
  MachineInfo self;
  int64_t heartbeat_every_us = 2'000'000;
  int64_t fence_after_us = 5'000'000;
  int64_t fence_check_every_us = 100'000;  // the fence thread's period
  const Clock* clock = nullptr;            // null: RealClock
  // A new epoch (never 0); null: 63 random bits from std::random_device.
  std::function<uint64_t()> new_epoch;
  // The machine joined under `epoch` (at start, and again after a fence):
  // its work may run. On the heartbeat thread; keep it short (a long call
  // delays the next heartbeat toward the fence).
  std::function<void(uint64_t epoch)> on_joined;
  // The machine must stop its work now: `why` says what happened. On the
  // fence thread (or the heartbeat thread for a lapsed answer); must do no
  // I/O and not block.
  std::function<void(std::string_view why)> on_fenced;
  // One readable line per join, wait, lapse, fence and failed call.
  std::function<void(std::string_view line)> log;
};

class Membership final : public EpochSource {
 public:
  Membership(MachineStore* store, MembershipOptions options);
  // Stop(/*leave=*/false).
  ~Membership();
  Membership(const Membership&) = delete;
  Membership& operator=(const Membership&) = delete;

  // Starts the heartbeat and fence threads.
  void Start();
  // Stops both threads (waiting for a store call in progress); with
  // `leave`, then marks this epoch as left in the store (best effort, its
  // error logged). Idempotent.
  void Stop(bool leave);

  // One join or heartbeat if one is due at `now_us` (a monotonic time of
  // the options' clock); returns when the next is due.
  int64_t Step(int64_t now_us);
  // Fences the machine if it is a member and the deadline has passed.
  // Returns whether it is fenced.
  bool CheckFence(int64_t now_us);

  struct View {
    std::string id;
    uint64_t epoch = 0;  // the current (or last) epoch; 0 before any join
    bool member = false;
    bool fenced = false;
    int64_t fence_deadline_us = 0;  // meaningful while a member
    uint64_t joins = 0;
    uint64_t heartbeats = 0;  // landed
    uint64_t heartbeat_failures = 0;
    uint64_t fences = 0;
    std::string last_error;  // the last failed call, "" if none since
  };
  View view() const;
  // A member and not fenced: its work may run. Any thread, no lock.
  bool may_run() const { return may_run_.load(std::memory_order_acquire); }

  // EpochSource: the epoch while a member and not fenced, else 0.
  std::string_view machine_id() const override { return options_.self.id; }
  uint64_t current_epoch() const override {
    return held_epoch_.load(std::memory_order_acquire);
  }

 private:
  void Join(int64_t now_us);
  void Beat(int64_t now_us);
  // Marks the machine fenced (once per lapse) and calls on_fenced.
  void Fence(std::string why);
  void Log(const std::string& line) const;
  void HeartbeatLoop();
  void FenceLoop();

  MachineStore* const store_;
  const MembershipOptions options_;
  const Clock* const clock_;

  mutable std::mutex mu_;
  View view_ GUARDED_BY(mu_);
  int64_t next_due_us_ GUARDED_BY(mu_) = std::numeric_limits<int64_t>::min();
  int consecutive_failures_ GUARDED_BY(mu_) = 0;
  std::atomic<bool> may_run_{false};
  std::atomic<uint64_t> held_epoch_{0};

  std::mutex thread_mu_;
  std::condition_variable wake_;
  bool stopping_ GUARDED_BY(thread_mu_) = false;
  bool started_ = false;
  std::thread heartbeat_thread_;
  std::thread fence_thread_;
};

// "host:pid" for this process (the default machine id).
std::string DefaultMachineId();

}  // namespace tessera::cluster

#endif  // TESSERA_CLUSTER_MEMBERSHIP_H_
