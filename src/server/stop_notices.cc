#include "server/stop_notices.h"

#include <nlohmann/json.hpp>
#include <optional>

#include "common/text.h"
#include "shard/guest_shard.h"

namespace tessera::server {

using json = nlohmann::json;

bool IsStopUrl(std::string_view on_stop) {
  return on_stop.starts_with("http://") || on_stop.starts_with("https://");
}

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

void StopNotices::OnStopped(std::string_view shard_id, shard::StopReason reason,
                            std::string_view message) {
  if (!shard::StoppedForGood(reason)) return;
  // The stopped shard stays listed (for stopped_retention_us) with its kind.
  std::optional<shard::ShardInfo> info = host_.Get(shard_id);
  if (!info) return;
  std::shared_ptr<const shard::KindEntry> kind = kinds_.Find(info->kind);
  if (kind == nullptr || !IsStopUrl(kind->config.on_stop)) return;
  notifier_.Enqueue(kind->config.on_stop,
                    StopNoticeBody(shard_id, info->kind, reason, message));
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

void StopLog::OnStopped(std::string_view shard_id, shard::StopReason reason,
                        std::string_view message) {
  if (metrics_ != nullptr) metrics_->OnStopped(reason, message);
  if (!log_) return;
  // The stopped shard stays listed (for its retention) with its kind.
  std::optional<shard::ShardInfo> info = host_.Get(shard_id);
  log_(StopLogLine(shard_id, info ? info->kind : "", reason, message));
}

}  // namespace tessera::server
