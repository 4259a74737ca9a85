#include "server/compute_shards.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <utility>

#include "net/ticket.h"
#include "server/codec_json.h"
#include "server/request_target.h"
#include "server/transfer_wait.h"

namespace tessera::server {

using json = nlohmann::json;

namespace {

constexpr int64_t kMaxTicketTtlSecs = 86'400;
constexpr char kStoppedByFunction[] = "stopped: by the app";

Status Coded(StatusCode code, std::string_view name, const std::string& text) {
  return Status(code, std::string(name) + ": " + text);
}
Status BadRequest(const std::string& text) {
  return Coded(StatusCode::kInvalidArgument, "BAD_REQUEST", text);
}
Status NoShard(std::string_view id) {
  return Coded(StatusCode::kNotFound, "SHARD_NOT_FOUND",
               "no shard \"" + std::string(id) + "\"");
}
Status ShuttingDown() {
  return Coded(StatusCode::kUnavailable, "UNAVAILABLE",
               "the server is shutting down");
}

Status ValidShardId(std::string_view id, const char* what) {
  if (IsValidShardId(id)) return Status::Ok();
  return BadRequest(std::string(what) +
                    " must be 1-128 characters of A-Z a-z 0-9 . _ : -");
}

// Parses optional JSON text ("" = absent).
std::optional<json> ParseJson(std::string_view text) {
  if (text.empty()) return json(nullptr);
  json v = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (v.is_discarded()) return std::nullopt;
  return v;
}

}  // namespace

ComputeShards::ComputeShards(ShardDirectory& directory,
                             net::Connections* connections,
                             ComputeShardsOptions options)
    : directory_(directory),
      connections_(connections),
      options_(std::move(options)),
      wall_clock_(options_.wall_clock != nullptr ? *options_.wall_clock
                                                 : *RealWallClock::Get()) {}

compute::ShardView ComputeShards::View(const shard::ShardInfo& info) const {
  compute::ShardView v;
  v.id = info.id;
  v.kind = info.kind;
  if (info.status == shard::ShardStatus::kStopped) {
    v.status =
        info.stop_reason == shard::StopReason::kFailed ? "failed" : "stopped";
    v.stop_reason = shard::StopReasonName(info.stop_reason);
    v.error = info.stop_message.empty() ? info.last_error : info.stop_message;
  } else {
    v.status = shard::ShardStatusName(info.status);
  }
  v.tick = info.tick;
  v.subscribers = static_cast<int64_t>(info.subscribers);
  v.machine = options_.machine;
  return v;
}

Result<compute::ShardView> ComputeShards::Create(std::string_view kind,
                                                 std::string_view id,
                                                 std::string_view params_json,
                                                 std::string_view machine) {
  if (!machine.empty() && machine != options_.machine) {
    return Coded(StatusCode::kNotFound, "SHARD_MACHINE_UNKNOWN",
                 "no machine \"" + std::string(machine) +
                     "\" (this server is \"" + options_.machine + "\")");
  }
  TESSERA_RETURN_IF_ERROR(ValidShardId(id, "the shard id"));
  std::shared_ptr<const shard::KindEntry> entry =
      directory_.kinds()->Find(kind);
  if (entry == nullptr) {
    return Coded(StatusCode::kNotFound, "SHARD_KIND_UNKNOWN",
                 "unknown shard kind \"" + std::string(kind) + "\"");
  }
  std::optional<json> params = ParseJson(params_json);
  if (!params) return BadRequest("the params are not JSON");
  Status created =
      directory_.Create(kind, id,
                        EncodeParams(params->is_null() ? nullptr : &*params,
                                     entry->config.codec));
  if (!created.ok()) {
    switch (created.code()) {
      case StatusCode::kResourceExhausted:
        return Coded(created.code(), "SHARD_LIMIT", created.message());
      case StatusCode::kAlreadyExists:
        return Coded(created.code(), "SHARD_EXISTS", created.message());
      case StatusCode::kNotFound:
        return Coded(created.code(), "SHARD_KIND_UNKNOWN", created.message());
      case StatusCode::kFailedPrecondition:
        return ShuttingDown();
      case StatusCode::kIo:
        return Coded(StatusCode::kIo, "UNAVAILABLE", created.message());
      default:
        return Coded(StatusCode::kInvalidArgument, "SHARD_BAD_PARAMS",
                     created.message());
    }
  }
  std::optional<shard::ShardInfo> info = directory_.host()->Get(id);
  if (!info) return NoShard(id);  // stopped and forgotten already
  return View(*info);
}

Result<std::optional<compute::ShardView>> ComputeShards::Get(
    std::string_view id) {
  if (std::optional<shard::ShardInfo> info = directory_.host()->Get(id)) {
    return std::optional<compute::ShardView>(View(*info));
  }
  if (std::optional<store::ShardRecord> failed = directory_.FailedRecord(id)) {
    compute::ShardView v;
    v.id = failed->id;
    v.kind = failed->kind;
    v.status = "failed";
    v.stop_reason = "failed";
    v.error = failed->error;
    v.machine = options_.machine;
    return std::optional<compute::ShardView>(std::move(v));
  }
  return std::optional<compute::ShardView>();
}

Result<std::vector<compute::ShardView>> ComputeShards::List(
    std::string_view kind) {
  std::vector<compute::ShardView> out;
  for (const shard::ShardInfo& info : directory_.host()->List()) {
    if (kind.empty() || info.kind == kind) out.push_back(View(info));
  }
  for (const store::ShardRecord& r : directory_.FailedRecords()) {
    if (!kind.empty() && r.kind != kind) continue;
    if (std::any_of(out.begin(), out.end(),
                    [&](const compute::ShardView& v) { return v.id == r.id; }))
      continue;
    compute::ShardView v;
    v.id = r.id;
    v.kind = r.kind;
    v.status = "failed";
    v.stop_reason = "failed";
    v.error = r.error;
    v.machine = options_.machine;
    out.push_back(std::move(v));
  }
  std::sort(out.begin(), out.end(),
            [](const compute::ShardView& a, const compute::ShardView& b) {
              return a.id < b.id;
            });
  return out;
}

Result<std::string> ComputeShards::Ticket(std::string_view id,
                                          std::string_view subscriber,
                                          std::string_view claims_json,
                                          int64_t ttl_secs) {
  TESSERA_RETURN_IF_ERROR(ValidShardId(id, "the shard id"));
  if (subscriber.empty() || !IsValidSubscriberId(subscriber)) {
    return BadRequest(
        "the subscriber must be 1-128 characters without control "
        "characters");
  }
  std::optional<json> claims =
      ParseJson(claims_json.empty() ? std::string_view("{}") : claims_json);
  if (!claims || !claims->is_object()) {
    return BadRequest("the claims must be a JSON object");
  }
  if (ttl_secs < 1 || ttl_secs > kMaxTicketTtlSecs) {
    return BadRequest("ttlSecs must be from 1 to " +
                      std::to_string(kMaxTicketTtlSecs));
  }
  if (!directory_.host()->Get(id) && !directory_.FailedRecord(id)) {
    return NoShard(id);
  }
  net::Ticket ticket;
  ticket.resource_id = std::string(id);
  ticket.subscriber_id = std::string(subscriber);
  ticket.expires_unix = wall_clock_.UnixNowSecs() + ttl_secs;
  ticket.claims_json =
      claims->dump(-1, ' ', false, json::error_handler_t::replace);
  return net::MintTicket(options_.ticket_secret, ticket, &wall_clock_);
}

Status ComputeShards::Send(std::string_view id, std::string_view input_json) {
  std::optional<shard::ShardInfo> info = directory_.host()->Get(id);
  if (!info || info->status == shard::ShardStatus::kStopped) {
    return NoShard(id);
  }
  std::shared_ptr<const shard::KindEntry> entry =
      directory_.kinds()->Find(info->kind);
  if (entry == nullptr) {
    return Coded(StatusCode::kNotFound, "SHARD_KIND_UNKNOWN",
                 "unknown shard kind \"" + info->kind + "\"");
  }
  std::optional<json> input = ParseJson(input_json);
  if (!input) return BadRequest("the input is not JSON");
  Status submitted = directory_.host()->SubmitInput(
      id, /*subscriber=*/"", next_seq_.fetch_add(1),
      EncodeForCodec(*input, entry->config.codec));
  if (submitted.ok()) return submitted;
  switch (submitted.code()) {
    case StatusCode::kNotFound:
    case StatusCode::kFailedPrecondition:
      return NoShard(id);
    case StatusCode::kResourceExhausted:
      return Coded(
          submitted.code(), "SHARD_LIMIT",
          "the input queue of shard \"" + std::string(id) + "\" is full");
    default:
      return Coded(StatusCode::kUnavailable, "UNAVAILABLE",
                   submitted.message());
  }
}

Status ComputeShards::Publish(std::string_view target, std::string_view topic,
                              std::string_view data) {
  shard::MessageTarget to;
  if (target == "all") {
    to = shard::MessageTarget{shard::TargetKind::kAll, ""};
  } else if (target.starts_with("shard:") && target.size() > 6) {
    to = shard::MessageTarget{shard::TargetKind::kShard,
                              std::string(target.substr(6))};
  } else if (target.starts_with("group:") && target.size() > 6) {
    to = shard::MessageTarget{shard::TargetKind::kGroup,
                              std::string(target.substr(6))};
  } else {
    return BadRequest(
        "the target must be \"shard:<id>\", \"group:<name>\" or \"all\"");
  }
  Result<shard::ShardHost::PublishResult> published =
      directory_.host()->Publish(to, std::string(topic), std::string(data));
  if (published.ok()) return Status::Ok();
  if (published.status().code() == StatusCode::kInvalidArgument) {
    return BadRequest(published.status().message());
  }
  return ShuttingDown();
}

Status ComputeShards::Transfer(std::string_view from,
                               std::string_view subscriber, std::string_view to,
                               std::string_view claims_json) {
  TESSERA_RETURN_IF_ERROR(ValidShardId(from, "from"));
  TESSERA_RETURN_IF_ERROR(ValidShardId(to, "to"));
  if (subscriber.empty() || !IsValidSubscriberId(subscriber)) {
    return BadRequest(
        "the subscriber must be 1-128 characters without control "
        "characters");
  }
  std::optional<json> claims =
      ParseJson(claims_json.empty() ? std::string_view("{}") : claims_json);
  if (!claims || !claims->is_object()) {
    return BadRequest("the claims must be a JSON object");
  }
  auto wait = std::make_shared<TransferWait>();
  directory_.host()->Transfer(
      shard::ShardHost::TransferSpec{
          std::string(from), std::string(subscriber), std::string(to),
          claims->dump(-1, ' ', false, json::error_handler_t::replace)},
      [wait](shard::TransferResult result) { wait->Done(std::move(result)); });
  std::optional<shard::TransferResult> result =
      wait->Wait(options_.transfer_timeout_ms);
  const std::string what = "the move of \"" + std::string(subscriber) +
                           "\" from \"" + std::string(from) + "\" to \"" +
                           std::string(to) + "\"";
  if (!result) {
    return Coded(StatusCode::kDeadlineExceeded, "SHARD_TRANSFER_FAILED",
                 what + " did not finish within " +
                     std::to_string(options_.transfer_timeout_ms) +
                     " ms; it may still finish");
  }
  if (result->ok()) return Status::Ok();
  const std::string message =
      result->message.empty() ? what + " failed" : result->message;
  switch (result->error) {
    case shard::TransferError::kInvalid:
      return BadRequest(message);
    case shard::TransferError::kNotFound:
      return Coded(StatusCode::kNotFound, "SHARD_NOT_FOUND", message);
    case shard::TransferError::kNoPlayer:
      return Coded(StatusCode::kNotFound, "SHARD_TRANSFER_NO_PLAYER", message);
    case shard::TransferError::kRefused:
      return Coded(StatusCode::kRefused, "SHARD_TRANSFER_REFUSED", message);
    case shard::TransferError::kBusy:
      return Coded(StatusCode::kUnavailable, "SHARD_TRANSFER_BUSY", message);
    case shard::TransferError::kUnsupported:
      return Coded(StatusCode::kFailedPrecondition,
                   "SHARD_TRANSFER_UNSUPPORTED", message);
    default:
      return Coded(StatusCode::kInternal, "SHARD_TRANSFER_FAILED", message);
  }
}

Status ComputeShards::Stop(std::string_view id) {
  Status stopped = directory_.Stop(id);
  if (!stopped.ok()) {
    if (stopped.code() == StatusCode::kNotFound ||
        stopped.code() == StatusCode::kFailedPrecondition) {
      return NoShard(id);
    }
    return Coded(StatusCode::kUnavailable, "UNAVAILABLE", stopped.message());
  }
  if (connections_ != nullptr) {
    connections_->CloseShard(id, net::kCloseShardStopped, kStoppedByFunction);
  }
  return Status::Ok();
}

}  // namespace tessera::server
