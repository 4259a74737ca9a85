#include "guest/worker_pool.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <queue>
#include <thread>
#include <utility>

namespace tessera::guest {
namespace {

size_t ResolveThreads(int requested) {
  if (requested >= 0) return static_cast<size_t>(requested);
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : n;
}

}  // namespace

struct WorkerPool::Worker {
  struct Event {
    int64_t at_us;
    uint64_t gen;
    std::shared_ptr<Task> task;
    bool operator>(const Event& o) const { return at_us > o.at_us; }
  };

  explicit Worker(int index_in) : index(index_in) {}

  const int index;

  // Shared with other threads.
  std::mutex mu;
  std::condition_variable cv;       // wakes the worker
  std::condition_variable done_cv;  // a run ended (for Remove)
  // Added or poked since the last pass, in order.
  std::vector<std::shared_ptr<Task>> ready GUARDED_BY(mu);
  bool wake GUARDED_BY(mu) = false;
  bool purge GUARDED_BY(mu) = false;  // a task was removed
  const Task* running GUARDED_BY(mu) = nullptr;
  std::thread::id running_thread GUARDED_BY(mu);
  int removers GUARDED_BY(mu) = 0;  // Remove calls waiting on done_cv
  // Registered tasks; written under mu, read without it for placement.
  std::atomic<size_t> load{0};

