// The modules' ShardsPort (compute_shards.h) over a real shard host and
// directory running the `calls` test guest: shards created, listed,
// ticketed, sent inputs as the server (the empty subscriber), stopped, and
// the structured codes of what it refuses.
#include "server/compute_shards.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "net/ticket.h"
#include "server/calls_test_fixture.h"
#include "server/shard_directory.h"

namespace tessera::server::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

class ComputeShardsTest : public CallsTest {
 protected:
  void SetUp() override {
    CallsTest::SetUp();
    if (HasFatalFailure()) return;
    DirectoryOptions directory;
    directory.capacity = 3;
    directory.log = [this](const std::string& line) { AddLog(line); };
    directory_ = std::make_unique<ShardDirectory>(host_.get(), &kinds_, nullptr,
                                                  directory);
    ComputeShardsOptions options;
    options.ticket_secret = "secret";
    options.wall_clock = &wall_;
    options.transfer_timeout_ms = 200;
    port_ = std::make_unique<ComputeShards>(*directory_, nullptr, options);
  }
  void TearDown() override {
    port_.reset();
    CallsTest::TearDown();
  }

  std::unique_ptr<ShardDirectory> directory_;
  std::unique_ptr<ComputeShards> port_;
};

TEST_F(ComputeShardsTest, CreateGetListAndStop) {
  Result<compute::ShardView> made = port_->Create("calls", "z1", "", "");
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  EXPECT_EQ(made->id, "z1");
  EXPECT_EQ(made->kind, "calls");
  EXPECT_EQ(made->machine, "local");
  ASSERT_TRUE(
      port_->Create("quiet", "a0", R"({"no_calls":true})", "local").ok());
  Result<std::vector<compute::ShardView>> all = port_->List("");
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].id, "a0");  // by id
  EXPECT_EQ((*all)[1].id, "z1");
  Result<std::vector<compute::ShardView>> calls = port_->List("calls");
  ASSERT_TRUE(calls.ok());
  ASSERT_EQ(calls->size(), 1u);

  Result<std::optional<compute::ShardView>> got = port_->Get("z1");
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->status, "running");
  Result<std::optional<compute::ShardView>> none = port_->Get("nope");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());

  ASSERT_TRUE(port_->Stop("z1").ok());
  Step();
  got = port_->Get("z1");
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->status, "stopped");
  EXPECT_EQ((*got)->stop_reason, "stopped");
  Status again = port_->Stop("z1");
  EXPECT_THAT(again.message(), StartsWith("SHARD_NOT_FOUND: "));
}

TEST_F(ComputeShardsTest, CreateRefusalsHaveCodes) {
  ASSERT_TRUE(port_->Create("calls", "z1", "", "").ok());
  auto code = [&](std::string_view kind, std::string_view id,
                  std::string_view params, std::string_view machine) {
    Result<compute::ShardView> r = port_->Create(kind, id, params, machine);
    EXPECT_FALSE(r.ok());
    return r.ok() ? std::string() : r.status().message();
  };
  EXPECT_THAT(code("calls", "z1", "", ""), StartsWith("SHARD_EXISTS: "));
  EXPECT_THAT(code("nope", "z2", "", ""), StartsWith("SHARD_KIND_UNKNOWN: "));
  EXPECT_THAT(code("calls", "z2", "", "m2"),
              StartsWith("SHARD_MACHINE_UNKNOWN: "));
  EXPECT_THAT(code("calls", "bad id!", "", ""), StartsWith("BAD_REQUEST: "));
  EXPECT_THAT(code("calls", "z2", "{nope", ""), StartsWith("BAD_REQUEST: "));
  // The guest's init refuses params that do not decode.
  EXPECT_THAT(code("calls", "z3", R"({"no_calls":"yes"})", ""),
              StartsWith("SHARD_BAD_PARAMS: "));
  ASSERT_TRUE(port_->Create("calls", "z4", "", "").ok());
  ASSERT_TRUE(port_->Create("calls", "z5", "", "").ok());
  EXPECT_THAT(code("calls", "z6", "", ""), StartsWith("SHARD_LIMIT: "));
}

TEST_F(ComputeShardsTest, SendArrivesFromTheEmptySubscriber) {
  ASSERT_TRUE(port_->Create("calls", "z1", "", "").ok());
  // Refusals first: the finish input below stops the shard.
  EXPECT_THAT(port_->Send("nope", "{}").message(),
              StartsWith("SHARD_NOT_FOUND: "));
  EXPECT_THAT(port_->Send("z1", "{x").message(), StartsWith("BAD_REQUEST: "));
  ASSERT_TRUE(port_->Send("z1", R"({"finish":{}})").ok());
  Step();
  json snapshot = sink_.Last("z1");
  ASSERT_TRUE(snapshot.is_object()) << snapshot;
  std::vector<std::string> events =
      snapshot.value("events", std::vector<std::string>{});
  EXPECT_NE(std::find(events.begin(), events.end(), "input::finish"),
            events.end())
      << snapshot.dump();
}

TEST_F(ComputeShardsTest, TicketsAreSignedForTheShard) {
  ASSERT_TRUE(port_->Create("calls", "z1", "", "").ok());
  Result<std::string> ticket =
      port_->Ticket("z1", "alice", R"({"party":"red"})", 60);
  ASSERT_TRUE(ticket.ok()) << ticket.status().ToString();
  net::TicketCheck check =
      net::VerifyTicket("secret", *ticket, "z1", wall_.UnixNowSecs());
  ASSERT_EQ(check.error, net::TicketError::kNone) << check.message;
  EXPECT_EQ(check.ticket.subscriber_id, "alice");
  EXPECT_EQ(json::parse(check.ticket.claims_json), json({{"party", "red"}}));
  EXPECT_EQ(check.ticket.expires_unix, wall_.UnixNowSecs() + 60);
  EXPECT_THAT(port_->Ticket("z1", "", "{}", 60).status().message(),
              StartsWith("BAD_REQUEST: "));
  EXPECT_THAT(port_->Ticket("z1", "a", "[]", 60).status().message(),
              StartsWith("BAD_REQUEST: "));
  EXPECT_THAT(port_->Ticket("z1", "a", "{}", 0).status().message(),
              StartsWith("BAD_REQUEST: "));
  EXPECT_THAT(port_->Ticket("zz", "a", "{}", 60).status().message(),
              StartsWith("SHARD_NOT_FOUND: "));
}

TEST_F(ComputeShardsTest, PublishAndTransferRefusals) {
  ASSERT_TRUE(port_->Create("calls", "z1", "", "").ok());
  EXPECT_TRUE(port_->Publish("shard:z1", "t", "d").ok());
  EXPECT_TRUE(port_->Publish("all", "t", "d").ok());
  EXPECT_THAT(port_->Publish("everyone", "t", "d").message(),
              StartsWith("BAD_REQUEST: "));
  EXPECT_THAT(port_->Transfer("z1", "alice", "z1", "{}").message(),
              StartsWith("BAD_REQUEST: "));
  EXPECT_THAT(port_->Transfer("nope", "alice", "z1", "{}").message(),
              StartsWith("SHARD_NOT_FOUND: "));
  EXPECT_THAT(port_->Transfer("z1", "alice", "z2", "[1]").message(),
              StartsWith("BAD_REQUEST: "));
}

}  // namespace
}  // namespace tessera::server::testing
