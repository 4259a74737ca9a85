#include "loadtest/join.h"

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

Result<JoinReply> ParseJoinReply(int status, std::string_view body) {
  const json reply = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (status != 200) {
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
  auto field = [&](const char* name) -> std::string {
    if (!reply.is_object()) return "";
    auto it = reply.find(name);
    return it != reply.end() && it->is_string() ? it->get<std::string>() : "";
  };
  JoinReply out{field("shardId"), field("subscriberId"), field("ticket")};
  if (out.shard_id.empty() || out.ticket.empty()) {
    return IoError(
        "the join reply lacks shardId or ticket (expected {shardId, "
        "subscriberId, ticket})");
  }
  return out;
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
