// Join request bodies, replies and minted tickets (join.h).
#include "loadtest/join.h"

#include <gtest/gtest.h>

#include "net/ticket.h"

namespace tessera::loadtest {
namespace {

TEST(JoinTest, RequestBodies) {
  JoinSpec spec;
  spec.shard = "arena-1";
  EXPECT_EQ(JoinRequestBody(spec, 3),
            R"({"shard":"arena-1","subscriber":"bot-3"})");
  spec.kind = "arena";
  spec.params = {{"width", 800}};
  spec.shards = 4;
  EXPECT_EQ(BotShardId(spec, 6), "arena-1-2");
  const nlohmann::json body = nlohmann::json::parse(JoinRequestBody(spec, 6));
  EXPECT_EQ(body, nlohmann::json::parse(
                      R"({"shard":"arena-1-2","kind":"arena",)"
                      R"("params":{"width":800},"subscriber":"bot-6"})"));
  // --join-args: merged in, replacing what they name.
  spec.extra = {{"history", 10}, {"params", {{"history", 0}}}};
  EXPECT_EQ(nlohmann::json::parse(JoinRequestBody(spec, 6)),
            nlohmann::json::parse(
                R"({"shard":"arena-1-2","kind":"arena","history":10,)"
                R"("params":{"history":0},"subscriber":"bot-6"})"));
}

TEST(JoinTest, Replies) {
  Result<JoinReply> ok = ParseJoinReply(
      200, R"({"shardId":"s","subscriberId":"bot-1","ticket":"v1.x.y"})");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->shard_id, "s");
  EXPECT_EQ(ok->subscriber_id, "bot-1");
  EXPECT_EQ(ok->ticket, "v1.x.y");

  Result<JoinReply> refused = ParseJoinReply(
      404, R"({"code":"unknown_kind","message":"no kind \"x\""})");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(), "HTTP 404: no kind \"x\"");
  EXPECT_EQ(ParseJoinReply(502, "Bad Gateway").status().message(),
            "HTTP 502: Bad Gateway");
  EXPECT_FALSE(ParseJoinReply(200, R"({"shardId":"s"})").ok());
  EXPECT_FALSE(ParseJoinReply(200, "not json").ok());
}

TEST(JoinTest, JoinFunctionsAreNamesNotPathsOrUrls) {
  EXPECT_TRUE(IsJoinFunction("joinArena"));
  EXPECT_TRUE(IsJoinFunction("arena.join"));
  EXPECT_FALSE(IsJoinFunction("/api/dev/join"));
  EXPECT_FALSE(IsJoinFunction("http://127.0.0.1:4321/join"));
  EXPECT_FALSE(IsJoinFunction("https://game.example/join"));
  EXPECT_FALSE(IsJoinFunction(""));
  EXPECT_EQ(FunctionPath("arena.join"), "/api/functions/arena.join");
  EXPECT_EQ(FunctionPath("a b/c"), "/api/functions/a%20b%2Fc");
  // --join-args are the function's params; none: {}.
  EXPECT_EQ(FunctionRequestBody(nullptr), R"({"params":{}})");
  EXPECT_EQ(FunctionRequestBody({{"history", 10}}),
            R"({"params":{"history":10}})");
}

TEST(JoinTest, GuestAndFunctionReplies) {
  Result<GuestReply> guest = ParseGuestReply(
      200, R"({"userId":"guest-00ff","token":"v1.a.b","expires":9})");
  ASSERT_TRUE(guest.ok());
  EXPECT_EQ(guest->user_id, "guest-00ff");
  EXPECT_EQ(guest->token, "v1.a.b");
  EXPECT_EQ(ParseGuestReply(404, R"({"code":"not_found","message":"no route"})")
                .status()
                .message(),
            "HTTP 404: no route");
  EXPECT_EQ(ParseGuestReply(200, R"({"userId":"g"})").status().code(),
            StatusCode::kIo);

  // The invoke reply: the function's result is in resultJson.
  Result<JoinReply> join = ParseFunctionJoinReply(
      200, R"({"resultJson":{"shardId":"zone-1","subscriberId":"guest-1",)"
           R"("ticket":"v1.t"},"fuelUsed":10,"durationUs":3,"flowId":"f"})");
  ASSERT_TRUE(join.ok()) << join.status().message();
  EXPECT_EQ(join->shard_id, "zone-1");
  EXPECT_EQ(join->subscriber_id, "guest-1");
  EXPECT_EQ(join->ticket, "v1.t");
  // The function's refusal is told as the server words it.
  EXPECT_EQ(
      ParseFunctionJoinReply(422, R"({"code":"TRAP","message":"zone is full"})")
          .status()
          .message(),
      "HTTP 422: zone is full");
  // A result that is not JSON, or not the join shape.
  Result<JoinReply> bytes =
      ParseFunctionJoinReply(200, R"({"resultBase64":"AP8B"})");
  EXPECT_EQ(bytes.status().code(), StatusCode::kIo);
  EXPECT_NE(bytes.status().message().find("no JSON result"), std::string::npos);
  Result<JoinReply> shape =
      ParseFunctionJoinReply(200, R"({"resultJson":{"shardId":"z"}})");
  EXPECT_EQ(shape.status().message(),
            "the join function's result lacks shardId or ticket (expected "
            "{shardId, subscriberId, ticket})");
}

TEST(JoinTest, RetryAfterOnlyFor429) {
  EXPECT_EQ(RetryAfterSecs(200, {{"retry-after", "5"}}), std::nullopt);
  EXPECT_EQ(RetryAfterSecs(429, {{"retry-after", "5"}}), 5);
  EXPECT_EQ(RetryAfterSecs(429, {}), 1);
  EXPECT_EQ(RetryAfterSecs(429, {{"retry-after", "soon"}}), 1);
  EXPECT_EQ(RetryAfterSecs(429, {{"retry-after", "0"}}), 1);
  EXPECT_EQ(RetryAfterSecs(429, {{"retry-after", "3600"}}), 60);
}

TEST(JoinTest, MintedTicketsVerify) {
  const FakeWallClock wall_clock(1'800'000'000'000'000);
  const int64_t now = 1'800'000'000;
  const std::string ticket =
      MintBotTicket("secret", "arena-1", "bot-9", 60, wall_clock);
  net::TicketCheck check = net::VerifyTicket("secret", ticket, "arena-1", now);
  EXPECT_EQ(check.error, net::TicketError::kNone) << check.message;
  EXPECT_EQ(check.ticket.subscriber_id, "bot-9");
  EXPECT_EQ(check.ticket.expires_unix, now + 60);
  EXPECT_EQ(net::VerifyTicket("other", ticket, "arena-1", now).error,
            net::TicketError::kInvalid);
  EXPECT_EQ(net::VerifyTicket("secret", ticket, "arena-1", now + 61).error,
            net::TicketError::kExpired);
}

}  // namespace
}  // namespace tessera::loadtest
