// What a shard protocol session (net/shard_session) needs of the shards: a
// narrow port, so that the session does not depend on the shard host (a
// test, a remote host or a cluster can stand in). ShardHostGateway adapts
// shard::ShardHost to it.
//
// Threading: every method may be called from any thread (io threads).
#ifndef TESSERA_NET_SHARD_GATEWAY_H_
#define TESSERA_NET_SHARD_GATEWAY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"
#include "shard/shard_types.h"
#include "shard/talk_types.h"

namespace tessera::net {

// A shard as a joining connection sees it.
struct ShardState {
  shard::ShardStatus status = shard::ShardStatus::kStarting;
  uint64_t tick = 0;  // ticks run so far
  // Of its kind, for WELCOME.
  uint32_t tick_rate = 20;
  shard::Codec codec = shard::Codec::kMsgpack;
  // When stopped: the reason's name, then ": " and its message if any.
  std::string stop_text;
};

class ShardGateway {
 public:
  virtual ~ShardGateway() = default;
  // The shard `id`, or nullopt when there is none.
  virtual std::optional<ShardState> Find(std::string_view id) const = 0;
  // Queues an input for the shard's next tick; its result comes back in a
  // tick under `input_id`. `timing`: the view tick the client stamped and
  // the connection's round trip (lag compensation; both may be unknown).
  // Errors: the shard's (unknown, queue full...).
  virtual Status SubmitInput(std::string_view id, std::string_view subscriber,
                             uint64_t input_id, std::string_view bytes,
                             shard::InputTiming timing) = 0;
  // Subscriber bookkeeping (counts per call: add and remove in pairs).
  // `claims_json` is the claims of the connection's ticket (a JSON object);
  // the shard keeps the latest per subscriber for the moves it starts.
  virtual Status AddSubscriber(std::string_view id, std::string_view subscriber,
                               std::string_view claims_json) = 0;
  virtual Status RemoveSubscriber(std::string_view id,
                                  std::string_view subscriber) = 0;
  // The player `subscriber` left shard `id` within shard::kMovedRecordSecs
  // (whether or not `id` still runs): where it went, or nullopt.
  virtual std::optional<shard::MovedTo> FindMove(
      std::string_view id, std::string_view subscriber) const = 0;
  // With replication: the subscriber's next payload is a baseline.
  virtual Status RequestBaseline(std::string_view id,
                                 std::string_view subscriber) = 0;
};

}  // namespace tessera::net

#endif  // TESSERA_NET_SHARD_GATEWAY_H_
