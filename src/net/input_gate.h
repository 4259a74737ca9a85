// The ingress rules for one connection's inputs, as pure code on an
// injected clock: seqs strictly increase and stay within 2^53, a token
// bucket limits the rate, and each refused input is a strike; too many
// strikes close the connection (docs/protocol.md "Ingress limits").
//
// Threading: not thread-safe; one connection's gate is used on its strand.
#ifndef TESSERA_NET_INPUT_GATE_H_
#define TESSERA_NET_INPUT_GATE_H_

#include <cstdint>
#include <string>

#include "common/clock.h"
#include "net/rate_limiter.h"

namespace tessera::net {

inline constexpr uint64_t kMaxInputSeq = uint64_t{1} << 53;

struct InputVerdict {
  bool accept = false;  // submit the input
  std::string reject;   // not empty: answer REJECT with this reason
  int close_code = 0;   // not 0: then close the connection with it
  std::string close_reason;
};

class InputGate {
 public:
  // The bucket starts full at `clock`'s now. `max_strikes` <= 0: never
  // closes for strikes. `clock` is not owned and must outlive the gate.
  InputGate(double rate_per_sec, double burst, int max_strikes,
            const Clock& clock);

  // The verdict on an INPUT with `seq`, the next one this connection sent.
  InputVerdict Check(uint64_t seq);

  int strikes() const { return strikes_; }
  uint64_t last_seq() const { return last_seq_; }

 private:
  const Clock& clock_;
  const int max_strikes_;
  TokenBucket bucket_;
  int strikes_ = 0;
  uint64_t last_seq_ = 0;
};

}  // namespace tessera::net

#endif  // TESSERA_NET_INPUT_GATE_H_
