#include "net/shard_host_gateway.h"

#include "shard/shard_host.h"

namespace tessera::net {

std::optional<ShardState> ShardHostGateway::Find(std::string_view id) const {
  std::optional<shard::ShardInfo> info = host_.Get(id);
  if (!info) return std::nullopt;
  ShardState state;
  state.status = info->status;
  state.tick = info->tick;
  shard::KindConfig kind;
  if (find_kind_) {
    if (auto found = find_kind_(info->kind)) kind = *found;
  }
  state.tick_rate = kind.tick_rate;
  state.codec = kind.codec;
  if (info->status == shard::ShardStatus::kStopped) {
    state.stop_text = shard::StopReasonName(info->stop_reason);
    if (!info->stop_message.empty()) {
      state.stop_text += ": " + info->stop_message;
    }
  }
  return state;
}

Status ShardHostGateway::SubmitInput(std::string_view id,
                                     std::string_view subscriber,
                                     uint64_t input_id, std::string_view bytes,
                                     shard::InputTiming timing) {
  return host_.SubmitInput(id, subscriber, input_id, bytes, timing);
}

Status ShardHostGateway::AddSubscriber(std::string_view id,
                                       std::string_view subscriber,
                                       std::string_view claims_json) {
  return host_.AddSubscriber(id, subscriber, claims_json);
}

Status ShardHostGateway::RemoveSubscriber(std::string_view id,
                                          std::string_view subscriber) {
  return host_.RemoveSubscriber(id, subscriber);
}

Status ShardHostGateway::RequestBaseline(std::string_view id,
                                         std::string_view subscriber) {
  return host_.RequestBaseline(id, subscriber);
}

std::optional<shard::MovedTo> ShardHostGateway::FindMove(
    std::string_view id, std::string_view subscriber) const {
  return host_.FindMove(id, subscriber);
}

}  // namespace tessera::net
