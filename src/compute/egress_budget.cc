// A module's per-minute egress budget (egress_budget.h). Minutes are
// calendar minutes of unix time: the counters start again at every
// multiple of 60,000 ms.
#include "compute/egress_budget.h"

#include <algorithm>

namespace tessera::compute {
namespace {

constexpr int64_t kMinuteMs = 60'000;

int64_t MinuteStart(int64_t now_ms) {
  int64_t start = now_ms - now_ms % kMinuteMs;
  if (now_ms % kMinuteMs < 0) start -= kMinuteMs;  // before 1970
  return start;
}

}  // namespace

EgressBudget::EgressBudget(int64_t msgs_per_min, int64_t bytes_per_min) {
  SetLimits(msgs_per_min, bytes_per_min);
}

void EgressBudget::SetLimits(int64_t msgs_per_min, int64_t bytes_per_min) {
  msgs_per_min_ = std::max<int64_t>(0, msgs_per_min);
  bytes_per_min_ = std::max<int64_t>(0, bytes_per_min);
}

void EgressBudget::Roll(int64_t now_ms) {
  const int64_t minute = MinuteStart(now_ms);
  if (minute != minute_ms_) {
    minute_ms_ = minute;
    msgs_ = 0;
    bytes_ = 0;
  }
}

bool EgressBudget::Charge(int64_t now_ms, int64_t bytes, std::string* why) {
  Roll(now_ms);
  bytes = std::max<int64_t>(0, bytes);
  std::string reason;
  if (msgs_ >= msgs_per_min_) {
    reason = "egress budget: " + std::to_string(msgs_per_min_) +
             " messages per minute used";
  } else if (bytes > bytes_per_min_ - bytes_) {
    reason = "egress budget: " + std::to_string(bytes_) + " of " +
             std::to_string(bytes_per_min_) +
             " bytes per minute used, this message needs " +
             std::to_string(bytes);
  } else {
    ++msgs_;
    bytes_ += bytes;
    return true;
  }
  if (why != nullptr) {
    if (msgs_per_min_ == 0) {
      reason += "; maxEgressMsgsPerMin is 0, so no minute allows one";
    } else if (bytes > bytes_per_min_) {
      reason += "; the message is larger than maxEgressBytesPerMin";
    } else {
      // Whole seconds, rounded up, so "0 s" never appears.
      const int64_t left_ms = minute_ms_ + kMinuteMs - now_ms;
      reason += "; next minute starts in " +
                std::to_string((left_ms + 999) / 1000) + " s";
    }
    *why = std::move(reason);
  }
  return false;
}

}  // namespace tessera::compute
