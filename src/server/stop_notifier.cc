#include "server/stop_notifier.h"

#include <algorithm>
#include <chrono>
#include <iostream>
#include <utility>

#include "net/client/http_client.h"

namespace tessera::server {

StopNotifier::StopNotifier(NotifierOptions options, Metrics* metrics)
    : options_(std::move(options)),
      clock_(options_.clock != nullptr ? *options_.clock : *RealClock::Get()) {
  if (metrics == nullptr) return;
  delivered_metric_ =
      metrics->GetCounter("tessera_onstop_delivered_total",
                          "onStop notifications answered with a 2xx.");
  failures_metric_ = metrics->GetCounter(
      "tessera_onstop_failed_attempts_total",
      "onStop attempts that failed and were retried later.");
  dropped_metric_ = metrics->GetCounter(
      "tessera_onstop_dropped_total",
      "onStop notifications dropped (queue full or shutting down).");
  pending_metric_ = metrics->GetGauge(
      "tessera_onstop_pending", "onStop notifications not yet delivered.");
}

StopNotifier::~StopNotifier() { Stop(); }

void StopNotifier::Log(const std::string& line) const {
  if (options_.log) {
    options_.log(line);
  } else {
    std::cerr << line << "\n";
  }
}

void StopNotifier::Start() {
  thread_ = std::thread([this] { Run(); });
}

bool StopNotifier::Enqueue(std::string url, std::string body) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!stopping_ && queue_.size() < options_.max_pending) {
      queue_.push_back(
          Notice{std::move(url), std::move(body), 0, clock_.NowUs()});
      if (pending_metric_) pending_metric_->Set(queue_.size());
      cv_.notify_one();
      return true;
    }
  }
  if (dropped_metric_) dropped_metric_->Add();
  Log("onStop " + url +
      ": notification dropped (queue full or stopping): " + body);
  return false;
}

void StopNotifier::Stop() {
  size_t dropped = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    cv_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
  {
    std::lock_guard<std::mutex> lock(mu_);
    dropped = queue_.size();
    queue_.clear();
    if (pending_metric_) pending_metric_->Set(0);
  }
  if (dropped > 0) {
    if (dropped_metric_) dropped_metric_->Add(dropped);
    Log("onStop: " + std::to_string(dropped) +
        " notification(s) not delivered before shutdown");
  }
}

size_t StopNotifier::pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.size();
}

uint64_t StopNotifier::delivered() const {
  std::lock_guard<std::mutex> lock(mu_);
  return delivered_;
}

size_t StopNotifier::Earliest() const {
  size_t best = 0;
  for (size_t i = 1; i < queue_.size(); ++i) {
    if (queue_[i].due_us < queue_[best].due_us) best = i;
  }
  return best;
}

void StopNotifier::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (stopping_) return;
    if (queue_.empty()) {
      cv_.wait(lock);
      continue;
    }
    const size_t next = Earliest();
    const int64_t wait_us = queue_[next].due_us - clock_.NowUs();
    if (wait_us > 0) {
      // At least 1 ms: a clock that moves only when told (a test's) is not
      // polled in a spin while a notice is just short of due.
      cv_.wait_for(lock, std::chrono::microseconds(std::clamp<int64_t>(
                             wait_us, 1000, kRecheckMs * 1000)));
      continue;
    }
    Notice notice = std::move(queue_[next]);
    queue_.erase(queue_.begin() + static_cast<std::ptrdiff_t>(next));
    lock.unlock();

    Result<int> answer = options_.post
                             ? options_.post(notice.url, notice.body)
                             : net::client::PostJson(notice.url, notice.body,
                                                     options_.timeout_ms);
    const bool ok = answer.ok() && *answer >= 200 && *answer < 300;
    ++notice.attempts;
    std::string failure;
    int64_t backoff_ms = 0;
    if (!ok) {
      failure = answer.ok() ? "HTTP " + std::to_string(*answer)
                            : answer.status().message();
      backoff_ms = options_.initial_backoff_ms;
      for (int i = 1;
           i < notice.attempts && backoff_ms < options_.max_backoff_ms; ++i) {
        backoff_ms *= 2;
      }
      backoff_ms = std::min(backoff_ms, options_.max_backoff_ms);
      Log("onStop " + notice.url + ": attempt " +
          std::to_string(notice.attempts) + " failed (" + failure +
          "); retrying in " + std::to_string(backoff_ms) + " ms");
    }

    lock.lock();
    if (ok) {
      ++delivered_;
      if (delivered_metric_) delivered_metric_->Add();
    } else {
      if (failures_metric_) failures_metric_->Add();
      notice.due_us = clock_.NowUs() + backoff_ms * 1000;
      queue_.push_back(std::move(notice));
    }
    if (pending_metric_) pending_metric_->Set(queue_.size());
  }
}

}  // namespace tessera::server
