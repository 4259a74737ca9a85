#include "cluster/membership.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <utility>

namespace tessera::cluster {
namespace {

uint64_t RandomEpoch() {
  std::random_device device;
  uint64_t epoch = 0;
  while (epoch == 0) {
    epoch = (static_cast<uint64_t>(device()) << 32 | device()) >> 1;
  }
  return epoch;
}

}  // namespace

std::string DefaultMachineId() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0 || host[0] == '\0') {
    std::snprintf(host, sizeof host, "localhost");
  }
  return std::string(host) + ":" + std::to_string(getpid());
}

Membership::Membership(MachineStore* store, MembershipOptions options)
    : store_(store),
      options_(std::move(options)),
      clock_(options_.clock != nullptr ? options_.clock : RealClock::Get()) {
  view_.id = options_.self.id;
}

Membership::~Membership() { Stop(/*leave=*/false); }

void Membership::Log(const std::string& line) const {
  if (options_.log) options_.log(line);
}

int64_t Membership::Step(int64_t now_us) {
  // The heartbeat thread sees a lapse too (the process was stopped past
  // the deadline, and this thread woke first): fenced before any heartbeat
  // could move the deadline on.
  CheckFence(now_us);
  bool member = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (now_us < next_due_us_) return next_due_us_;
    member = view_.member && !view_.fenced;
  }
  if (member) {
    Beat(now_us);
  } else {
    Join(now_us);
  }
  std::lock_guard<std::mutex> lock(mu_);
  return next_due_us_;
}

void Membership::Join(int64_t now_us) {
  const uint64_t epoch =
      options_.new_epoch ? options_.new_epoch() : RandomEpoch();
  uint64_t replaces = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    replaces = view_.epoch;
  }
  Result<JoinAnswer> answer = store_->Join(options_.self, epoch, replaces);
  if (!answer.ok()) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      view_.last_error = answer.status().ToString();
      next_due_us_ = now_us + options_.heartbeat_every_us;
    }
    Log("cluster: machine " + options_.self.id +
        " could not join: " + answer.status().ToString());
    return;
  }
  if (!answer->joined) {
    const int64_t wait_us = std::clamp<int64_t>(answer->wait_ms * 1000, 100'000,
                                                options_.heartbeat_every_us);
    {
      std::lock_guard<std::mutex> lock(mu_);
      next_due_us_ = now_us + wait_us;
    }
    Log("cluster: machine id " + options_.self.id +
        " is held by a live process (epoch " + std::to_string(answer->held_by) +
        "); waiting up to " + std::to_string(answer->wait_ms) +
        " ms for it to leave or fall silent");
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    view_.epoch = epoch;
    view_.member = true;
    view_.fenced = false;
    view_.fence_deadline_us = now_us + options_.fence_after_us;
    view_.last_error.clear();
    ++view_.joins;
    next_due_us_ = now_us + options_.heartbeat_every_us;
    held_epoch_.store(epoch, std::memory_order_release);
    may_run_.store(true, std::memory_order_release);
  }
  Log("cluster: machine " + options_.self.id + " joined with epoch " +
      std::to_string(epoch));
  if (options_.on_joined) options_.on_joined(epoch);
}

void Membership::Beat(int64_t now_us) {
  uint64_t epoch = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    epoch = view_.epoch;
  }
  Result<bool> landed = store_->Heartbeat(options_.self.id, epoch);
  if (landed.ok() && !*landed) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      next_due_us_ = now_us;  // join again at once
    }
    Fence("the database says epoch " + std::to_string(epoch) +
          " has lapsed (silent too long, or the id was taken over)");
    return;
  }
  std::string failure;
  {
    std::lock_guard<std::mutex> lock(mu_);
    next_due_us_ = now_us + options_.heartbeat_every_us;
    if (!landed.ok()) {
      ++view_.heartbeat_failures;
      view_.last_error = landed.status().ToString();
      // Logged once per run of failures, not every 2 s.
      if (++consecutive_failures_ == 1) failure = view_.last_error;
    } else if (!view_.fenced && view_.epoch == epoch) {
      // A heartbeat that comes back after the fence fired does not undo
      // it: the work has stopped and comes back only under a new epoch.
      ++view_.heartbeats;
      consecutive_failures_ = 0;
      view_.last_error.clear();
      view_.fence_deadline_us =
          std::max(view_.fence_deadline_us, now_us + options_.fence_after_us);
    }
  }
  if (!failure.empty()) {
    Log("cluster: heartbeat of machine " + options_.self.id +
        " failed: " + failure);
  }
}

bool Membership::CheckFence(int64_t now_us) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (view_.fenced) return true;
    if (!view_.member || now_us <= view_.fence_deadline_us) return false;
  }
  Fence("no heartbeat has landed for " +
        std::to_string(options_.fence_after_us / 1000) + " ms");
  return true;
}

void Membership::Fence(std::string why) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (view_.fenced || !view_.member) return;
    view_.fenced = true;
    ++view_.fences;
    held_epoch_.store(0, std::memory_order_release);
    may_run_.store(false, std::memory_order_release);
  }
  Log("cluster: machine " + options_.self.id + " fenced itself: " + why);
  if (options_.on_fenced) options_.on_fenced(why);
}

Membership::View Membership::view() const {
  std::lock_guard<std::mutex> lock(mu_);
  return view_;
}

void Membership::Start() {
  if (started_) return;
  started_ = true;
  heartbeat_thread_ = std::thread([this] { HeartbeatLoop(); });
  fence_thread_ = std::thread([this] { FenceLoop(); });
}

void Membership::HeartbeatLoop() {
  std::unique_lock<std::mutex> lock(thread_mu_);
  while (!stopping_) {
    lock.unlock();
    const int64_t next = Step(clock_->NowUs());
    lock.lock();
    const int64_t wait_us = std::max<int64_t>(0, next - clock_->NowUs());
    wake_.wait_for(lock, std::chrono::microseconds(wait_us),
                   [this] { return stopping_; });
  }
}

void Membership::FenceLoop() {
  std::unique_lock<std::mutex> lock(thread_mu_);
  while (!stopping_) {
    lock.unlock();
    CheckFence(clock_->NowUs());
    lock.lock();
    wake_.wait_for(lock,
                   std::chrono::microseconds(options_.fence_check_every_us),
                   [this] { return stopping_; });
  }
}

void Membership::Stop(bool leave) {
  {
    std::lock_guard<std::mutex> lock(thread_mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  wake_.notify_all();
  if (heartbeat_thread_.joinable()) heartbeat_thread_.join();
  if (fence_thread_.joinable()) fence_thread_.join();
  View view = this->view();
  held_epoch_.store(0, std::memory_order_release);
  may_run_.store(false, std::memory_order_release);
  if (!leave || !view.member) return;
  Status left = store_->Leave(options_.self.id, view.epoch);
  if (!left.ok()) {
    Log("cluster: machine " + options_.self.id +
        " could not record that it left: " + left.ToString());
  }
}

}  // namespace tessera::cluster
