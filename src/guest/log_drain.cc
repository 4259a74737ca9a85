#include "guest/log_drain.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

#include "common/text.h"
#include "tessera/abi.h"

namespace tessera::guest {
namespace {

constexpr const char* kLevels[] = {"debug", "info", "warn", "error", "panic"};
static_assert(abi::kLogDebug == 0 && abi::kLogPanic == 4);
constexpr char kDroppedHelp[] =
    "Guest log lines dropped: over the per-shard rate limit (rate) or with "
    "the log queue full (queue).";

constexpr int64_t kLineCost = 1'000'000;
constexpr int64_t kNoteIntervalUs = 5'000'000;

const char* LevelName(int level) {
  return level >= 0 && level <= 4 ? kLevels[level] : "log";
}

}  // namespace

std::string LogDrain::FormatLine(std::string_view source, int level,
                                 std::string_view text, size_t max_line_bytes) {
  std::string line;
  line.reserve(source.size() + std::min(text.size(), max_line_bytes) + 16);
  line += '[';
  // The source is the host's own text (a shard id the admin API checked),
  // escaped all the same so that nothing unescaped reaches the log.
  line += EscapeForLog(source, 256);
  line += "] ";
  line += LevelName(level);
  line += ": ";
  line += EscapeForLog(text, max_line_bytes);
  line += '\n';
  return line;
}

void LogDrain::WriteToStderr(std::string_view line) {
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

LogDrain::LogDrain(Output output, LogDrainOptions options)
    : output_(std::move(output)),
      options_(options),
      clock_(options.clock != nullptr ? options.clock : RealClock::Get()) {
  if (options_.metrics != nullptr) {
    rate_metric_ = options_.metrics->GetCounter(
        "tessera_guest_log_dropped_total", kDroppedHelp, {{"reason", "rate"}});
    queue_metric_ = options_.metrics->GetCounter(
        "tessera_guest_log_dropped_total", kDroppedHelp, {{"reason", "queue"}});
  }
  thread_ = std::thread([this] { Run(); });
}

LogDrain::~LogDrain() { Stop(); }

bool LogDrain::Admit(std::string_view source, uint64_t* dropped_before) {
  *dropped_before = 0;
  if (options_.lines_per_second <= 0) return true;
  const int64_t now = clock_->NowUs();
  // Credit in line-microseconds: a line costs 1e6, time earns
  // lines_per_second per microsecond (integers: no rounding drift).
  const int64_t capacity = std::llround(options_.burst * 1e6);
  const auto refilled = [&](const Bucket& b) {
    const int64_t earned = std::llround(
        static_cast<double>(now - b.updated_us) * options_.lines_per_second);
    return std::min(capacity, b.credit + std::max<int64_t>(earned, 0));
  };
  auto it = buckets_.find(source);
  if (it == buckets_.end()) {
    if (buckets_.size() >= options_.max_sources) {
      // Forget the sources that have been quiet long enough to be full
      // again (they lose nothing: a new bucket starts full).
      std::erase_if(buckets_, [&](const auto& entry) {
        return entry.second.dropped == 0 && refilled(entry.second) >= capacity;
      });
    }
    it = buckets_
             .emplace(std::string(source),
                      Bucket{capacity, now, 0, now - kNoteIntervalUs})
             .first;
  }
  Bucket& bucket = it->second;
  bucket.credit = refilled(bucket);
  bucket.updated_us = now;
  if (bucket.credit < kLineCost) {
    ++bucket.dropped;
    return false;
  }
  bucket.credit -= kLineCost;
  if (bucket.dropped > 0 && now - bucket.noted_us >= kNoteIntervalUs) {
    *dropped_before = std::exchange(bucket.dropped, 0);
    bucket.noted_us = now;
  }
  return true;
}

size_t LogDrain::tracked_sources() const {
  std::lock_guard<std::mutex> lock(mu_);
  return buckets_.size();
}

bool LogDrain::Push(std::string_view source, int level, std::string_view text) {
  uint64_t dropped_before = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return false;
    if (!Admit(source, &dropped_before)) {
      ++dropped_rate_;
      if (rate_metric_ != nullptr) rate_metric_->Add();
      return false;
    }
  }
  // Formatting (at most a few KiB) happens outside the lock.
  std::string line = FormatLine(source, level, text, options_.max_line_bytes);
  std::string note;
  if (dropped_before > 0) {
    note = FormatLine(source, abi::kLogWarn,
                      std::to_string(dropped_before) +
                          " log lines dropped (over the rate limit)",
                      options_.max_line_bytes);
  }
  return Enqueue(std::move(note), std::move(line));
}

bool LogDrain::PushLine(std::string_view line) {
  std::string text(line);
  text += '\n';
  return Enqueue("", std::move(text));
}

bool LogDrain::Enqueue(std::string first, std::string second) {
  std::lock_guard<std::mutex> lock(mu_);
  const size_t lines = first.empty() ? 1 : 2;
  const size_t bytes = first.size() + second.size();
  if (stopping_) return false;
  if (pending_lines_ + lines > options_.max_queued_lines ||
      pending_bytes_ + bytes > options_.max_queued_bytes) {
    ++dropped_queue_;
    if (queue_metric_ != nullptr) queue_metric_->Add();
    return false;
  }
  if (!first.empty()) queue_.push_back(std::move(first));
  queue_.push_back(std::move(second));
  pending_lines_ += lines;
  pending_bytes_ += bytes;
  wake_.notify_one();
  return true;
}

void LogDrain::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and everything is written
    std::deque<std::string> batch;
    batch.swap(queue_);
    lock.unlock();
    size_t bytes = 0;
    for (const std::string& line : batch) {
      output_(line);
      bytes += line.size();
    }
    lock.lock();
    pending_lines_ -= batch.size();
    pending_bytes_ -= bytes;
  }
}

void LogDrain::Stop() {
  std::lock_guard<std::mutex> stop_lock(stop_mu_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
}

uint64_t LogDrain::dropped_by_rate() const {
  std::lock_guard<std::mutex> lock(mu_);
  return dropped_rate_;
}

uint64_t LogDrain::dropped_by_queue() const {
  std::lock_guard<std::mutex> lock(mu_);
  return dropped_queue_;
}

}  // namespace tessera::guest
