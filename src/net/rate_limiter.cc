#include "net/rate_limiter.h"

#include <algorithm>

namespace tessera::net {

TokenBucket::TokenBucket(double rate_per_sec, double burst, int64_t now_us)
    : rate_per_us_(std::max(rate_per_sec, 0.0) / 1e6),
      burst_(std::max(burst, 0.0)),
      tokens_(burst_),
      last_us_(now_us) {}

void TokenBucket::Refill(int64_t now_us) {
  if (now_us <= last_us_) return;
  tokens_ = std::min(
      burst_, tokens_ + static_cast<double>(now_us - last_us_) * rate_per_us_);
  last_us_ = now_us;
}

bool TokenBucket::TryTake(int64_t now_us) {
  Refill(now_us);
  if (tokens_ < 1.0) return false;
  tokens_ -= 1.0;
  return true;
}

}  // namespace tessera::net
