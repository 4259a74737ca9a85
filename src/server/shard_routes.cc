// The admin API's shard routes, moves and messages, and the dev join (see
// api_handler.h).
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "net/base64url.h"
#include "net/ticket.h"
#include "server/api_handler.h"
#include "server/codec_json.h"
#include "server/http_json.h"
#include "server/random_token.h"
#include "server/request_target.h"
#include "server/shard_json.h"
#include "server/transfer_wait.h"

namespace tessera::server {

using json = nlohmann::json;
using net::HttpResponse;

namespace {

constexpr char kStoppedByOperator[] = "stopped: by an operator";
constexpr char kKickedByOperator[] = "kicked by an operator";

HttpResponse BadField(const std::string& message) {
  return ErrorResponse(400, "invalid_argument", message);
}

HttpResponse UnknownShard(const std::string& id) {
  return ErrorResponse(404, "not_found", "no shard \"" + id + "\"");
}

HttpResponse UnknownKind(const std::string& kind) {
  return ErrorResponse(404, "unknown_kind",
                       "unknown shard kind \"" + kind + "\"");
}

// A string member: nullopt with `error` set when it is present but not a
// string, or missing while `required`; "" when absent and optional.
std::optional<std::string> StringField(const json& body, const char* name,
                                       bool required, HttpResponse* error) {
  auto it = body.find(name);
  if (it == body.end() || it->is_null()) {
    if (!required) return std::string();
    *error = BadField(std::string("\"") + name + "\" is required");
    return std::nullopt;
  }
  if (!it->is_string()) {
    *error = BadField(std::string("\"") + name + "\" must be a string");
    return std::nullopt;
  }
  return it->get<std::string>();
}

std::optional<std::string> ShardIdField(const json& body, const char* name,
                                        HttpResponse* error) {
  std::optional<std::string> id = StringField(body, name, true, error);
  if (id && !IsValidShardId(*id)) {
    *error = BadField(std::string("\"") + name +
                      "\" must be 1-128 characters of A-Z a-z 0-9 . _ : -");
    return std::nullopt;
  }
  return id;
}

std::optional<std::string> SubscriberField(const json& body, bool required,
                                           HttpResponse* error) {
  std::optional<std::string> sub =
      StringField(body, "subscriber", required, error);
  if (sub && (required || !sub->empty()) && !IsValidSubscriberId(*sub)) {
    *error = BadField(
        "\"subscriber\" must be 1-128 characters without control "
        "characters");
    return std::nullopt;
  }
  return sub;
}

// The optional "claims" member: a JSON object, as compact JSON text ("{}"
// when absent); nullopt with `error` set otherwise.
std::optional<std::string> ClaimsField(const json& body, HttpResponse* error) {
  auto it = body.find("claims");
  if (it == body.end() || it->is_null()) return std::string("{}");
  if (!it->is_object()) {
    *error = BadField("\"claims\" must be a JSON object");
    return std::nullopt;
  }
  return it->dump(-1, ' ', false, json::error_handler_t::replace);
}

// `error` (an ErrorResponse) with another code.
HttpResponse WithCode(HttpResponse error, std::string_view code) {
  json body = json::parse(error.body, nullptr, false);
  return ErrorResponse(error.status, code,
                       body.is_object() ? body.value("message", "") : "");
}

// The HTTP status of a move that did not happen (its code is the error's
// name, shard::TransferErrorCode).
int TransferStatus(shard::TransferError error) {
  switch (error) {
    case shard::TransferError::kRefused:
    case shard::TransferError::kBusy:
      return 409;
    case shard::TransferError::kNotFound:
    case shard::TransferError::kNoPlayer:
      return 404;
    case shard::TransferError::kUnsupported:
    case shard::TransferError::kInvalid:
      return 400;
    case shard::TransferError::kNone:
    case shard::TransferError::kFailed:
      break;
  }
  return 500;
}

// A message's target: "all", {"shard": id} or {"group": name}.
std::optional<shard::MessageTarget> TargetField(const json& body,
                                                HttpResponse* error) {
  auto it = body.find("to");
  if (it != body.end()) {
    if (it->is_string() && *it == "all") {
      return shard::MessageTarget{shard::TargetKind::kAll, ""};
    }
    if (it->is_object() && it->size() == 1) {
      for (const auto& [key, kind] :
           {std::pair{"shard", shard::TargetKind::kShard},
            std::pair{"group", shard::TargetKind::kGroup}}) {
        auto name = it->find(key);
        if (name != it->end() && name->is_string() &&
            !name->get_ref<const std::string&>().empty()) {
          return shard::MessageTarget{kind, name->get<std::string>()};
        }
      }
    }
  }
  *error =
      BadField("\"to\" must be \"all\", {\"shard\": id} or {\"group\": name}");
  return std::nullopt;
}

// A message's bytes: "data" (a JSON string as its UTF-8 bytes, any other
// value as compact JSON text) or "data_base64" (binary); "" when neither.
std::optional<std::string> DataField(const json& body, HttpResponse* error) {
  auto data = body.find("data");
  auto base64 = body.find("data_base64");
  if (data != body.end() && base64 != body.end()) {
    *error = BadField("give \"data\" or \"data_base64\", not both");
    return std::nullopt;
  }
  if (base64 != body.end()) {
    std::optional<std::string> bytes;
    if (base64->is_string()) {
      bytes = net::Base64Decode(base64->get_ref<const std::string&>());
    }
    if (!bytes) *error = BadField("\"data_base64\" must be base64 text");
    return bytes;
  }
  if (data == body.end()) return std::string();
  if (data->is_string()) return data->get<std::string>();
  return data->dump(-1, ' ', false, json::error_handler_t::replace);
}

// Errors of shard creation: capacity is 503, the rest as HttpStatusFor.
HttpResponse CreateError(const Status& status) {
  if (status.code() == StatusCode::kResourceExhausted) {
    return ErrorResponse(503, "capacity", status.message());
  }
  return ErrorFromStatus(status);
}

}  // namespace

HttpResponse ApiHandler::ListShards() {
  std::set<std::string, std::less<>> failed_ids;
  json list = json::array();
  std::vector<store::ShardRecord> failed = directory_->FailedRecords();
  for (const store::ShardRecord& r : failed) failed_ids.insert(r.id);
  for (const shard::ShardInfo& info : directory_->host()->List()) {
    list.push_back(SummaryJson(info, failed_ids.erase(info.id) > 0));
  }
  for (const store::ShardRecord& r : failed) {
    if (failed_ids.contains(r.id)) list.push_back(SummaryJson(r));
  }
  return JsonResponse(200, list);
}

HttpResponse ApiHandler::CreateShard(const json& body) {
  HttpResponse error;
  std::optional<std::string> kind = StringField(body, "kind", true, &error);
  if (!kind) return error;
  std::optional<std::string> id = ShardIdField(body, "id", &error);
  if (!id) return error;
  std::shared_ptr<const shard::KindEntry> entry =
      directory_->kinds()->Find(*kind);
  if (entry == nullptr) return UnknownKind(*kind);
  auto params = body.find("params");
  Status created =
      directory_->Create(*kind, *id,
                         EncodeParams(params == body.end() ? nullptr : &*params,
                                      entry->config.codec));
  if (!created.ok()) return CreateError(created);
  std::optional<shard::ShardInfo> info = directory_->host()->Get(*id);
  if (!info) return UnknownShard(*id);  // stopped and removed already
  return JsonResponse(201, SummaryJson(*info, false));
}

HttpResponse ApiHandler::GetShard(const std::string& id) {
  std::optional<shard::ShardInfo> info = directory_->host()->Get(id);
  std::optional<store::ShardRecord> failed = directory_->FailedRecord(id);
  if (!info && !failed) return UnknownShard(id);
  const std::string& kind = info ? info->kind : failed->kind;
  std::shared_ptr<const shard::KindEntry> entry =
      directory_->kinds()->Find(kind);
  std::vector<std::string> subscriber_ids;
  if (connections_ != nullptr) subscriber_ids = connections_->Subscribers(id);
  return JsonResponse(200,
                      DetailJson(info, failed, entry ? &entry->config : nullptr,
                                 subscriber_ids));
}

HttpResponse ApiHandler::ShardLog(const std::string& id) {
  std::optional<std::vector<guest::LogLine>> lines =
      directory_->host()->RecentLog(id);
  if (!lines && !directory_->FailedRecord(id)) return UnknownShard(id);
  json out = json::array();
  if (lines) {
    for (const guest::LogLine& line : *lines) {
      out.push_back(json{{"level", line.level}, {"text", line.text}});
    }
  }
  return JsonResponse(200, json{{"lines", std::move(out)}});
}

HttpResponse ApiHandler::Kick(const std::string& id, const json& body) {
  HttpResponse error;
  std::optional<std::string> subscriber = SubscriberField(body, true, &error);
  if (!subscriber) return error;
  if (!Knows(id)) return UnknownShard(id);
  size_t closed = 0;
  if (connections_ != nullptr) {
    closed = connections_->CloseSubscriber(id, *subscriber, net::kCloseKicked,
                                           kKickedByOperator);
  }
  return JsonResponse(200, json{{"closed", closed}});
}

HttpResponse ApiHandler::StopShard(const std::string& id) {
  Status stopped = directory_->Stop(id);
  if (!stopped.ok()) return ErrorFromStatus(stopped);
  size_t closed = 0;
  if (connections_ != nullptr) {
    closed = connections_->CloseShard(id, net::kCloseShardStopped,
                                      kStoppedByOperator);
  }
  return JsonResponse(200,
                      json{{"id", id}, {"stopped", true}, {"closed", closed}});
}

HttpResponse ApiHandler::MintTicket(const std::string& id, const json& body) {
  HttpResponse error;
  std::optional<std::string> subscriber = SubscriberField(body, true, &error);
  if (!subscriber) return error;
  int64_t ttl = net::kDefaultTicketLifetimeSecs;
  if (auto it = body.find("ttl_secs"); it != body.end() && !it->is_null()) {
    if (!it->is_number_integer() || it->get<int64_t>() < 1 ||
        it->get<int64_t>() > options_.max_ticket_ttl_secs) {
      return BadField("\"ttl_secs\" must be an integer from 1 to " +
                      std::to_string(options_.max_ticket_ttl_secs));
    }
    ttl = it->get<int64_t>();
  }
  std::optional<std::string> claims = ClaimsField(body, &error);
  if (!claims) return error;
  if (!Knows(id)) return UnknownShard(id);
  net::Ticket ticket;
  ticket.resource_id = id;
  ticket.subscriber_id = *subscriber;
  ticket.expires_unix = UnixNow() + ttl;
  ticket.claims_json = std::move(*claims);
  return JsonResponse(
      200, json{{"ticket",
                 net::MintTicket(options_.ticket_secret, ticket, &wall_clock_)},
                {"expires", ticket.expires_unix}});
}

HttpResponse ApiHandler::Transfer(const std::string& from, const json& body) {
  HttpResponse error;
  std::optional<std::string> subscriber = SubscriberField(body, true, &error);
  std::optional<std::string> to;
  std::optional<std::string> claims;
  if (subscriber) to = ShardIdField(body, "to", &error);
  if (to) claims = ClaimsField(body, &error);
  // This route's codes are the move's (TransferErrorCode), bad bodies too.
  if (!claims) return WithCode(std::move(error), "INVALID_ARGUMENT");
  auto wait = std::make_shared<TransferWait>();
  directory_->host()->Transfer(
      shard::ShardHost::TransferSpec{from, *subscriber, *to,
                                     std::move(*claims)},
      [wait](shard::TransferResult result) { wait->Done(std::move(result)); });
  std::optional<shard::TransferResult> result =
      wait->Wait(options_.transfer_timeout_ms);
  if (!result) {
    return ErrorResponse(504, "SHARD_TRANSFER_TIMEOUT",
                         "the move of \"" + *subscriber + "\" from \"" + from +
                             "\" to \"" + *to + "\" did not finish within " +
                             std::to_string(options_.transfer_timeout_ms) +
                             " ms; it may still finish");
  }
  if (result->ok())
    return JsonResponse(200, json{{"moved", true}, {"to", *to}});
  std::string message = result->message;
  if (message.empty()) {
    message = "the move of \"" + *subscriber + "\" from \"" + from +
              "\" to \"" + *to + "\" failed";
  }
  return ErrorResponse(TransferStatus(result->error),
                       shard::TransferErrorCode(result->error), message);
}

HttpResponse ApiHandler::Publish(const json& body) {
  HttpResponse error;
  std::optional<shard::MessageTarget> to = TargetField(body, &error);
  if (!to) return error;
  std::optional<std::string> topic = StringField(body, "topic", true, &error);
  if (!topic) return error;
  std::optional<std::string> data = DataField(body, &error);
  if (!data) return error;
  Result<shard::ShardHost::PublishResult> published =
      directory_->host()->Publish(*to, std::move(*topic), std::move(*data));
  if (!published.ok()) return ErrorFromStatus(published.status());
  return JsonResponse(200, json{{"delivered", published->delivered},
                                {"refused", published->refused}});
}

HttpResponse ApiHandler::SubmitInput(const std::string& id, const json& body) {
  auto input = body.find("input");
  if (input == body.end()) return BadField("\"input\" is required");
  std::optional<shard::ShardInfo> info = directory_->host()->Get(id);
  if (!info) return UnknownShard(id);
  std::shared_ptr<const shard::KindEntry> entry =
      directory_->kinds()->Find(info->kind);
  if (entry == nullptr) return UnknownKind(info->kind);
  const uint64_t seq = next_server_seq_.fetch_add(1);
  Status submitted = directory_->host()->SubmitInput(
      id, /*subscriber=*/"", seq, EncodeForCodec(*input, entry->config.codec));
  if (submitted.code() == StatusCode::kFailedPrecondition) {
    return ErrorResponse(409, "stopped", submitted.message());
  }
  if (submitted.code() == StatusCode::kResourceExhausted) {
    return ErrorResponse(429, "queue_full", submitted.message());
  }
  if (!submitted.ok()) return ErrorFromStatus(submitted);
  return JsonResponse(202, json{{"seq", seq}});
}

HttpResponse ApiHandler::DevJoin(const json& body) {
  // A misspelt field ("name" for "subscriber") must not quietly give a
  // random guest instead.
  static constexpr std::string_view kKnown[] = {"shard", "kind", "params",
                                                "subscriber", "claims"};
  for (const auto& [field, value] : body.items()) {
    if (std::find(std::begin(kKnown), std::end(kKnown), field) ==
        std::end(kKnown)) {
      return BadField("unknown field \"" + field +
                      "\" (known: shard, kind, params, subscriber, claims)");
    }
  }
  HttpResponse error;
  std::optional<std::string> id = ShardIdField(body, "shard", &error);
  if (!id) return error;
  std::optional<std::string> kind = StringField(body, "kind", false, &error);
  if (!kind) return error;
  std::optional<std::string> subscriber = SubscriberField(body, false, &error);
  if (!subscriber) return error;
  std::string claims = "{}";
  if (auto it = body.find("claims"); it != body.end() && !it->is_null()) {
    if (!it->is_object()) return BadField("\"claims\" must be a JSON object");
    claims = it->dump(-1, ' ', false, json::error_handler_t::replace);
  }

  shard::ShardHost* host = directory_->host();
  std::optional<shard::ShardInfo> info = host->Get(*id);
  if (!info || info->status == shard::ShardStatus::kStopped) {
    if (kind->empty()) {
      return BadField("\"kind\" is required to create shard \"" + *id + "\"");
    }
    std::shared_ptr<const shard::KindEntry> entry =
        directory_->kinds()->Find(*kind);
    if (entry == nullptr) return UnknownKind(*kind);
    auto params = body.find("params");
    Status created = directory_->Create(
        *kind, *id,
        EncodeParams(params == body.end() ? nullptr : &*params,
                     entry->config.codec));
    // Another join may have created it meanwhile: then join that one.
    info = host->Get(*id);
    if (!created.ok() &&
        !(created.code() == StatusCode::kAlreadyExists && info &&
          info->status != shard::ShardStatus::kStopped)) {
      return CreateError(created);
    }
  }
  if (info && !kind->empty() && info->kind != *kind) {
    return ErrorResponse(409, "kind_mismatch",
                         "shard \"" + *id + "\" is of kind \"" + info->kind +
                             "\", not \"" + *kind + "\"");
  }
  if (subscriber->empty()) {
    Result<std::string> suffix = RandomHex(4);
    if (!suffix.ok()) return ErrorFromStatus(suffix.status());
    *subscriber = "guest-" + *suffix;
  }
  net::Ticket ticket;
  ticket.resource_id = *id;
  ticket.subscriber_id = *subscriber;
  ticket.expires_unix = UnixNow() + net::kDefaultTicketLifetimeSecs;
  ticket.claims_json = std::move(claims);
  return JsonResponse(
      200, json{{"shardId", *id},
                {"subscriberId", *subscriber},
                {"ticket", net::MintTicket(options_.ticket_secret, ticket,
                                           &wall_clock_)}});
}

}  // namespace tessera::server
