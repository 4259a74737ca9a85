#include "net/shard_stream.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "net/protocol_v1.h"

namespace tessera::net {

void ShardStream::Submitted(uint64_t input_id, uint64_t seq) {
  outstanding_.emplace(input_id, seq);
}

void ShardStream::Forget(uint64_t input_id) { outstanding_.erase(input_id); }

void ShardStream::TakeReplies(const Results* results,
                              std::vector<SendQueue::Reply>* replies) {
  if (results == nullptr) return;
  for (const shard::InputResult& r : *results) {
    auto it = outstanding_.find(r.seq);
    if (it == outstanding_.end()) continue;  // another connection's
    const uint64_t seq = it->second;
    outstanding_.erase(it);
    last_applied_seq_ = std::max(last_applied_seq_, seq);
    replies->push_back(SendQueue::Reply{
        r.accepted ? v1::EncodeAck(seq) : v1::EncodeReject(seq, r.rejection),
        r.accepted});
  }
}

Outgoing ShardStream::Frame(uint64_t tick,
                            std::shared_ptr<const std::string> snapshot,
                            const Results* results,
                            std::vector<SendQueue::Reply>* replies) {
  TakeReplies(results, replies);
  Outgoing frame;
  frame.tick = tick;
  frame.head = v1::EncodeFrameHeader(tick, last_applied_seq_, snapshot->size());
  frame.body = std::move(snapshot);
  frame.is_frame = true;
  frame.skip = Outgoing::Skip::kSupersede;
  return frame;
}

Outgoing ShardStream::View(uint64_t tick, bool replication,
                           std::shared_ptr<const std::string> snapshot,
                           std::shared_ptr<const std::string> entities,
                           bool baseline, const Results* results,
                           std::vector<SendQueue::Reply>* replies) {
  TakeReplies(results, replies);
  Outgoing frame;
  frame.tick = tick;
  if (!replication && snapshot != nullptr) {
    frame.head =
        v1::EncodeFrameHeader(tick, last_applied_seq_, snapshot->size());
    frame.body = std::move(snapshot);
    frame.is_frame = true;
  } else if (replication && entities != nullptr &&
             (baseline || got_baseline_)) {
    got_baseline_ = true;
    const bool send_snapshot =
        snapshot != nullptr && snapshot != last_snapshot_;
    frame.head = v1::EncodeViewFrameHeader(
        tick, last_applied_seq_,
        send_snapshot ? std::optional<size_t>(snapshot->size()) : std::nullopt);
    if (send_snapshot) {
      frame.body = snapshot;
      last_snapshot_ = std::move(snapshot);
    }
    frame.mid = v1::EncodeBinHeader(entities->size());
    frame.body2 = std::move(entities);
    frame.is_frame = true;
    frame.skip = Outgoing::Skip::kResync;
  }
  return frame;
}

void ShardStream::Resynced() {
  got_baseline_ = false;
  last_snapshot_.reset();  // the dropped frames may have carried it
}

}  // namespace tessera::net