  // Worker-thread only.
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events;
  std::vector<Event> rescheduled;  // during a pass
  std::thread thread;
};

WorkerPool::WorkerPool(Options options)
    : options_(options),
      clock_(options_.clock ? options_.clock : RealClock::Get()),
      threads_(ResolveThreads(options_.threads)) {
  for (size_t i = 0; i < std::max<size_t>(threads_, 1); ++i) {
    workers_.push_back(std::make_unique<Worker>(static_cast<int>(i)));
  }
  for (size_t i = 0; i < threads_; ++i) {
    Worker* w = workers_[i].get();
    w->thread = std::thread([this, w] { Loop(w); });
  }
}

WorkerPool::~WorkerPool() { Shutdown(); }

Status WorkerPool::Add(std::shared_ptr<Task> task) {
  if (task == nullptr) return InvalidArgument("a task must not be null");
  std::lock_guard<std::mutex> lock(mu_);
  if (shut_down_) {
    return Status(StatusCode::kFailedPrecondition,
                  "the worker pool has shut down");
  }
  if (task->worker_.load(std::memory_order_acquire) != nullptr) {
    return Status(StatusCode::kFailedPrecondition,
                  "the task was added to a worker pool before");
  }
  Worker* target = workers_.front().get();
  for (const auto& w : workers_) {
    if (w->load.load() < target->load.load()) target = w.get();
  }
  task->worker_.store(target, std::memory_order_release);
  {
    std::lock_guard<std::mutex> worker_lock(target->mu);
    target->load.fetch_add(1);
    task->registered_ = true;
    task->poke_pending_ = true;
    target->ready.push_back(std::move(task));
    target->wake = true;
  }
  target->cv.notify_one();
  return Status::Ok();
}

void WorkerPool::Poke(const std::shared_ptr<Task>& task) {
  Worker* w = task->worker_.load(std::memory_order_acquire);
  if (w == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(w->mu);
    if (!task->registered_ || task->poke_pending_) return;
    task->poke_pending_ = true;
    w->ready.push_back(task);
    w->wake = true;
  }
  w->cv.notify_one();
}

void WorkerPool::Remove(Task& task) {
  Worker* w = task.worker_.load(std::memory_order_acquire);
  if (w == nullptr) return;
  std::unique_lock<std::mutex> lock(w->mu);
  if (task.registered_) {
    task.registered_ = false;
    w->load.fetch_sub(1);
    w->purge = true;
    w->wake = true;
    w->cv.notify_one();
  }
  if (w->running_thread == std::this_thread::get_id()) return;  // from Run
  ++w->removers;
  w->done_cv.wait(lock, [&] { return w->running != &task; });
  --w->removers;
}

int64_t WorkerPool::RunPass(int64_t now_us) {
  if (threads_ != 0 || stopping_.load(std::memory_order_acquire)) {
    return now_us + options_.max_wait_us;  // the threads own the workers
  }
  return Pass(*workers_.front(), now_us);
}

int64_t WorkerPool::Pass(Worker& w, int64_t now_us) {
  std::vector<std::shared_ptr<Task>> ready;
  bool purge = false;
  {
    std::lock_guard<std::mutex> lock(w.mu);
    ready.swap(w.ready);
    for (const auto& task : ready) task->poke_pending_ = false;
    w.wake = false;
    purge = std::exchange(w.purge, false);
  }
  if (purge) Purge(w);
  for (const auto& task : ready) RunOne(w, task, now_us);
  while (!w.events.empty() && w.events.top().at_us <= now_us &&
         !stopping_.load(std::memory_order_acquire)) {
    Worker::Event event = w.events.top();
    w.events.pop();
    if (event.gen != event.task->gen_) continue;  // stale
    RunOne(w, event.task, now_us);
  }
  // Deadlines returned in this pass count from the next one, so a task due
  // again at once cannot starve the others (nor the tasks just added).
  for (auto& event : w.rescheduled) w.events.push(std::move(event));
  w.rescheduled.clear();
  // Stale events on top would wake the worker for nothing.
  while (!w.events.empty() && w.events.top().gen != w.events.top().task->gen_) {
    w.events.pop();
  }
  return w.events.empty() ? now_us + options_.max_wait_us
                          : w.events.top().at_us;
}

void WorkerPool::RunOne(Worker& w, const std::shared_ptr<Task>& task,
                        int64_t now_us) {
  {
    std::lock_guard<std::mutex> lock(w.mu);
    if (!task->registered_) return;
    w.running = task.get();
    w.running_thread = std::this_thread::get_id();
  }
  const std::optional<int64_t> next = task->Run(now_us);
  bool registered = false;
  {
    std::lock_guard<std::mutex> lock(w.mu);
    w.running = nullptr;
    w.running_thread = std::thread::id();
    if (!next.has_value() && task->registered_) {
      task->registered_ = false;
      w.load.fetch_sub(1);
    }
    registered = task->registered_;
    if (w.removers > 0) w.done_cv.notify_all();
  }
  // A new generation makes the task's older events (before a poke) stale.
  ++task->gen_;
  if (registered)
    w.rescheduled.push_back(Worker::Event{*next, task->gen_, task});
}

void WorkerPool::Purge(Worker& w) {
  std::vector<Worker::Event> kept;
  kept.reserve(w.events.size());
  {
    std::lock_guard<std::mutex> lock(w.mu);
    while (!w.events.empty()) {
      const Worker::Event& event = w.events.top();
      if (event.task->registered_ && event.gen == event.task->gen_) {
        kept.push_back(event);
      }
      w.events.pop();
    }
  }
  for (auto& event : kept) w.events.push(std::move(event));
}

void WorkerPool::Loop(Worker* w) {
  while (!stopping_.load(std::memory_order_acquire)) {
    const int64_t next = Pass(*w, clock_->NowUs());
    std::unique_lock<std::mutex> lock(w->mu);
    const int64_t wait_us =
        std::clamp<int64_t>(next - clock_->NowUs(), 0, options_.max_wait_us);
    if (wait_us > 0) {
      w->cv.wait_for(lock, std::chrono::microseconds(wait_us), [&] {
        return w->wake || stopping_.load(std::memory_order_acquire);
      });
    }
  }
}

void WorkerPool::Shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (shut_down_) return;
    shut_down_ = true;
  }
  stopping_.store(true, std::memory_order_release);
  for (const auto& w : workers_) {
    {
      std::lock_guard<std::mutex> lock(w->mu);
      w->wake = true;
    }
    w->cv.notify_all();
  }
  for (const auto& w : workers_) {
    if (w->thread.joinable()) w->thread.join();
  }
}

size_t WorkerPool::task_count() const {
  size_t n = 0;
  for (const auto& w : workers_) n += w->load.load();
  return n;
}

std::vector<size_t> WorkerPool::loads() const {
  std::vector<size_t> loads;
  for (const auto& w : workers_) loads.push_back(w->load.load());
  return loads;
}

int WorkerPool::WorkerOf(const Task& task) const {
  Worker* w = task.worker_.load(std::memory_order_acquire);
  if (w == nullptr) return -1;
  std::lock_guard<std::mutex> lock(w->mu);
  return task.registered_ ? w->index : -1;
}

}  // namespace tessera::guest
