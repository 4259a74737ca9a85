#include "net/client/v1_inputs.h"

#include <span>

#include "net/msgpack.h"
#include "net/protocol_v1.h"

namespace tessera::net::client {

bool IsFrame(const uint8_t* p, size_t n) {
  if (n < 2) return false;
  const bool fixarray = (p[0] & 0xf0) == 0x90;
  return fixarray && p[1] == v1::kFrame;
}

std::optional<uint64_t> FrameLastSeq(const uint8_t* p, size_t n) {
  msgpack::Reader r(std::span<const uint8_t>(p, n));
  if (!r.ReadArrayHeader().ok() || !r.ReadUint().ok() || !r.ReadUint().ok()) {
    return std::nullopt;
  }
  Result<uint64_t> last_seq = r.ReadUint();
  if (!last_seq.ok()) return std::nullopt;
  return *last_seq;
}

uint64_t PendingInputs::Sent(TimePoint at) {
  sent_.push_back(at);
  ++count_;
  return next_seq_++;
}

std::optional<PendingInputs::TimePoint> PendingInputs::Answer(uint64_t seq) {
  if (seq < first_seq_ || seq - first_seq_ >= sent_.size() ||
      sent_[seq - first_seq_] == kAnswered) {
    return std::nullopt;
  }
  const TimePoint at = sent_[seq - first_seq_];
  sent_[seq - first_seq_] = kAnswered;
  --count_;
  PopAnswered();
  return at;
}

void PendingInputs::AnswerUpTo(
    uint64_t last_seq,
    const std::function<void(uint64_t, TimePoint)>& answered) {
  while (!sent_.empty() && first_seq_ <= last_seq) {
    const uint64_t seq = first_seq_;
    const TimePoint at = sent_.front();
    sent_.pop_front();
    ++first_seq_;
    if (at == kAnswered) continue;
    --count_;
    answered(seq, at);
  }
  PopAnswered();
}

uint64_t PendingInputs::Abandon() {
  const uint64_t abandoned = count_;
  first_seq_ = next_seq_;
  sent_.clear();
  count_ = 0;
  return abandoned;
}

void PendingInputs::PopAnswered() {
  while (!sent_.empty() && sent_.front() == kAnswered) {
    sent_.pop_front();
    ++first_seq_;
  }
}

}  // namespace tessera::net::client
