// Per-connection ingress limits: a token bucket for inputs. Pure logic, time
// passed in, so it is tested without sleeping.
//
// Threading: not thread-safe; a connection's bucket is used on its strand.
#ifndef TESSERA_NET_RATE_LIMITER_H_
#define TESSERA_NET_RATE_LIMITER_H_

#include <cstdint>

namespace tessera::net {

// Holds up to `burst` tokens and gains `rate_per_sec` tokens a second; each
// input takes one. Starts full.
class TokenBucket {
 public:
  TokenBucket(double rate_per_sec, double burst, int64_t now_us);

  // Takes one token at `now_us` (monotonic microseconds); false if there is
  // none, in which case nothing is taken. Time going backwards adds nothing.
  bool TryTake(int64_t now_us);

  // Tokens available at the last TryTake (for tests and diagnostics).
  double tokens() const { return tokens_; }

 private:
  void Refill(int64_t now_us);

  const double rate_per_us_;
  const double burst_;
  double tokens_;
  int64_t last_us_;
};

}  // namespace tessera::net

#endif  // TESSERA_NET_RATE_LIMITER_H_
