#include "loadtest/transfer_tracker.h"

namespace tessera::loadtest {

void TransferTracker::Answered(Clock::time_point at) { last_answer_ = at; }

bool TransferTracker::Transfer(Clock::time_point at) {
  if (unframed_ >= kMaxUnframedTransfers) return false;
  ++unframed_;
  // A TRANSFER that follows another before any FRAME (the target moved the
  // player on, or sent TRANSFER instead of WELCOME) extends the same move.
  if (!moving_) started_ = last_answer_.value_or(at);
  transfer_at_ = at;
  moving_ = true;
  last_answer_.reset();  // the next connection's answers are its own
  return true;
}

std::optional<TransferTracker::Move> TransferTracker::Frame(
    Clock::time_point at) {
  unframed_ = 0;
  if (!moving_) return std::nullopt;
  moving_ = false;
  return Move{at - started_, at - transfer_at_};
}

}  // namespace tessera::loadtest
