#include "net/input_gate.h"

#include "net/connections.h"

namespace tessera::net {

InputGate::InputGate(double rate_per_sec, double burst, int max_strikes,
                     const Clock& clock)
    : clock_(clock),
      max_strikes_(max_strikes),
      bucket_(rate_per_sec, burst, clock.NowUs()) {}

InputVerdict InputGate::Check(uint64_t seq) {
  InputVerdict verdict;
  if (seq <= last_seq_ || seq > kMaxInputSeq) {
    verdict.close_code = kCloseBadFrame;
    verdict.close_reason =
        seq > kMaxInputSeq
            ? "input seq " + std::to_string(seq) + " is above 2^53"
            : "input seq " + std::to_string(seq) +
                  " is not above the previous " + std::to_string(last_seq_);
    return verdict;
  }
  last_seq_ = seq;
  if (!bucket_.TryTake(clock_.NowUs())) {
    verdict.reject = "rate limited";
    ++strikes_;
    if (max_strikes_ > 0 && strikes_ >= max_strikes_) {
      verdict.close_code = kCloseRateLimited;
      verdict.close_reason =
          "too many inputs: " + std::to_string(strikes_) + " strikes";
    }
    return verdict;
  }
  verdict.accept = true;
  return verdict;
}

}  // namespace tessera::net
