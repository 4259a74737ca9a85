// What one shard connection sends of each tick, as pure code: the protocol
// v1 FRAME (header + the shard's shared buffers, never copied) and the
// ACK/REJECTs of this connection's inputs, which net::SendQueue then orders.
//
// Inputs go to the shard under server-wide input ids (a subscriber's
// connections may reuse client seqs); the stream maps each result back to
// the client's seq of the connection that sent it, and keeps the highest
// applied seq for the FRAME header. With replication, FRAMEs start at the
// subscriber's first BASELINE (and again after a resync), and the shard's
// snapshot is sent only when it is not the buffer last sent.
//
// Threading: not thread-safe; one connection's stream is used on its strand.
#ifndef TESSERA_NET_SHARD_STREAM_H_
#define TESSERA_NET_SHARD_STREAM_H_

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "net/outgoing.h"
#include "net/send_queue.h"
#include "shard/shard_types.h"

namespace tessera::net {

class ShardStream {
 public:
  using Results = std::vector<shard::InputResult>;

  // The client's input `seq` went to the shard as `input_id`.
  void Submitted(uint64_t input_id, uint64_t seq);
  // The shard refused to queue `input_id`: no result will come.
  void Forget(uint64_t input_id);
  // The connection left: results still to come are for nobody.
  void Clear() { outstanding_.clear(); }

  // A tick of a whole-snapshot shard: the FRAME with the shared `snapshot`;
  // this connection's results among `results` (may be null) go to
  // `replies`.
  Outgoing Frame(uint64_t tick, std::shared_ptr<const std::string> snapshot,
                 const Results* results,
                 std::vector<SendQueue::Reply>* replies);
  // A tick of a shard with interest or replication (see
  // ShardReceiver::PostView). No FRAME (is_frame false) when the payloads
  // are null or, with replication, before the first baseline.
  Outgoing View(uint64_t tick, bool replication,
                std::shared_ptr<const std::string> snapshot,
                std::shared_ptr<const std::string> entities, bool baseline,
                const Results* results, std::vector<SendQueue::Reply>* replies);
  // The queue dropped the waiting replication frames: FRAMEs stop until the
  // next baseline, which sends the snapshot again.
  void Resynced();

  uint64_t last_applied_seq() const { return last_applied_seq_; }

 private:
  void TakeReplies(const Results* results,
                   std::vector<SendQueue::Reply>* replies);

  std::unordered_map<uint64_t, uint64_t> outstanding_;  // input id -> seq
  uint64_t last_applied_seq_ = 0;
  bool got_baseline_ = false;  // replication: FRAMEs flow from a baseline on
  std::shared_ptr<const std::string> last_snapshot_;  // replication
};

}  // namespace tessera::net

#endif  // TESSERA_NET_SHARD_STREAM_H_
