// WorkerPool: manual-mode tests drive passes with a FakeClock and never
// sleep; threaded tests wait for conditions (generous timeouts, no upper
// bound on wall time) and never sleep for synchronisation.
#include "guest/worker_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "common/clock.h"

namespace tessera::guest {
namespace {

constexpr int64_t kHour = 3'600'000'000;

// Runs `next(now, runs)` and records what it saw. Thread-safe to inspect.
class FnTask : public WorkerPool::Task {
 public:
  using NextFn = std::function<std::optional<int64_t>(int64_t now, int runs)>;
  explicit FnTask(NextFn next) : next_(std::move(next)) {}

  std::optional<int64_t> Run(int64_t now_us) override {
    if (in_flight_.fetch_add(1) != 0) overlapped_.store(true);
    {
      std::lock_guard<std::mutex> lock(mu_);
      times_.push_back(now_us);
      threads_.insert(std::this_thread::get_id());
    }
    const int runs = runs_.load() + 1;
    std::optional<int64_t> next = next_(now_us, runs);
    in_flight_.fetch_sub(1);
    runs_.store(runs);  // last: a waiter seeing `runs` sees the rest
    return next;
  }

  int runs() const { return runs_.load(); }
  // Whether two runs ever overlapped.
  bool overlapped() const { return overlapped_.load(); }
  std::vector<int64_t> times() const {
    std::lock_guard<std::mutex> lock(mu_);
    return times_;
  }
  std::set<std::thread::id> threads() const {
    std::lock_guard<std::mutex> lock(mu_);
    return threads_;
  }

