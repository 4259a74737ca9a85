// WorkerPool: worker threads that run tasks on absolute deadlines. Any host
// schedules its work here: a shard's ticks now, a compute function's trigger
// or a realm's writer later.
//
//   Add(task) --> runs on its worker's next pass --> Run(now) returns the
//   next deadline --> runs again at or after it (or at once when poked)
//   ... --> Run returns nullopt, or Remove(task): forgotten.
//
// Each task belongs to one worker (the least loaded when it was added) for
// its whole life, and Run is never called concurrently with itself, so a
// task's state is touched by one thread at a time and needs no lock of its
// own for the pool's sake. Other threads talk to a task through their own
// locks and make it run at once with Poke.
//
// Time: deadlines are on `clock`'s timeline. A worker sleeps until its
// earliest deadline but at most max_wait_us (so it also follows a clock that
// is not real time), or until a new task or a poke wakes it. With threads = 0
// no thread runs and RunPass(now_us) does a worker's pass on the calling
// thread: tests drive it with a FakeClock and never sleep.
//
// Shutdown stops the threads and returns; tasks still registered are left
// as they are (never run again) for their owners to finish.
//
// Lock order: a caller's locks, then the pool's mu_, then a worker's mu. No
// pool lock is held while a task runs, so Run may call Poke, Add or Remove.
#ifndef TESSERA_GUEST_WORKER_POOL_H_
#define TESSERA_GUEST_WORKER_POOL_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "common/thread_annotations.h"

namespace tessera::guest {

struct WorkerPoolOptions {
  // Worker threads: -1 = one per core, 0 = none (RunPass drives).
  int threads = -1;
  const Clock* clock = nullptr;  // null: RealClock; not owned
  // Longest a worker sleeps without a due deadline.
  int64_t max_wait_us = 100'000;
};

class WorkerPool {
 private:
  struct Worker;

 public:
  using Options = WorkerPoolOptions;

  // Something run on deadlines. Derive from it; the pool shares ownership
  // while the task is registered.
  class Task {
   public:
    virtual ~Task() = default;
    // Does the work due at `now_us` (the pass's time; it may be earlier
    // than the deadline when poked or just added). Returns the next
    // deadline, or nullopt when the task is finished: the pool forgets it
    // and never runs it again. On the task's worker thread.
    virtual std::optional<int64_t> Run(int64_t now_us) = 0;

   private:
    friend class WorkerPool;
    // Set once by Add; read by any thread.
    std::atomic<Worker*> worker_{nullptr};
    // Touched by the worker only: events of another generation are stale.
    uint64_t gen_ = 0;
    // Under worker_->mu.
    bool registered_ = false;
    bool poke_pending_ = false;
  };

  explicit WorkerPool(Options options = {});
  ~WorkerPool();  // Shutdown(), then drops the pool's task references.
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Registers `task` on the least-loaded worker (ties: the lowest index);
  // it runs on that worker's next pass. Errors: kInvalidArgument (null),
  // kFailedPrecondition (added before, or after Shutdown). Any thread.
  Status Add(std::shared_ptr<Task> task) LOCKS_EXCLUDED(mu_);

  // Makes the task run on its worker's next pass even if not due, waking
  // the worker. Several pokes before that pass run it once. A no-op for a
  // task not added yet (it runs on its first pass anyway) or no longer
  // registered. Any thread.
  void Poke(const std::shared_ptr<Task>& task);

  // Unregisters the task: once Remove returns, Run is not running (unless
  // Remove was called from inside it) and is never called again. The
  // pool's references go at the worker's next pass. Any thread; a no-op
  // for a task not registered. From inside a Run, removing a task of another
  // worker waits for it: two tasks removing each other would deadlock.
  void Remove(Task& task);

  // With threads = 0 (else a no-op): one pass at `now_us` on the calling
  // thread: runs the tasks just added or poked, then every task whose
  // deadline is <= now_us. A task runs at most once per pass: a deadline it
  // returns that is already due is taken by the next pass. Returns the
  // earliest remaining deadline (now_us + max_wait_us if none). One thread
  // at a time; nothing runs after Shutdown.
  int64_t RunPass(int64_t now_us);

  // Stops and joins the threads. Idempotent; later Adds fail.
  void Shutdown() LOCKS_EXCLUDED(mu_);

  size_t thread_count() const { return threads_; }
  const Clock* clock() const { return clock_; }
  // Registered tasks, in all / per worker (for placement and tests).
  size_t task_count() const;
  std::vector<size_t> loads() const;
  // The index of the worker a registered task runs on; -1 if it is not
  // registered.
  int WorkerOf(const Task& task) const;

 private:
  int64_t Pass(Worker& worker, int64_t now_us);
  // Runs one task (if still registered) and schedules its next deadline.
  void RunOne(Worker& worker, const std::shared_ptr<Task>& task,
              int64_t now_us);
  // Drops the events of unregistered tasks (after Remove).
  void Purge(Worker& worker);
  void Loop(Worker* worker);

  const Options options_;
  const Clock* const clock_;
  const size_t threads_;
  // Never resized after construction; manual mode has one (thread-less).
  std::vector<std::unique_ptr<Worker>> workers_;
  std::atomic<bool> stopping_{false};

  std::mutex mu_;  // placement and shutdown
  bool shut_down_ GUARDED_BY(mu_) = false;
};

}  // namespace tessera::guest

#endif  // TESSERA_GUEST_WORKER_POOL_H_
