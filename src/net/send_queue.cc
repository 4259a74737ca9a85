#include "net/send_queue.h"

#include <algorithm>
#include <iterator>
#include <utility>

namespace tessera::net {

SendQueue::SendQueue(size_t max_queued_frames)
    : max_frames_(max_queued_frames) {}

size_t SendQueue::max_queued_messages() const {
  return std::max<size_t>(max_frames_, 1) * 16;
}

void SendQueue::PushPlain(std::string message) {
  Outgoing out;
  out.head = std::move(message);
  queue_.push_back(std::move(out));
}

std::optional<std::string> SendQueue::Push(std::string message) {
  // Replies (PONG aside, ACK, REJECT) are bounded too: a client flooding
  // inputs or PINGs without reading must not grow the queue.
  if (size() >= max_queued_messages()) {
    return "too slow: " + std::to_string(size()) + " messages queued";
  }
  PushPlain(std::move(message));
  return std::nullopt;
}

SendQueue::FramePush SendQueue::PushFrame(Outgoing frame,
                                          std::span<Reply> replies) {
  FramePush result;
  if (frame_acks_) {
    for (Reply& r : replies) {
      if (!r.ack || !frame.is_frame) PushPlain(std::move(r.message));
    }
  }
  if (frame.is_frame && frame.skip == Outgoing::Skip::kSupersede &&
      Supersede(frame)) {
    result.outcome = FrameOutcome::kSuperseded;
    result.superseded = true;
    if (++skipped_ >= max_frames_) {
      result.outcome = FrameOutcome::kTooSlow;
      result.reason = "too slow: " + std::to_string(skipped_) +
                      " frames skipped without one written";
      return result;
    }
  } else if (frame.is_frame && queued_frames_ >= max_frames_) {
    if (frame.skip != Outgoing::Skip::kResync || !wrote_since_resync_) {
      result.outcome = FrameOutcome::kTooSlow;
      result.reason =
          "too slow: " + std::to_string(queued_frames_) + " frames queued";
      return result;
    }
    Resync();  // `frame` goes too: the baseline replaces it
    result.outcome = FrameOutcome::kResync;
  } else if (frame.is_frame) {
    queue_.push_back(std::move(frame));
    ++queued_frames_;
  }
  if (!frame_acks_) {
    for (Reply& r : replies) PushPlain(std::move(r.message));
  }
  return result;
}

// Puts `frame` in the place of the newest frame still waiting, when that one
// may be superseded; false when there is none. With frame acks the new frame
// goes last instead (after the REJECTs just queued, which must come before a
// frame whose last_seq covers them).
bool SendQueue::Supersede(Outgoing& frame) {
  for (size_t i = queue_.size(); i > 0; --i) {
    Outgoing& queued = queue_[i - 1];
    if (!queued.is_frame) continue;
    if (queued.skip != Outgoing::Skip::kSupersede) return false;
    if (frame_acks_) {
      queue_.erase(queue_.begin() + static_cast<std::ptrdiff_t>(i - 1));
      queue_.push_back(std::move(frame));
    } else {
      queued = std::move(frame);
    }
    return true;
  }
  return false;
}

// Drops the frames waiting (not the replies).
void SendQueue::Resync() {
  auto kept =
      std::stable_partition(queue_.begin(), queue_.end(),
                            [](const Outgoing& o) { return !o.is_frame; });
  queued_frames_ -= static_cast<size_t>(queue_.end() - kept);
  queue_.erase(kept, queue_.end());
  wrote_since_resync_ = false;
}

void SendQueue::SetUrgent(std::string message) {
  Outgoing out;
  out.head = std::move(message);
  urgent_ = std::move(out);
}

void SendQueue::PushClose(int code, std::string reason, bool drop_queued) {
  urgent_.reset();
  if (drop_queued) DropQueued();
  Outgoing out;
  out.head = std::move(reason);
  out.is_close = true;
  out.close_code = code;
  queue_.push_back(std::move(out));
}

void SendQueue::DropQueued() {
  for (const Outgoing& o : queue_) {
    if (o.is_frame) --queued_frames_;
  }
  queue_.clear();
}

void SendQueue::Clear() {
  queue_.clear();
  in_flight_.reset();
  in_flight_urgent_ = false;
  queued_frames_ = 0;
}

const Outgoing* SendQueue::Next() const {
  if (in_flight_) return nullptr;
  if (urgent_) return &*urgent_;
  if (queue_.empty()) return nullptr;
  return &queue_.front();
}

const Outgoing& SendQueue::Started() {
  if (urgent_) {
    in_flight_ = std::move(urgent_);
    urgent_.reset();
    in_flight_urgent_ = true;
  } else {
    in_flight_ = std::move(queue_.front());
    queue_.pop_front();
    in_flight_urgent_ = false;
  }
  return *in_flight_;
}

void SendQueue::Wrote(const Outgoing& message) {
  if (!message.is_frame) return;
  --queued_frames_;
  skipped_ = 0;
  wrote_since_resync_ = true;
}

void SendQueue::Finished() {
  if (in_flight_) {
    if (!in_flight_urgent_) Wrote(*in_flight_);
    in_flight_.reset();
    in_flight_urgent_ = false;
  } else if (urgent_) {
    urgent_.reset();
  } else if (!queue_.empty()) {
    Wrote(queue_.front());
    queue_.pop_front();
  }
}

}  // namespace tessera::net