 private:
  const NextFn next_;
  std::atomic<int> runs_{0};
  std::atomic<int> in_flight_{0};
  std::atomic<bool> overlapped_{false};
  mutable std::mutex mu_;
  std::vector<int64_t> times_;
  std::set<std::thread::id> threads_;
};

std::shared_ptr<FnTask> Every(int64_t period_us, int max_runs = 1 << 30) {
  return std::make_shared<FnTask>(
      [=](int64_t now, int runs) -> std::optional<int64_t> {
        if (runs >= max_runs) return std::nullopt;
        return now + period_us;
      });
}

// Waits (polling, generous timeout) until `done()`; returns whether it was.
bool WaitFor(const std::function<bool()>& done) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

WorkerPool::Options Manual(const Clock* clock) {
  WorkerPool::Options options;
  options.threads = 0;
  options.clock = clock;
  return options;
}

TEST(WorkerPoolTest, ManualTasksRunAtTheirDeadlines) {
  FakeClock clock(1000);
  WorkerPool pool(Manual(&clock));
  EXPECT_EQ(pool.thread_count(), 0u);
  // Deadlines 1100, 1250, then finished.
  const std::vector<int64_t> deadlines = {1100, 1250};
  auto task = std::make_shared<FnTask>(
      [&](int64_t, int runs) -> std::optional<int64_t> {
        if (runs > static_cast<int>(deadlines.size())) return std::nullopt;
        return deadlines[static_cast<size_t>(runs) - 1];
      });
  ASSERT_TRUE(pool.Add(task).ok());
  EXPECT_EQ(task->runs(), 0);  // nothing runs until a pass

  EXPECT_EQ(pool.RunPass(clock.NowUs()), 1100);  // new: runs at once
  EXPECT_EQ(task->runs(), 1);
  clock.Set(1099);
  EXPECT_EQ(pool.RunPass(clock.NowUs()), 1100);
  EXPECT_EQ(task->runs(), 1);
  clock.Set(1100);
  EXPECT_EQ(pool.RunPass(clock.NowUs()), 1250);
  EXPECT_EQ(task->runs(), 2);
  clock.Set(1300);  // late: runs once, with the pass's time
  pool.RunPass(clock.NowUs());
  EXPECT_EQ(task->runs(), 3);
  EXPECT_EQ(task->times(), (std::vector<int64_t>{1000, 1100, 1300}));
  EXPECT_EQ(pool.task_count(), 0u);
}

TEST(WorkerPoolTest, ManualTasksRunInDeadlineOrder) {
  FakeClock clock;
  WorkerPool pool(Manual(&clock));
  std::vector<int> order;
  std::vector<std::shared_ptr<FnTask>> tasks;
  for (int i = 0; i < 3; ++i) {
    const int64_t at = 300 - 100 * i;  // 300, 200, 100
    tasks.push_back(std::make_shared<FnTask>(
        [&order, i, at](int64_t, int runs) -> std::optional<int64_t> {
          if (runs == 1) return at;
          order.push_back(i);
          return std::nullopt;
        }));
    ASSERT_TRUE(pool.Add(tasks.back()).ok());
  }
  EXPECT_EQ(pool.RunPass(0), 100);
  EXPECT_EQ(pool.RunPass(1000), 1000 + 100'000);  // nothing left: max wait
  EXPECT_EQ(order, (std::vector<int>{2, 1, 0}));
}

TEST(WorkerPoolTest, ATaskDueAgainAtOnceRunsOncePerPass) {
  FakeClock clock;
  WorkerPool pool(Manual(&clock));
  auto busy = Every(0);
  ASSERT_TRUE(pool.Add(busy).ok());
  EXPECT_EQ(pool.RunPass(0), 0);  // due again, in the next pass
  EXPECT_EQ(busy->runs(), 1);
  auto added = Every(0);
  ASSERT_TRUE(pool.Add(added).ok());
  EXPECT_EQ(pool.RunPass(0), 0);
  EXPECT_EQ(busy->runs(), 2);
  EXPECT_EQ(added->runs(), 1);
}

TEST(WorkerPoolTest, FinishedTaskIsForgotten) {
  FakeClock clock;
  WorkerPool pool(Manual(&clock));
  auto task = Every(10, /*max_runs=*/2);
  ASSERT_TRUE(pool.Add(task).ok());
  EXPECT_EQ(pool.task_count(), 1u);
  EXPECT_EQ(pool.WorkerOf(*task), 0);
  pool.RunPass(0);
  pool.RunPass(10);
  EXPECT_EQ(task->runs(), 2);
  EXPECT_EQ(pool.task_count(), 0u);
  EXPECT_EQ(pool.WorkerOf(*task), -1);
  EXPECT_EQ(task.use_count(), 1);  // the pool holds no reference
  pool.Poke(task);                 // no longer registered: ignored
  pool.RunPass(1000);
  EXPECT_EQ(task->runs(), 2);
  // A task is added once.
  EXPECT_EQ(pool.Add(task).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(pool.Add(nullptr).code(), StatusCode::kInvalidArgument);
}

TEST(WorkerPoolTest, PokeRunsATaskBeforeItsDeadlineOnce) {
  FakeClock clock;
  WorkerPool pool(Manual(&clock));
  auto task = Every(1000);
  pool.Poke(task);  // not added yet: nothing
  ASSERT_TRUE(pool.Add(task).ok());
  pool.RunPass(0);
  EXPECT_EQ(task->runs(), 1);
  pool.RunPass(500);
  EXPECT_EQ(task->runs(), 1);
  pool.Poke(task);
  pool.Poke(task);                     // before the pass: still one run
  EXPECT_EQ(pool.RunPass(500), 1500);  // the poke reschedules it
  EXPECT_EQ(task->runs(), 2);
  pool.RunPass(1000);  // the deadline before the poke is stale
  EXPECT_EQ(task->runs(), 2);
  pool.RunPass(1500);
  EXPECT_EQ(task->runs(), 3);
}

TEST(WorkerPoolTest, RemovedTaskNeverRunsAgain) {
  FakeClock clock;
  WorkerPool pool(Manual(&clock));
  auto removed = Every(100);
  auto kept = Every(100);
  ASSERT_TRUE(pool.Add(removed).ok());
  ASSERT_TRUE(pool.Add(kept).ok());
  pool.RunPass(0);
  pool.Poke(removed);
  pool.Remove(*removed);
  pool.Remove(*removed);  // twice: a no-op
  EXPECT_EQ(pool.task_count(), 1u);
  EXPECT_EQ(pool.WorkerOf(*removed), -1);
  pool.RunPass(100);
  pool.RunPass(200);
  EXPECT_EQ(removed->runs(), 1);
  EXPECT_EQ(kept->runs(), 3);
  EXPECT_EQ(removed.use_count(), 1);  // dropped at the pass after Remove
}

TEST(WorkerPoolTest, ATaskMayRemoveItselfFromRun) {
  FakeClock clock;
  WorkerPool pool(Manual(&clock));
  std::shared_ptr<FnTask> task;
  task = std::make_shared<FnTask>([&](int64_t now, int) {
    pool.Remove(*task);  // must not wait for itself
    return std::optional<int64_t>(now + 1);
  });
  ASSERT_TRUE(pool.Add(task).ok());
  pool.RunPass(0);
  pool.RunPass(10);
  EXPECT_EQ(task->runs(), 1);
  EXPECT_EQ(pool.task_count(), 0u);
}

TEST(WorkerPoolTest, NothingRunsAfterShutdown) {
  FakeClock clock;
  WorkerPool pool(Manual(&clock));
  auto task = Every(100);
  ASSERT_TRUE(pool.Add(task).ok());
  pool.RunPass(0);
  pool.Shutdown();
  pool.Shutdown();  // idempotent
  pool.Poke(task);
  pool.RunPass(1000);
  EXPECT_EQ(task->runs(), 1);
  EXPECT_EQ(pool.task_count(), 1u);  // left registered for its owner
  EXPECT_EQ(pool.Add(Every(1)).code(), StatusCode::kFailedPrecondition);
}

TEST(WorkerPoolTest, PlacesTasksOnTheLeastLoadedWorker) {
  WorkerPool::Options options;
  options.threads = 3;
  WorkerPool pool(options);
  ASSERT_EQ(pool.thread_count(), 3u);
  // Far deadlines: after their first run they stay put.
  std::vector<std::shared_ptr<FnTask>> tasks;
  for (int i = 0; i < 6; ++i) {
    tasks.push_back(Every(kHour));
    ASSERT_TRUE(pool.Add(tasks.back()).ok());
    EXPECT_EQ(pool.WorkerOf(*tasks.back()), i % 3) << i;
  }
  EXPECT_EQ(pool.loads(), (std::vector<size_t>{2, 2, 2}));
  pool.Remove(*tasks[4]);  // worker 1
  EXPECT_EQ(pool.loads(), (std::vector<size_t>{2, 1, 2}));
  auto next = Every(kHour);
  ASSERT_TRUE(pool.Add(next).ok());
  EXPECT_EQ(pool.WorkerOf(*next), 1);
  EXPECT_EQ(pool.task_count(), 6u);
  pool.Shutdown();
}

TEST(WorkerPoolTest, PokeWakesASleepingWorker) {
  FakeClock clock;  // never advances: only a poke can run the task again
  WorkerPool::Options options;
  options.threads = 1;
  options.clock = &clock;
  options.max_wait_us = kHour;  // without a wake the worker sleeps on
  WorkerPool pool(options);
  auto task = Every(kHour);
  ASSERT_TRUE(pool.Add(task).ok());  // adding wakes it too
  ASSERT_TRUE(WaitFor([&] { return task->runs() == 1; }));
  pool.Poke(task);
  ASSERT_TRUE(WaitFor([&] { return task->runs() == 2; }));
  pool.Shutdown();  // wakes it as well, and returns
  EXPECT_EQ(task->runs(), 2);
}

TEST(WorkerPoolTest, RemoveWaitsForARunningTask) {
  WorkerPool::Options options;
  options.threads = 1;
  WorkerPool pool(options);
  std::mutex mu;
  std::condition_variable cv;
  bool entered = false, release = false;
  std::atomic<bool> remove_called{false}, remove_returned{false};
  bool returned_during_run = true;
  auto task = std::make_shared<FnTask>([&](int64_t now, int) {
    std::unique_lock<std::mutex> lock(mu);
    entered = true;
    cv.notify_all();
    cv.wait(lock, [&] { return release; });
    returned_during_run = remove_returned.load();
    return std::optional<int64_t>(now);  // due again at once
  });
  ASSERT_TRUE(pool.Add(task).ok());
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return entered; });
  }
  std::thread remover([&] {
    remove_called = true;
    pool.Remove(*task);
    remove_returned = true;
  });
  ASSERT_TRUE(WaitFor([&] { return remove_called.load(); }));
  {
    std::lock_guard<std::mutex> lock(mu);
    release = true;
  }
  cv.notify_all();
  remover.join();
  EXPECT_FALSE(returned_during_run);
  EXPECT_EQ(task->runs(), 1);  // due at once, yet never run again
  pool.Shutdown();
  EXPECT_EQ(task->runs(), 1);
}

TEST(WorkerPoolTest, ShutdownLeavesRegisteredTasksToTheirOwner) {
  WorkerPool::Options options;
  options.threads = 2;
  WorkerPool pool(options);
  std::vector<std::shared_ptr<FnTask>> tasks;
  for (int i = 0; i < 8; ++i) {
    // Busy tasks (due again at once) and sleeping ones.
    tasks.push_back(Every(i % 2 == 0 ? 0 : kHour));
    ASSERT_TRUE(pool.Add(tasks.back()).ok());
  }
  ASSERT_TRUE(WaitFor([&] {
    for (const auto& t : tasks) {
      if (t->runs() < 1) return false;
    }
    return true;
  }));
  pool.Shutdown();
  std::vector<int> runs;
  for (const auto& t : tasks) runs.push_back(t->runs());
  for (const auto& t : tasks) pool.Poke(t);
  EXPECT_EQ(pool.task_count(), tasks.size());
  for (size_t i = 0; i < tasks.size(); ++i) {
    EXPECT_EQ(tasks[i]->runs(), runs[i]) << i;  // never run again
    EXPECT_GT(tasks[i].use_count(), 1);         // still the pool's too
    EXPECT_FALSE(tasks[i]->overlapped());
    // The owner may now finish it on its own thread.
    tasks[i]->Run(0);
  }
}

// Many tasks over few threads, poked from other threads meanwhile: each
// runs to the end on one thread, never concurrently with itself.
TEST(WorkerPoolTest, ManyTasksEachStayOnOneThread) {
  WorkerPool::Options options;
  options.threads = 4;
  WorkerPool pool(options);
  constexpr int kTasks = 400;
  constexpr int kRuns = 25;
  std::vector<std::shared_ptr<FnTask>> tasks;
  for (int i = 0; i < kTasks; ++i) {
    tasks.push_back(Every(i % 3 == 0 ? 0 : 200, kRuns));
    ASSERT_TRUE(pool.Add(tasks.back()).ok());
  }
  std::atomic<bool> stop{false};
  std::vector<std::thread> pokers;
  for (int p = 0; p < 2; ++p) {
    pokers.emplace_back([&, p] {
      for (size_t i = static_cast<size_t>(p); !stop.load();
           i = (i + 2) % tasks.size()) {
        pool.Poke(tasks[i]);
      }
    });
  }
  ASSERT_TRUE(WaitFor([&] { return pool.task_count() == 0; }));
  stop = true;
  for (auto& t : pokers) t.join();
  std::set<std::thread::id> all;
  for (const auto& t : tasks) {
    EXPECT_EQ(t->runs(), kRuns);
    EXPECT_FALSE(t->overlapped());
    ASSERT_EQ(t->threads().size(), 1u);
    all.insert(*t->threads().begin());
    EXPECT_NE(*t->threads().begin(), std::this_thread::get_id());
  }
  EXPECT_LE(all.size(), 4u);  // only the pool's threads
  EXPECT_EQ(pool.loads(), (std::vector<size_t>{0, 0, 0, 0}));
  pool.Shutdown();
}

}  // namespace
}  // namespace tessera::guest
