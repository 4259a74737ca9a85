#include "server/stop_functions.h"

#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>
#include <optional>
#include <utility>

#include "common/deadline_loop.h"
#include "common/text.h"

namespace tessera::server {

namespace {

constexpr size_t kMaxLogBytes = 512;

bool IsTransient(StatusCode code) {
  return code == StatusCode::kUnavailable || code == StatusCode::kIo;
}

}  // namespace

StopFunctions::StopFunctions(const shard::ShardHost& host,
                             const shard::KindRegistry& kinds,
                             StopFunctionsOptions options)
    : host_(host),
      kinds_(kinds),
      options_(std::move(options)),
      clock_(options_.clock != nullptr ? options_.clock : RealClock::Get()) {}

StopFunctions::~StopFunctions() { Stop(); }

void StopFunctions::Log(const std::string& line) const {
  if (options_.log) {
    options_.log(line);
  } else {
    std::cerr << line + "\n";
  }
}

void StopFunctions::OnStopped(std::string_view shard_id,
                              shard::StopReason reason,
                              std::string_view message) {
  if (!shard::StoppedForGood(reason)) return;
  // The stopped shard stays listed (for its retention) with its kind.
  std::optional<shard::ShardInfo> info = host_.Get(shard_id);
  if (!info) return;
  std::shared_ptr<const shard::KindEntry> kind = kinds_.Find(info->kind);
  if (kind == nullptr) return;
  const std::string& on_stop = kind->config.on_stop;
  if (on_stop.empty() || IsStopUrl(on_stop)) return;
  Pending p;
  p.function = on_stop;
  p.shard_id = std::string(shard_id);
  p.kind = info->kind;
  p.params_json = StopNoticeBody(shard_id, info->kind, reason, message);
  p.due_us = clock_->NowUs();
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_) return;
  queue_.push_back(std::move(p));
  cv_.notify_one();
}

bool StopFunctions::RunOne(Pending& p) {
  ++p.tries;
  Status failed;
  if (engine_ == nullptr) {
    failed = Status(StatusCode::kUnavailable, "no compute engine");
  } else {
    Result<compute::FunctionRef> ref = engine_->ResolveFunction(p.function);
    if (!ref.ok()) {
      failed = ref.status();
    } else {
      compute::InvokeRequest request;
      request.module = ref->module;
      request.export_name = ref->export_name;
      request.params_json = p.params_json;
      request.management = true;
      request.caller_shard_id = p.shard_id;
      Result<compute::InvokeResult> ran = engine_->Invoke(request);
      if (ran.ok()) {
        std::lock_guard<std::mutex> lock(mu_);
        ++counts_.ok;
        return true;
      }
      failed = ran.status();
    }
  }
  if (IsTransient(failed.code()) && p.tries < options_.max_tries) {
    p.due_us =
        clock_->NowUs() + (options_.first_backoff_ms << (p.tries - 1)) * 1000;
    std::lock_guard<std::mutex> lock(mu_);
    ++counts_.retried;
    return false;
  }
  Log("shard " + EscapeForLog(p.shard_id, kMaxLogBytes) + " (" +
      EscapeForLog(p.kind, kMaxLogBytes) + "): onStop " +
      EscapeForLog(p.function, kMaxLogBytes) + " failed" +
      (p.tries > 1 ? " after " + std::to_string(p.tries) + " tries" : "") +
      ": " + EscapeForLog(failed.message(), kMaxLogBytes));
  std::lock_guard<std::mutex> lock(mu_);
  ++counts_.failed;
  return true;
}

size_t StopFunctions::RunDue() {
  const int64_t now = clock_->NowUs();
  std::deque<Pending> due;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = queue_.begin(); it != queue_.end();) {
      if (it->due_us <= now) {
        due.push_back(std::move(*it));
        it = queue_.erase(it);
      } else {
        ++it;
      }
    }
  }
  const size_t ran = due.size();
  for (Pending& p : due) {
    if (RunOne(p)) continue;
    std::lock_guard<std::mutex> lock(mu_);
    if (!stopping_) queue_.push_back(std::move(p));
  }
  return ran;
}

size_t StopFunctions::pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.size();
}

StopFunctions::Counts StopFunctions::counts() const {
  std::lock_guard<std::mutex> lock(mu_);
  return counts_;
}

void StopFunctions::Start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] { Loop(); });
}

void StopFunctions::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  RunDeadlineLoop(
      lock, cv_, *clock_, stopping_,
      [this] {
        int64_t next = INT64_MAX;
        for (const Pending& p : queue_) next = std::min(next, p.due_us);
        return next;
      },
      [this] { RunDue(); });
}

void StopFunctions::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    cv_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
  std::deque<Pending> left;
  {
    std::lock_guard<std::mutex> lock(mu_);
    left.swap(queue_);
  }
  for (const Pending& p : left) {
    Log("shard " + EscapeForLog(p.shard_id, kMaxLogBytes) + " (" +
        EscapeForLog(p.kind, kMaxLogBytes) + "): onStop " +
        EscapeForLog(p.function, kMaxLogBytes) +
        " not called: the server is shutting down");
  }
}

}  // namespace tessera::server
