// NOTIFY to players (docs/protocol.md "Notifications from compute
// modules"): compute::NotifySink over the shard connections. Each
// notification is encoded once (one shared buffer) and put on the hub
// topic of every shard it concerns, in order with that shard's ticks; a
// connection queues it like an ACK/REJECT (never superseded by a frame).
//
// Channels: "all" (every shard with connections), "shard:<id>",
// "kind:<kind>" and "group:<name>" (the shards NotifyShards lists),
// "player:<id>" (that subscriber's connections on every shard); spatial:
// the subscribers NotifyShards::SubscribersWithin names, on that shard.
// The count returned is the connections joined at the time of the call.
//
// Threading: every method from any thread (compute runs on its workers);
// calls only post to the io threads and return at once.
#ifndef TESSERA_NET_NOTIFY_FANOUT_H_
#define TESSERA_NET_NOTIFY_FANOUT_H_

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "compute/notify_sink.h"
#include "net/shard_fanout.h"

namespace tessera::shard {
class ShardHost;
}

namespace tessera::net {

// What the fan-out asks of the shards (ShardHostNotifyShards: the shard
// host's; tests fake it). Any thread.
class NotifyShards {
 public:
  virtual ~NotifyShards() = default;
  // Running shards of kind `kind`.
  virtual std::vector<std::string> ShardsOfKind(
      std::string_view kind) const = 0;
  // Running shards in message group `group`.
  virtual std::vector<std::string> ShardsInGroup(
      std::string_view group) const = 0;
  // Subscribers of `shard` whose interest-area centre at its last tick is
  // within `radius` of (x, y), ascending. kNotFound: no such running shard.
  virtual Result<std::vector<std::string>> SubscribersWithin(
      std::string_view shard, float x, float y, float radius) const = 0;
};

class ShardHostNotifyShards final : public NotifyShards {
 public:
  // `host` is not owned and must outlive this.
  explicit ShardHostNotifyShards(const shard::ShardHost& host) : host_(host) {}
  std::vector<std::string> ShardsOfKind(std::string_view kind) const override;
  std::vector<std::string> ShardsInGroup(std::string_view group) const override;
  Result<std::vector<std::string>> SubscribersWithin(
      std::string_view shard, float x, float y, float radius) const override;

 private:
  const shard::ShardHost& host_;
};

class NotifyFanout final : public compute::NotifySink {
 public:
  // Not owned; must outlive this. `shards` may be null: "kind:" and
  // "group:" then reach nobody and spatial is kErrNotFound.
  NotifyFanout(ShardFanout& fanout, const NotifyShards* shards)
      : fanout_(fanout), shards_(shards) {}

  // Ok(connections reached); kErrInvalid (the channel is none of the forms
  // above), kErrTooLarge (payload over kMaxNotifyPayloadBytes).
  compute::HostCallResult NotifyChannel(
      const compute::Notification& note) override;
  // The NOTIFY's channel is "spatial:<shard>". Ok(connections reached);
  // kErrNotFound (no such running shard), kErrInvalid (coordinates or
  // radius not finite, radius negative), kErrTooLarge.
  compute::HostCallResult NotifySpatial(
      std::string_view shard, float x, float y, float radius,
      const compute::Notification& note) override;
  // Joined shard connections now.
  size_t SessionCount() const override { return fanout_.session_count(); }

 private:
  ShardFanout& fanout_;
  const NotifyShards* const shards_;
};

}  // namespace tessera::net

#endif  // TESSERA_NET_NOTIFY_FANOUT_H_
