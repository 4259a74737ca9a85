// Following a TRANSFER (docs/protocol.md): the times of one bot's moves
// between shards. A move starts at the answer (ACK, REJECT or the FRAME
// that acknowledged it) of the last input answered on the source
// connection before the TRANSFER arrived: the input that made the module
// move the player when the bot sends it last, as the transfer bench's bots
// do (`{"go": ...}`); with no input answered on that connection (a move
// started by the admin API, or a TRANSFER instead of WELCOME) it starts at
// the TRANSFER. It ends at the first FRAME from the target. The part from
// the TRANSFER to that FRAME is the client's reconnect (connect, HELLO,
// WELCOME, baseline), reported on its own.
//
// Pure bookkeeping with the times passed in; thread-compatible (one bot).
#ifndef TESSERA_LOADTEST_TRANSFER_TRACKER_H_
#define TESSERA_LOADTEST_TRANSFER_TRACKER_H_

#include <chrono>
#include <optional>

namespace tessera::loadtest {

class TransferTracker {
 public:
  using Clock = std::chrono::steady_clock;
  // TRANSFERs in a row with no FRAME from a target in between: past this a
  // bot stops following (the shards send it round in a loop).
  static constexpr int kMaxUnframedTransfers = 8;

  // An input of the current connection was answered at `at`.
  void Answered(Clock::time_point at);
  // A TRANSFER arrived at `at`: the bot connects to the target next.
  // Returns false (and records nothing) once it would be the
  // kMaxUnframedTransfers + 1-th in a row without a FRAME.
  bool Transfer(Clock::time_point at);

  struct Move {
    Clock::duration total;      // last answer (or TRANSFER) -> first FRAME
    Clock::duration reconnect;  // TRANSFER -> first FRAME
  };
  // A FRAME arrived at `at` on the current connection: the move it ends,
  // when it is the first FRAME since a TRANSFER.
  std::optional<Move> Frame(Clock::time_point at);

  // Between a TRANSFER and the target's first FRAME.
  bool moving() const { return moving_; }

 private:
  std::optional<Clock::time_point> last_answer_;  // on this connection
  Clock::time_point started_;
  Clock::time_point transfer_at_;
  bool moving_ = false;
  int unframed_ = 0;
};

}  // namespace tessera::loadtest

#endif  // TESSERA_LOADTEST_TRANSFER_TRACKER_H_
