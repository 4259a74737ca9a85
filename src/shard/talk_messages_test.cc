// ShardHost: messages between `talk` shards: Shard / Group / All routing,
// order per sender and target, the limits (topic, size, rate, inbox,
// applied per tick), refusal counters and log lines, Publish, and the inbox
// of a shard that stops.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "shard/talk_host_test.h"

namespace tessera::shard::talk_testing {
namespace {

// ---- Messages ---------------------------------------------------------------

// The group index as compute notifications read it: a shard's last
// tessera_groups, running shards only.
TEST_F(TalkHostTest, GroupMembersAreTheRunningShardsOfAGroup) {
  StartHost();
  Talk("a", {{"groups", {"world"}}});
  Talk("b", {{"groups", {"world", "north"}}});
  Talk("c");
  Step(2);
  EXPECT_THAT(host_->GroupMembers("world"), ::testing::ElementsAre("a", "b"));
  EXPECT_THAT(host_->GroupMembers("north"), ::testing::ElementsAre("b"));
  EXPECT_THAT(host_->GroupMembers("south"), ::testing::IsEmpty());
  ASSERT_TRUE(host_->Stop("a").ok());
  Step(2);
  EXPECT_THAT(host_->GroupMembers("world"), ::testing::ElementsAre("b"));
}

json Inbox(const json& snapshot) {
  return snapshot.value("inbox", json::array());
}

TEST_F(TalkHostTest, ShardGroupAndAllRouting) {
  StartHost();
  Talk("a", {{"groups", {"world"}}});
  Talk("b", {{"groups", {"world", "north"}}});
  Talk("c");
  ASSERT_TRUE(host_->Create("counter", "mute", Msgpack({{"start", 0}})).ok());
  auto send = [&](const std::string& from, const std::string& kind,
                  const std::string& to, const std::string& data) {
    ASSERT_TRUE(
        Input(from, "x",
              {{"send",
                {{"kind", kind}, {"to", to}, {"topic", "t"}, {"data", data}}}})
            .ok());
  };
  send("a", "shard", "c", "to-c");
  send("a", "group", "world", "to-world");
  send("c", "all", "", "to-all");
  Step(3);
  EXPECT_EQ(Inbox(sink_.Snapshot("c")), json::parse(R"([["a","t","to-c"]])"));
  EXPECT_EQ(Inbox(sink_.Snapshot("b")),
            json::parse(R"([["a","t","to-world"],["c","t","to-all"]])"));
  // Not its own group message; the All from c.
  EXPECT_EQ(Inbox(sink_.Snapshot("a")), json::parse(R"([["c","t","to-all"]])"));
  auto counters = host_->talk_counters();
  EXPECT_EQ(counters.messages_sent, 3u);
  EXPECT_EQ(counters.messages_delivered, 4u);

  send("a", "shard", "nope", "x");
  send("a", "shard", "mute", "x");
  Step(2);
  counters = host_->talk_counters();
  EXPECT_EQ(
      counters.messages_refused[static_cast<int>(MessageRefusal::kNotFound)],
      1u);
  EXPECT_EQ(
      counters.messages_refused[static_cast<int>(MessageRefusal::kNoHandler)],
      1u);
  EXPECT_TRUE(
      Logged("message from shard \"a\" to \"nope\" topic \"t\" "
             "refused: not_found"));
}

TEST_F(TalkHostTest, OrderPerSenderAndTarget) {
  StartHost();
  Talk("a");
  Talk("b");
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(
        Input("a", "x",
              {{"burst",
                {{"kind", "shard"}, {"to", "b"}, {"count", 20}, {"bytes", 8}}}})
            .ok());
    Step();
  }
  Step(3);
  json inbox = Inbox(sink_.Snapshot("b"));
  ASSERT_EQ(inbox.size(), 60u);
  for (int i = 0; i < 60; ++i) {
    std::string want = "i:" + std::to_string(i % 20);
    want.resize(8, '.');
    EXPECT_EQ(inbox[i][2], want) << i;
  }
}

TEST_F(TalkHostTest, LimitsTopicSizeRateInboxAndAppliedPerTick) {
  HostOptions options;
  options.max_inbox_messages = 10;
  options.max_messages_applied_per_tick = 4;
  StartHost(options);
  Talk("a");
  Talk("b");
  auto count = [&](MessageRefusal r) {
    return host_->talk_counters().messages_refused[static_cast<int>(r)];
  };
  ASSERT_TRUE(
      Input("a", "x",
            {{"send",
              {{"kind", "shard"}, {"to", "b"}, {"topic", ""}, {"data", "x"}}}})
          .ok());
  ASSERT_TRUE(Input("a", "x",
                    {{"send",
                      {{"kind", "shard"},
                       {"to", "b"},
                       {"topic", std::string(129, 't')},
                       {"data", "x"}}}})
                  .ok());
  ASSERT_TRUE(Input("a", "x",
                    {{"burst",
                      {{"kind", "shard"},
                       {"to", "b"},
                       {"count", 1},
                       {"bytes", abi::kMaxMessageDataBytes + 1}}}})
                  .ok());
  Step(2);
  EXPECT_EQ(count(MessageRefusal::kTopic), 2u);
  EXPECT_EQ(count(MessageRefusal::kTooBig), 1u);
  // 70 in one tick: 64 leave (10 fit b's inbox), 6 over the rate.
  ASSERT_TRUE(
      Input("a", "x",
            {{"burst",
              {{"kind", "shard"}, {"to", "b"}, {"count", 70}, {"bytes", 4}}}})
          .ok());
  std::vector<uint64_t> received;
  sink_.on_frame = [&](std::string_view shard, std::string_view snapshot) {
    if (shard == "b") received.push_back(FromMsgpack(snapshot)["received"]);
  };
  Step(6);
  EXPECT_EQ(count(MessageRefusal::kRate), 6u);
  EXPECT_EQ(count(MessageRefusal::kInboxFull), 54u);
  ASSERT_FALSE(received.empty());
  EXPECT_EQ(received.back(), 10u);
  // At most 4 a tick, the rest kept for the next ticks.
  size_t ticks_with_messages = 0;
  for (size_t i = 1; i < received.size(); ++i) {
    EXPECT_LE(received[i] - received[i - 1], 4u);
    if (received[i] > received[i - 1]) ++ticks_with_messages;
  }
  EXPECT_GE(ticks_with_messages + (received[0] > 0 ? 1 : 0), 3u);
  // One line a second per sender, with the count held back.
  size_t lines = 0;
  for (const auto& line : Log()) {
    if (line.find("refused: ") != std::string::npos) ++lines;
  }
  EXPECT_LT(lines, 10u);
  Step(25);
  ASSERT_TRUE(Input("a", "x",
                    {{"send",
                      {{"kind", "shard"},
                       {"to", "nope"},
                       {"topic", "late"},
                       {"data", "x"}}}})
                  .ok());
  Step(2);
  EXPECT_TRUE(Logged("topic \"late\" refused: not_found ("));
  EXPECT_TRUE(Logged("more refusal lines held back"));
}

TEST_F(TalkHostTest, PublishAndAStoppedShardsInbox) {
  StartHost();
  Talk("a", {{"groups", {"g"}}});
  Talk("b", {{"groups", {"g"}}});
  auto published = host_->Publish({TargetKind::kGroup, "g"}, "news", "hi");
  ASSERT_TRUE(published.ok());
  EXPECT_EQ(published->delivered, 2u);
  EXPECT_EQ(published->refused, 0u);
  published = host_->Publish({TargetKind::kShard, "nope"}, "news", "hi");
  ASSERT_TRUE(published.ok());
  EXPECT_EQ(published->refused, 1u);
  EXPECT_EQ(host_->Publish({TargetKind::kAll, ""}, "", "x").status().code(),
            StatusCode::kInvalidArgument);
  Step();
  EXPECT_EQ(Inbox(sink_.Snapshot("a")), json::parse(R"([["","news","hi"]])"));

  // Queued for b, which stops before its next tick: counted "stopped".
  ASSERT_TRUE(host_->Publish({TargetKind::kShard, "b"}, "n", "1").ok());
  ASSERT_TRUE(host_->Publish({TargetKind::kShard, "b"}, "n", "2").ok());
  ASSERT_TRUE(host_->Stop("b").ok());
  Pass();
  EXPECT_EQ(host_->talk_counters()
                .messages_refused[static_cast<int>(MessageRefusal::kStopped)],
            2u);
  EXPECT_TRUE(Logged("2 messages queued for shard \"b\" refused: stopped"));
  auto after = host_->Publish({TargetKind::kShard, "b"}, "n", "3");
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->refused, 1u);  // not running: not_found
  EXPECT_THAT(host_->Publish({TargetKind::kGroup, "g"}, "n", "4")->delivered,
              1u);
}

TEST_F(TalkHostTest, GroupLimitsAppliedByTheHost) {
  StartHost();
  json groups = json::array();
  for (int i = 0; i < 70; ++i) groups.push_back("g" + std::to_string(100 + i));
  groups.push_back(std::string(200, 'x'));
  Talk("a", {{"groups", groups}});
  Talk("b");
  EXPECT_TRUE(
      Logged("shard \"a\" groups: left out a group name of 200 "
             "bytes (at most 128), 6 groups over the limit of 64"));
  auto kept = host_->Publish({TargetKind::kGroup, "g163"}, "t", "x");
  auto over = host_->Publish({TargetKind::kGroup, "g164"}, "t", "x");
  ASSERT_TRUE(kept.ok() && over.ok());
  EXPECT_EQ(kept->delivered, 1u);
  EXPECT_EQ(over->delivered, 0u);
}

}  // namespace
}  // namespace tessera::shard::talk_testing
