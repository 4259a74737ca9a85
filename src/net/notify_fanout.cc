#include "net/notify_fanout.h"

#include <cmath>
#include <limits>
#include <memory>
#include <utility>

#include "net/protocol_v1.h"
#include "shard/shard_host.h"
#include "tessera/compute_abi.h"

namespace tessera::net {
namespace {

using compute::HostCallResult;
namespace abi = compute_abi;

HostCallResult Reached(size_t n) {
  const size_t max = static_cast<size_t>(std::numeric_limits<int32_t>::max());
  return HostCallResult::Ok(static_cast<int32_t>(n < max ? n : max));
}

HostCallResult TooLarge(size_t size) {
  return HostCallResult::Error(
      abi::kErrTooLarge, "notification payload of " + std::to_string(size) +
                             " bytes (at most " +
                             std::to_string(abi::kMaxNotifyPayloadBytes) + ")");
}

// The rest of `channel` after `prefix`, when it starts so and something
// follows.
bool After(std::string_view channel, std::string_view prefix,
           std::string_view* rest) {
  if (!channel.starts_with(prefix) || channel.size() == prefix.size()) {
    return false;
  }
  *rest = channel.substr(prefix.size());
  return true;
}

std::shared_ptr<const std::string> Encode(const compute::Notification& note,
                                          std::string_view channel) {
  return std::make_shared<const std::string>(
      v1::EncodeNotify(note.module, channel, note.payload, note.flow_id));
}

}  // namespace

std::vector<std::string> ShardHostNotifyShards::ShardsOfKind(
    std::string_view kind) const {
  return host_.ShardsOfKind(kind);
}

std::vector<std::string> ShardHostNotifyShards::ShardsInGroup(
    std::string_view group) const {
  return host_.GroupMembers(group);
}

Result<std::vector<std::string>> ShardHostNotifyShards::SubscribersWithin(
    std::string_view shard, float x, float y, float radius) const {
  return host_.SubscribersWithin(shard, x, y, radius);
}

HostCallResult NotifyFanout::NotifyChannel(const compute::Notification& note) {
  if (note.payload.size() > abi::kMaxNotifyPayloadBytes) {
    return TooLarge(note.payload.size());
  }
  const std::string_view channel = note.channel;
  std::string_view rest;
  std::vector<std::string> shards;
  std::shared_ptr<const std::vector<std::string>> only;
  if (channel == "all") {
    shards = fanout_.ConnectedShards();
  } else if (After(channel, "shard:", &rest)) {
    shards.emplace_back(rest);
  } else if (After(channel, "kind:", &rest)) {
    if (shards_ != nullptr) shards = shards_->ShardsOfKind(rest);
  } else if (After(channel, "group:", &rest)) {
    if (shards_ != nullptr) shards = shards_->ShardsInGroup(rest);
  } else if (After(channel, "player:", &rest)) {
    shards = fanout_.ConnectedShards();
    only = std::make_shared<const std::vector<std::string>>(
        std::vector<std::string>{std::string(rest)});
  } else {
    return HostCallResult::Error(
        abi::kErrInvalid,
        "unknown channel \"" + std::string(channel) +
            "\" (all, shard:<id>, kind:<kind>, group:<name>, player:<id>)");
  }
  if (shards.empty()) return Reached(0);
  std::shared_ptr<const std::string> message = Encode(note, channel);
  size_t reached = 0;
  for (const std::string& shard : shards) {
    reached += fanout_.Notify(shard, message, only);
  }
  return Reached(reached);
}

HostCallResult NotifyFanout::NotifySpatial(std::string_view shard, float x,
                                           float y, float radius,
                                           const compute::Notification& note) {
  if (note.payload.size() > abi::kMaxNotifyPayloadBytes) {
    return TooLarge(note.payload.size());
  }
  if (!std::isfinite(x) || !std::isfinite(y) || !std::isfinite(radius) ||
      radius < 0) {
    return HostCallResult::Error(
        abi::kErrInvalid,
        "emit_spatial needs finite coordinates and a radius of 0 or more");
  }
  const std::string missing = "no running shard \"" + std::string(shard) + "\"";
  if (shards_ == nullptr) {
    return HostCallResult::Error(abi::kErrNotFound, missing);
  }
  Result<std::vector<std::string>> near =
      shards_->SubscribersWithin(shard, x, y, radius);
  if (!near.ok()) {
    if (near.status().code() == StatusCode::kNotFound) {
      return HostCallResult::Error(abi::kErrNotFound, missing);
    }
    return HostCallResult::Error(abi::kErrUnavailable, near.status().message());
  }
  if (near->empty()) return Reached(0);
  std::string channel = "spatial:";
  channel += shard;
  auto only =
      std::make_shared<const std::vector<std::string>>(std::move(near).value());
  return Reached(fanout_.Notify(shard, Encode(note, channel), std::move(only)));
}

}  // namespace tessera::net
