// How a bot gets its ticket: by a join request to the app (or the dev
// server's POST /api/dev/join), or minted locally with the shard secret.
// Pure functions.
#ifndef TESSERA_LOADTEST_JOIN_H_
#define TESSERA_LOADTEST_JOIN_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/status.h"

namespace tessera::loadtest {

struct JoinSpec {
  std::string shard;      // the shard id, or the prefix with shards > 1
  int64_t shards = 1;     // bot n goes to "<shard>-<n % shards>" when > 1
  std::string kind;       // posted when not empty
  nlohmann::json params;  // posted when not null
  nlohmann::json extra;   // an object: its members are merged into the body
};

// "bot-<n>".
std::string BotSubscriberId(int64_t bot);
// The shard of bot `bot`.
std::string BotShardId(const JoinSpec& spec, int64_t bot);

// {"shard": ..., "kind"?: ..., "params"?: ..., "subscriber": "bot-<n>"},
// then the members of `extra` (--join-args), which replace those keys.
std::string JoinRequestBody(const JoinSpec& spec, int64_t bot);

struct JoinReply {
  std::string shard_id;
  std::string subscriber_id;
  std::string ticket;
};
// The reply to a join request: 200 with {shardId, subscriberId, ticket}.
// Errors: kRefused "HTTP <status>: <message>" for another status (the
// message from an {"code", "message"} body when there is one), kIo for a
// 200 whose body lacks the fields.
Result<JoinReply> ParseJoinReply(int status, std::string_view body);

// A ticket for `subscriber_id` on `shard_id` valid for `ttl_secs` from
// `wall_clock`'s now (docs/protocol.md "Tickets").
std::string MintBotTicket(std::string_view secret, const std::string& shard_id,
                          const std::string& subscriber_id, int64_t ttl_secs,
                          const WallClock& wall_clock = *RealWallClock::Get());

}  // namespace tessera::loadtest

#endif  // TESSERA_LOADTEST_JOIN_H_
