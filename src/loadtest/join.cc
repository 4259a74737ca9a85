#include "loadtest/join.h"

#include <algorithm>
#include <charconv>

#include "net/client/url.h"
#include "net/ticket.h"

namespace tessera::loadtest {

using json = nlohmann::json;

std::string BotSubscriberId(int64_t bot) {
  return "bot-" + std::to_string(bot);
}

std::string BotShardId(const JoinSpec& spec, int64_t bot) {
  if (spec.shards <= 1) return spec.shard;
  return spec.shard + "-" + std::to_string(bot % spec.shards);
}

std::string JoinRequestBody(const JoinSpec& spec, int64_t bot) {
  json body = {{"shard", BotShardId(spec, bot)}};
  if (!spec.kind.empty()) body["kind"] = spec.kind;
  if (!spec.params.is_null()) body["params"] = spec.params;
  body["subscriber"] = BotSubscriberId(bot);
  if (spec.extra.is_object()) {
    for (auto it = spec.extra.begin(); it != spec.extra.end(); ++it) {
      body[it.key()] = it.value();
    }
  }
  return body.dump();
}

namespace {

// A reply of another status than 200: "HTTP <status>: <message>", the
// message from an {"code", "message"} body when there is one.
Status HttpError(int status, std::string_view body) {
  const json reply = json::parse(body, nullptr, /*allow_exceptions=*/false);
  std::string message;
  if (reply.is_object() && reply.contains("message") &&
      reply["message"].is_string()) {
    message = reply["message"].get<std::string>();
  } else {
    message = std::string(body.substr(0, 200));
  }
  return Refused("HTTP " + std::to_string(status) +
                 (message.empty() ? "" : ": " + message));
}

std::string StringField(const json& object, const char* name) {
  if (!object.is_object()) return "";
  auto it = object.find(name);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

Result<JoinReply> JoinFields(const json& reply, std::string_view what) {
  JoinReply out{StringField(reply, "shardId"),
                StringField(reply, "subscriberId"),
                StringField(reply, "ticket")};
  if (out.shard_id.empty() || out.ticket.empty()) {
    return IoError(std::string(what) +
                   " lacks shardId or ticket (expected {shardId, "
                   "subscriberId, ticket})");
  }
  return out;
}

}  // namespace

Result<JoinReply> ParseJoinReply(int status, std::string_view body) {
  if (status != 200) return HttpError(status, body);
  return JoinFields(json::parse(body, nullptr, /*allow_exceptions=*/false),
                    "the join reply");
}

bool IsJoinFunction(std::string_view join) {
  return !join.empty() && !join.starts_with("/") && !join.starts_with("http");
}

std::string FunctionPath(std::string_view function) {
  return "/api/functions/" + net::client::PercentEncode(function);
}

std::string FunctionRequestBody(const json& args) {
  return json{{"params", args.is_null() ? json::object() : args}}.dump();
}

Result<GuestReply> ParseGuestReply(int status, std::string_view body) {
  if (status != 200) return HttpError(status, body);
  const json reply = json::parse(body, nullptr, /*allow_exceptions=*/false);
  GuestReply out{StringField(reply, "userId"), StringField(reply, "token")};
  if (out.token.empty()) {
    return IoError(
        "the guest sign-in reply lacks the token (expected {userId, token, "
        "expires})");
  }
  return out;
}

Result<JoinReply> ParseFunctionJoinReply(int status, std::string_view body) {
  if (status != 200) return HttpError(status, body);
  const json reply = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!reply.is_object() || !reply.contains("resultJson")) {
    return IoError(
        "the join function's reply has no JSON result (expected "
        "{\"resultJson\": {shardId, subscriberId, ticket}})");
  }
  return JoinFields(reply["resultJson"], "the join function's result");
}

std::optional<int64_t> RetryAfterSecs(
    int status, const std::map<std::string, std::string>& headers) {
  if (status != 429) return std::nullopt;
  int64_t secs = 1;
  if (auto it = headers.find("retry-after"); it != headers.end()) {
    const std::string& v = it->second;
    int64_t parsed = 0;
    auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), parsed);
    if (ec == std::errc() && end == v.data() + v.size()) secs = parsed;
  }
  return std::clamp<int64_t>(secs, 1, 60);
}

std::string MintBotTicket(std::string_view secret, const std::string& shard_id,
                          const std::string& subscriber_id, int64_t ttl_secs,
                          const WallClock& wall_clock) {
  net::Ticket ticket;
  ticket.resource_id = shard_id;
  ticket.subscriber_id = subscriber_id;
  ticket.expires_unix = wall_clock.UnixNowSecs() + ttl_secs;
  return net::MintTicket(secret, ticket);
}

}  // namespace tessera::loadtest
