#include "server/lifecycle_sink.h"

#include <nlohmann/json.hpp>
#include <optional>

#include "common/text.h"
#include "shard/guest_shard.h"

namespace tessera::server {

using json = nlohmann::json;

std::string StopNoticeBody(std::string_view shard_id, std::string_view kind,
                           shard::StopReason reason, std::string_view message) {
  json body = {{"shardId", std::string(shard_id)},
               {"kind", std::string(kind)},
               {"reason", shard::StopReasonName(reason)},
               {"error", reason == shard::StopReason::kFailed
                             ? json(std::string(message))
                             : json(nullptr)}};
  return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string StopLogLine(std::string_view shard_id, std::string_view kind,
                        shard::StopReason reason, std::string_view message) {
  constexpr size_t kMax = shard::GuestShard::kMaxLogLineBytes;
  std::string line = "shard " + EscapeForLog(shard_id, kMax) + " ";
  if (!kind.empty()) line += "(" + EscapeForLog(kind, kMax) + ") ";
  line += "stopped (";
  line += shard::StopReasonName(reason);
  line += ")";
  if (!message.empty()) line += ": " + EscapeForLog(message, kMax);
  return line;
}

void LifecycleSink::OnFrame(std::string_view shard_id, uint64_t tick,
                            std::string_view snapshot,
                            const std::vector<shard::InputResult>& inputs) {
  shard::ShardSink* next = downstream_.load(std::memory_order_acquire);
  if (next != nullptr) next->OnFrame(shard_id, tick, snapshot, inputs);
}

void LifecycleSink::OnViews(std::string_view shard_id,
                            std::shared_ptr<const shard::ViewFrame> frame) {
  shard::ShardSink* next = downstream_.load(std::memory_order_acquire);
  if (next != nullptr) next->OnViews(shard_id, std::move(frame));
}

void LifecycleSink::OnStopped(std::string_view shard_id,
                              shard::StopReason reason,
                              std::string_view message) {
  shard::ShardSink* next = downstream_.load(std::memory_order_acquire);
  if (next != nullptr) next->OnStopped(shard_id, reason, message);
  if (options_.metrics != nullptr) options_.metrics->OnStopped(reason, message);
  // The stopped shard stays listed (for stopped_retention_us) with its kind.
  std::optional<shard::ShardInfo> info;
  if (directory_ != nullptr) info = directory_->host()->Get(shard_id);
  if (options_.log) {
    options_.log(
        StopLogLine(shard_id, info ? info->kind : "", reason, message));
  }
  if (directory_ == nullptr) return;
  directory_->OnStopped(shard_id);
  if (notifier_ == nullptr || !info) return;
  std::shared_ptr<const shard::KindEntry> kind =
      directory_->kinds()->Find(info->kind);
  if (kind == nullptr || !kind->config.on_stop.starts_with("http://")) return;
  notifier_->Enqueue(kind->config.on_stop,
                     StopNoticeBody(shard_id, info->kind, reason, message));
}

}  // namespace tessera::server
