// How a bot gets its ticket: by a join request to the app (or the dev
// server's POST /api/dev/join), from the app's join function (a guest
// sign-in, POST /api/auth/guest, then POST /api/functions/<name> with the
// guest's token), or minted locally with the shard secret. Pure functions.
#ifndef TESSERA_LOADTEST_JOIN_H_
#define TESSERA_LOADTEST_JOIN_H_

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
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

// --- join functions (tessera bench shard --join <function>)

// Whether a --join value names a join function: it starts with neither
// "/" (a path on --url) nor "http" (a URL).
bool IsJoinFunction(std::string_view join);

inline constexpr char kGuestSignInPath[] = "/api/auth/guest";

// "/api/functions/<function>", the name percent-encoded.
std::string FunctionPath(std::string_view function);

// The body of the function call: {"params": args} (null args: {}).
std::string FunctionRequestBody(const nlohmann::json& args);

struct GuestReply {
  std::string user_id;
  std::string token;
};
// The reply to a guest sign-in: 200 with {userId, token}. Errors as
// ParseJoinReply's.
Result<GuestReply> ParseGuestReply(int status, std::string_view body);

// The reply to the join function's call: 200 whose "resultJson" (the
// function's result) is {shardId, subscriberId, ticket}. Errors as
// ParseJoinReply's; kIo also for a result that is not JSON.
Result<JoinReply> ParseFunctionJoinReply(int status, std::string_view body);

// How long a 429 answer asks to wait before the next try: its Retry-After
// seconds (`headers` lower-cased), clamped to 1..60, 1 when absent or not
// a number; nullopt for any other status.
std::optional<int64_t> RetryAfterSecs(
    int status, const std::map<std::string, std::string>& headers);

// A ticket for `subscriber_id` on `shard_id` valid for `ttl_secs` from
// `wall_clock`'s now (docs/protocol.md "Tickets").
std::string MintBotTicket(std::string_view secret, const std::string& shard_id,
                          const std::string& subscriber_id, int64_t ttl_secs,
                          const WallClock& wall_clock = *RealWallClock::Get());

}  // namespace tessera::loadtest

#endif  // TESSERA_LOADTEST_JOIN_H_
