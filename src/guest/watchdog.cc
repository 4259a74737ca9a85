#include "guest/watchdog.h"

#include <algorithm>
#include <chrono>

#include "wasm/instance.h"

namespace tessera::guest {
namespace {

void InterruptInstance(void* arg) {
  static_cast<wasm::Instance*>(arg)->RequestInterrupt();
}

}  // namespace

Watchdog::Watchdog(const Clock* clock, int64_t poll_interval_us)
    : clock_(clock),
      poll_interval_us_(std::max<int64_t>(poll_interval_us, 1)) {}

Watchdog::~Watchdog() { Stop(); }

void Watchdog::Start() {
  if (thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = false;
  }
  thread_ = std::thread([this] { Run(); });
}

void Watchdog::Stop() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

Watchdog::Token Watchdog::Arm(wasm::Instance* instance, int64_t deadline_us) {
  return Arm(&InterruptInstance, instance, deadline_us);
}

Watchdog::Token Watchdog::Arm(FireFn fire, void* arg, int64_t deadline_us) {
  std::lock_guard<std::mutex> lock(mu_);
  Token token = next_token_++;
  entries_.push_back(Entry{token, deadline_us, fire, arg, false});
  if (idle_) cv_.notify_one();  // it sleeps until something is armed
  return token;
}

bool Watchdog::Disarm(Token token) {
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (entries_[i].token != token) continue;
    bool fired = entries_[i].fired;
    entries_[i] = entries_.back();
    entries_.pop_back();
    return fired;
  }
  return false;
}

int Watchdog::Poll(int64_t now_us) {
  std::lock_guard<std::mutex> lock(mu_);
  int fired = 0;
  for (Entry& e : entries_) {
    if (e.fired || now_us < e.deadline_us) continue;
    e.fired = true;
    e.fire(e.arg);
    ++fired;
  }
  return fired;
}

size_t Watchdog::armed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

bool Watchdog::sleeping() const {
  std::lock_guard<std::mutex> lock(mu_);
  return idle_;
}

void Watchdog::Run() {
  // Polls while deadlines are armed; after kIdlePolls polls in a row with
  // none, sleeps until Arm wakes it, so an idle server's watchdog costs
  // nothing (and a busy one's Arm rarely has to wake it).
  constexpr int kIdlePolls = 50;
  int empty_polls = 0;
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    if (entries_.empty() && ++empty_polls >= kIdlePolls) {
      idle_ = true;
      cv_.wait(lock, [this] { return stopping_ || !entries_.empty(); });
      idle_ = false;
      empty_polls = 0;
      if (stopping_) break;
    }
    if (!entries_.empty()) empty_polls = 0;
    cv_.wait_for(lock, std::chrono::microseconds(poll_interval_us_));
    if (stopping_) break;
    lock.unlock();
    Poll(clock_->NowUs());
    lock.lock();
  }
}

}  // namespace tessera::guest
