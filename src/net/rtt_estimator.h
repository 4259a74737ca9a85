// The round trip of one connection, measured by the server with WebSocket
// ping control frames (docs/protocol.md "View tick and lag compensation"),
// as pure code: the transport (net/ws_connection) sends the payload
// NextPing() returns and hands each pong's payload to OnPong.
//
// The smoothed round trip (srtt) is the first sample, then moves an eighth
// of the way to each new one: srtt += (sample - srtt) / 8.
//
// Invariants:
// - A pong counts only when its payload names an outstanding ping; any
//   other pong (unsolicited, a duplicate, a late answer to a ping already
//   forgotten, garbage) is ignored.
// - A pong answers its ping and forgets the ones sent before it (a peer may
//   answer only the latest of several pings, RFC 6455 5.5.3).
// - At most kMaxOutstanding pings are remembered; a new one forgets the
//   oldest.
//
// Threading: not thread-safe; a connection's estimator is used on its
// strand.
#ifndef TESSERA_NET_RTT_ESTIMATOR_H_
#define TESSERA_NET_RTT_ESTIMATOR_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>

#include "common/clock.h"

namespace tessera::net {

class RttEstimator {
 public:
  static constexpr size_t kMaxOutstanding = 8;

  // `clock` is not owned and must outlive the estimator.
  explicit RttEstimator(const Clock& clock) : clock_(clock) {}

  // Records a ping sent now; returns its payload (a few ASCII bytes, well
  // within a control frame's 125).
  std::string NextPing();
  // A pong with `payload` arrived now: its round trip in microseconds when
  // it answers an outstanding ping (the estimate is updated), else nullopt
  // (nothing changes).
  std::optional<int64_t> OnPong(std::string_view payload);

  // The smoothed round trip; nullopt until a pong answered a ping.
  std::optional<int64_t> srtt_us() const { return srtt_us_; }
  size_t outstanding() const { return outstanding_.size(); }

 private:
  struct Sent {
    uint64_t id;
    int64_t at_us;
  };

  const Clock& clock_;
  uint64_t next_id_ = 1;
  std::deque<Sent> outstanding_;  // oldest first, ids increasing
  std::optional<int64_t> srtt_us_;
};

}  // namespace tessera::net

#endif  // TESSERA_NET_RTT_ESTIMATOR_H_
