// The send-queue policy of one WebSocket connection, as pure code (no
// sockets, no Beast): what waits to be written, in which order, which frame
// a newer one supersedes, when a replication stream is rebaselined and when
// a client that does not read is closed with 1008 "too slow". The transport
// (net/ws_connection) writes what Next() names and reports back.
//
// The policy counts, it does not time: a client is too slow when frames or
// messages pile up, however fast the ticks come.
//
// Invariants:
// - One write at a time: Next() is null while a write is in flight. The
//   message being written is held apart from the queue, so it is never
//   dropped, replaced or moved (its buffers are in use).
// - An urgent message (the PONG) goes before the queue; at most one waits,
//   the latest.
// - Without frame acks a tick's replies follow its frame; with them the
//   rejections go before it and its header carries the acks (ACK messages
//   only when the tick has no frame). A frame that supersedes another moves
//   to the end then, after the rejections queued meanwhile.
//
// Threading: not thread-safe; one connection's queue is used on its strand.
#ifndef TESSERA_NET_SEND_QUEUE_H_
#define TESSERA_NET_SEND_QUEUE_H_

#include <cstddef>
#include <deque>
#include <optional>
#include <span>
#include <string>

#include "net/outgoing.h"

namespace tessera::net {

class SendQueue {
 public:
  // Beyond `max_queued_frames` frames waiting the connection is too slow
  // (or rebaselined); beyond 16 times that messages of any kind, too.
  explicit SendQueue(size_t max_queued_frames);

  // With frame acks (the HELLO flag) a frame's header carries the ACKs.
  void set_frame_acks(bool on) { frame_acks_ = on; }
  bool frame_acks() const { return frame_acks_; }

  // ---- What the connection queues ----

  // Queues a whole message (WELCOME, PING, a REJECT...). Nullopt when
  // queued; else the 1008 close reason (nothing was queued): too many
  // messages are waiting.
  std::optional<std::string> Push(std::string message);

  // One of a tick's answers to this connection's inputs.
  struct Reply {
    std::string message;  // the encoded ACK or REJECT
    bool ack = false;     // an ACK (a frame's header may carry it instead)
  };
  enum class FrameOutcome {
    kQueued,      // the frame (if any) and replies were queued
    kSuperseded,  // the frame took the place of an unsent one
    kResync,      // the waiting replication frames and this one were
                  // dropped: ask the resource for a new baseline
    kTooSlow,     // close with 1008 `reason`, dropping what is queued
  };
  struct FramePush {
    FrameOutcome outcome = FrameOutcome::kQueued;
    bool superseded = false;  // the frame replaced one (also when too slow)
    std::string reason;       // with kTooSlow
  };
  // Queues a tick's `frame` (none when !frame.is_frame) and `replies`
  // (ordered as the header comment says).
  FramePush PushFrame(Outgoing frame, std::span<Reply> replies);

  // The message to write before anything else queued (replaces the one
  // still waiting, if any).
  void SetUrgent(std::string message);

  // Queues the close frame after what waits (or, with `drop_queued`,
  // instead of all but the message being written); forgets the urgent one.
  // `reason` must already fit a close frame.
  void PushClose(int code, std::string reason, bool drop_queued);

  // Forgets every queued message except the one being written.
  void DropQueued();
  // Forgets everything, the write in flight included (it failed, or the
  // close was sent).
  void Clear();

  // ---- What the writer asks ----

  // The message to write next: the urgent one, else the front; null while
  // a write is in flight or when nothing waits.
  const Outgoing* Next() const;
  // The i-th message after Next() in the queue's order (Peek(0) is Next()),
  // for a writer that writes several at once; null past the end, while a
  // write is in flight, or while the urgent message waits. Finished() once
  // per message written this way.
  const Outgoing* Peek(size_t i) const {
    if (in_flight_ || urgent_ || i >= queue_.size()) return nullptr;
    return &queue_[i];
  }
  // Whether Next() is the urgent message (never written directly).
  bool next_is_urgent() const { return !in_flight_ && urgent_.has_value(); }
  // Next() is being written asynchronously: it moves out of the queue (so
  // nothing done to the queue can touch it) until Finished(). Returns it;
  // the reference stays valid until Finished() or Clear().
  const Outgoing& Started();
  // The message Started() (or, after a synchronous write, Next()) is out.
  void Finished();
  bool writing() const { return in_flight_.has_value(); }

  // Messages waiting or being written (the urgent one aside).
  size_t size() const {
    return queue_.size() + (in_flight_ && !in_flight_urgent_ ? 1 : 0);
  }
  size_t queued_frames() const { return queued_frames_; }
  size_t max_queued_messages() const;

 private:
  void PushPlain(std::string message);
  bool Supersede(Outgoing& frame);
  void Resync();
  // Accounts for a written message.
  void Wrote(const Outgoing& message);

  const size_t max_frames_;
  bool frame_acks_ = false;
  std::deque<Outgoing> queue_;         // waiting, oldest first
  std::optional<Outgoing> urgent_;     // waiting
  std::optional<Outgoing> in_flight_;  // being written
  bool in_flight_urgent_ = false;
  size_t queued_frames_ = 0;  // in the queue or in flight
  // Frames superseded since a frame was last written.
  size_t skipped_ = 0;
  // False from a resync until a frame is written: a second resync with
  // nothing written in between is too slow instead.
  bool wrote_since_resync_ = true;
};

}  // namespace tessera::net

#endif  // TESSERA_NET_SEND_QUEUE_H_
