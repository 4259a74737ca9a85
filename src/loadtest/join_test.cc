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
