// The client side of protocol v1's input answers (docs/protocol.md): which
// inputs are still unanswered and since when, answered one by one (ACK,
// REJECT) or all up to a FRAME's last_seq (frame acks); and reading a
// FRAME's header without decoding its snapshot, so that a bot counting
// frames spends less CPU than the server spends sending them. Pure.
#ifndef TESSERA_NET_CLIENT_V1_INPUTS_H_
#define TESSERA_NET_CLIENT_V1_INPUTS_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>

namespace tessera::net::client {

// Whether `p` starts like a FRAME (an array header, then the type 19).
bool IsFrame(const uint8_t* p, size_t n);
// A FRAME's last_seq (its third element), reading nothing after it;
// nullopt if the header does not decode.
std::optional<uint64_t> FrameLastSeq(const uint8_t* p, size_t n);

// The inputs of one connection sent and not answered yet, numbered 1, 2,
// ... in the order sent.
class PendingInputs {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;

  // Records the next input, sent at `at`; returns its seq.
  uint64_t Sent(TimePoint at);
  // The send time of input `seq`, which is now answered; nullopt for an
  // answer to nothing (never sent, or already answered).
  std::optional<TimePoint> Answer(uint64_t seq);
  // Answers every pending input up to `last_seq` (frame acks: the server
  // sent the REJECTs among them first), calling `answered(seq, sent_at)`
  // for each in order.
  void AnswerUpTo(uint64_t last_seq,
                  const std::function<void(uint64_t, TimePoint)>& answered);
  // Forgets every unanswered input (the connection ended); returns how
  // many there were.
  uint64_t Abandon();

  uint64_t count() const { return count_; }
  uint64_t next_seq() const { return next_seq_; }

 private:
  void PopAnswered();

  static constexpr TimePoint kAnswered = TimePoint::min();
  uint64_t next_seq_ = 1;
  // Send times by seq - first_seq_ (kAnswered once answered).
  uint64_t first_seq_ = 1;
  std::deque<TimePoint> sent_;
  uint64_t count_ = 0;
};

}  // namespace tessera::net::client

#endif  // TESSERA_NET_CLIENT_V1_INPUTS_H_
