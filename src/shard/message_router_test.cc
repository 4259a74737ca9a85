// The pure parts of messages between shards and of moves: message and group
// limits, the inbox, routing by shard / group / all, the log line limiter,
// the move checks and the redirect records.
#include "shard/message_router.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "shard/transfers.h"

namespace tessera::shard {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::shared_ptr<const ShardMessage> Msg(std::string from, std::string data) {
  return std::make_shared<ShardMessage>(
      ShardMessage{std::move(from), "t", std::move(data)});
}

std::vector<std::string> Data(
    const std::vector<std::shared_ptr<const ShardMessage>>& batch) {
  std::vector<std::string> out;
  for (const auto& m : batch) out.push_back(m->data);
  return out;
}

TEST(CheckMessageTest, TopicAndDataLimits) {
  EXPECT_EQ(CheckMessage("", "x"), MessageRefusal::kTopic);
  EXPECT_EQ(CheckMessage(std::string(abi::kMaxTopicBytes + 1, 'a'), ""),
            MessageRefusal::kTopic);
  EXPECT_EQ(CheckMessage(std::string(abi::kMaxTopicBytes, 'a'), ""),
            std::nullopt);
  EXPECT_EQ(CheckMessage("t", std::string(abi::kMaxMessageDataBytes, 'd')),
            std::nullopt);
  EXPECT_EQ(CheckMessage("t", std::string(abi::kMaxMessageDataBytes + 1, 'd')),
            MessageRefusal::kTooBig);
}

TEST(CheckGroupsTest, NamesFoldedCheckedAndCapped) {
  GroupList list = CheckGroups({"b", "a", "b", "", std::string(129, 'x')});
  EXPECT_THAT(list.groups, ElementsAre("a", "b"));
  ASSERT_EQ(list.dropped.size(), 2u);
  EXPECT_THAT(list.dropped[0], HasSubstr("empty"));
  EXPECT_THAT(list.dropped[1], HasSubstr("129 bytes"));

  std::vector<std::string> many;
  for (int i = 0; i < 70; ++i) many.push_back("g" + std::to_string(100 + i));
  list = CheckGroups(many);
  EXPECT_EQ(list.groups.size(), abi::kMaxGroups);
  EXPECT_EQ(list.groups.front(), "g100");  // the first ones listed are kept
  EXPECT_EQ(list.groups.back(), "g163");
  ASSERT_EQ(list.dropped.size(), 1u);
  EXPECT_THAT(list.dropped[0], HasSubstr("6 groups over the limit of 64"));
}

TEST(InboxTest, FifoBoundedTakeKeepsTheRestAndClose) {
  Inbox inbox(3);
  EXPECT_EQ(inbox.Push(Msg("a", "1")), std::nullopt);
  EXPECT_EQ(inbox.Push(Msg("a", "2")), std::nullopt);
  EXPECT_EQ(inbox.Push(Msg("a", "3")), std::nullopt);
  EXPECT_EQ(inbox.Push(Msg("a", "4")), MessageRefusal::kInboxFull);
  EXPECT_THAT(Data(inbox.Take(2)), ElementsAre("1", "2"));
  EXPECT_EQ(inbox.size(), 1u);
  EXPECT_EQ(inbox.Push(Msg("a", "5")), std::nullopt);
  EXPECT_THAT(Data(inbox.Take(10)), ElementsAre("3", "5"));
  EXPECT_EQ(inbox.Push(Msg("a", "6")), std::nullopt);
  EXPECT_EQ(inbox.Close(), 1u);
  EXPECT_EQ(inbox.Push(Msg("a", "7")), MessageRefusal::kStopped);
  EXPECT_THAT(inbox.Take(10), IsEmpty());
  EXPECT_EQ(inbox.Close(), 0u);
}

class RouterTest : public ::testing::Test {
 protected:
  std::shared_ptr<Inbox> AddShard(const std::string& id, bool handler = true,
                                  size_t capacity = 16) {
    auto inbox = std::make_shared<Inbox>(capacity);
    router_.Add(id, inbox, handler);
    inboxes_[id] = inbox;
    return inbox;
  }
  size_t Route(std::string sender, MessageTarget to, std::string data) {
    return router_.Route(sender, to, Msg(sender, std::move(data)), &refused_);
  }

  MessageRouter router_;
  std::map<std::string, std::shared_ptr<Inbox>> inboxes_;
  std::vector<RoutedRefusal> refused_;
};

TEST_F(RouterTest, ShardTargetNotFoundNoHandlerAndSelf) {
  AddShard("a");
  AddShard("b");
  AddShard("mute", /*handler=*/false);
  EXPECT_EQ(Route("a", {TargetKind::kShard, "b"}, "1"), 1u);
  EXPECT_EQ(Route("a", {TargetKind::kShard, "a"}, "self"), 1u);
  EXPECT_EQ(Route("a", {TargetKind::kShard, "nope"}, "2"), 0u);
  EXPECT_EQ(Route("a", {TargetKind::kShard, "mute"}, "3"), 0u);
  ASSERT_EQ(refused_.size(), 2u);
  EXPECT_EQ(refused_[0].target, "nope");
  EXPECT_EQ(refused_[0].reason, MessageRefusal::kNotFound);
  EXPECT_EQ(refused_[1].target, "mute");
  EXPECT_EQ(refused_[1].reason, MessageRefusal::kNoHandler);
  EXPECT_THAT(Data(inboxes_["b"]->Take(10)), ElementsAre("1"));
  EXPECT_THAT(Data(inboxes_["a"]->Take(10)), ElementsAre("self"));
}

TEST_F(RouterTest, GroupsExcludeTheSenderAndFollowUpdates) {
  AddShard("a");
  AddShard("b");
  AddShard("c");
  AddShard("mute", false);
  EXPECT_TRUE(router_.SetGroups("a", {"world"}));
  EXPECT_TRUE(router_.SetGroups("b", {"north", "world"}));
  EXPECT_TRUE(router_.SetGroups("mute", {"world"}));
  EXPECT_FALSE(router_.SetGroups("b", {"north", "world"}));  // unchanged
  EXPECT_FALSE(router_.SetGroups("ghost", {"world"}));       // not registered
  EXPECT_THAT(router_.GroupMembers("world"), ElementsAre("a", "b", "mute"));

  EXPECT_EQ(Route("a", {TargetKind::kGroup, "world"}, "w1"), 1u);
  ASSERT_EQ(refused_.size(), 1u);
  EXPECT_EQ(refused_[0].target, "mute");
  EXPECT_EQ(refused_[0].reason, MessageRefusal::kNoHandler);
  EXPECT_THAT(Data(inboxes_["a"]->Take(10)), IsEmpty());  // not to itself
  EXPECT_THAT(Data(inboxes_["b"]->Take(10)), ElementsAre("w1"));
  // c is in no group; a group nobody is in reaches nobody, refusing nothing.
  EXPECT_EQ(Route("c", {TargetKind::kGroup, "world"}, "w2"), 2u);
  EXPECT_EQ(Route("c", {TargetKind::kGroup, "empty"}, "w3"), 0u);
  EXPECT_EQ(refused_.size(), 2u);

  // b leaves the group; a removed shard leaves every group.
  EXPECT_TRUE(router_.SetGroups("b", {"north"}));
  EXPECT_EQ(router_.Remove("a", inboxes_["a"].get()), 1u);  // w2 dropped
  EXPECT_THAT(router_.GroupMembers("world"), ElementsAre("mute"));
  EXPECT_THAT(router_.GroupMembers("north"), ElementsAre("b"));
}

TEST_F(RouterTest, AllReachesEveryHandlerButTheSender) {
  AddShard("a");
  AddShard("b");
  AddShard("c");
  AddShard("mute", false);
  EXPECT_EQ(Route("b", {TargetKind::kAll, ""}, "x"), 2u);
  EXPECT_THAT(refused_, IsEmpty());  // All skips shards without a handler
  EXPECT_EQ(Route("", {TargetKind::kAll, ""}, "server"), 3u);
  EXPECT_THAT(Data(inboxes_["a"]->Take(10)), ElementsAre("x", "server"));
  EXPECT_THAT(Data(inboxes_["b"]->Take(10)), ElementsAre("server"));
}

TEST_F(RouterTest, FullInboxAndARemovedOrReplacedShard) {
  auto small = AddShard("a", true, 1);
  AddShard("b");
  EXPECT_EQ(Route("b", {TargetKind::kShard, "a"}, "1"), 1u);
  EXPECT_EQ(Route("b", {TargetKind::kShard, "a"}, "2"), 0u);
  ASSERT_EQ(refused_.size(), 1u);
  EXPECT_EQ(refused_[0].reason, MessageRefusal::kInboxFull);

  // A newer shard "a" replaced the entry: removing the old inbox keeps it.
  auto newer = AddShard("a");
  EXPECT_EQ(router_.Remove("a", small.get()), 1u);
  EXPECT_EQ(Route("b", {TargetKind::kShard, "a"}, "3"), 1u);
  EXPECT_EQ(router_.Remove("a", newer.get()), 1u);
  EXPECT_EQ(Route("b", {TargetKind::kShard, "a"}, "4"), 0u);
  EXPECT_EQ(refused_.back().reason, MessageRefusal::kNotFound);
}

TEST(LineLimiterTest, OneLinePerKeyPerPeriodWithTheCountHeldBack) {
  LineLimiter limiter(1'000'000);
  EXPECT_EQ(limiter.Allow("a", 0), 0u);
  EXPECT_EQ(limiter.Allow("a", 10), std::nullopt);
  EXPECT_EQ(limiter.Allow("a", 999'999), std::nullopt);
  EXPECT_EQ(limiter.Allow("b", 20), 0u);  // keys are separate
  EXPECT_EQ(limiter.Allow("a", 1'000'000), 2u);
  EXPECT_EQ(limiter.Allow("a", 2'000'001), 0u);
  limiter.Forget("a");
  EXPECT_EQ(limiter.Allow("a", 2'000'002), 0u);
}

TEST(CheckMoveTest, RefusalsInTheContractsOrder) {
  TransferRecord r;
  r.from_shard = "s";
  r.to_shard = "t";
  r.subscriber = "p";
  const MoveTargetInfo up{true, true};
  EXPECT_EQ(CheckMove(r, true, up, false), std::nullopt);

  TransferRecord same = r;
  same.to_shard = "s";
  EXPECT_EQ(CheckMove(same, false, {}, true)->error, TransferError::kInvalid);
  TransferRecord empty = r;
  empty.subscriber.clear();
  EXPECT_EQ(CheckMove(empty, true, up, false)->error, TransferError::kInvalid);
  // Not running comes before hooks and busy.
  EXPECT_EQ(CheckMove(r, false, {false, false}, true)->error,
            TransferError::kNotFound);
  auto unsupported = CheckMove(r, true, {true, false}, true);
  EXPECT_EQ(unsupported->error, TransferError::kUnsupported);
  EXPECT_THAT(unsupported->message, HasSubstr("\"t\""));
  unsupported = CheckMove(r, false, up, true);
  EXPECT_THAT(unsupported->message, HasSubstr("\"s\""));
  EXPECT_EQ(CheckMove(r, true, up, true)->error, TransferError::kBusy);
}

TEST(IsJsonObjectTest, OnlyObjects) {
  EXPECT_TRUE(IsJsonObject("{}"));
  EXPECT_TRUE(IsJsonObject(R"({"party": "red", "n": 1})"));
  EXPECT_FALSE(IsJsonObject("[]"));
  EXPECT_FALSE(IsJsonObject("\"x\""));
  EXPECT_FALSE(IsJsonObject("{"));
  EXPECT_FALSE(IsJsonObject(""));
}

TEST(MovedRecordsTest, FindWithinTheRecordTimeExpireAndErase) {
  MovedRecords records;
  const int64_t t0 = 1'700'000'000'000;
  EXPECT_EQ(records.Record("s", MovedTo{"p", "t", "{}", t0}, "id1"),
            std::nullopt);
  ASSERT_TRUE(records.Find("s", "p", t0).has_value());
  EXPECT_EQ(records.Find("s", "p", t0)->to, "t");
  EXPECT_FALSE(records.Find("t", "p", t0).has_value());
  EXPECT_TRUE(
      records.Find("s", "p", t0 + kMovedRecordSecs * 1000 - 1).has_value());
  EXPECT_FALSE(records.Find("s", "p", t0 + kMovedRecordSecs * 1000));
  // A newer move of the same pair replaces the record (its old row goes).
  EXPECT_EQ(records.Record("s", MovedTo{"p", "u", "{}", t0 + 10}, "id2"),
            "id1");
  records.Record("s", MovedTo{"q", "t", "{}", t0 + 20}, "id3");
  EXPECT_THAT(records.Expire(t0 + kMovedRecordSecs * 1000 + 10),
              ElementsAre("id2"));
  EXPECT_EQ(records.size(), 1u);
  EXPECT_EQ(records.Erase("s", "q"), "id3");
  EXPECT_EQ(records.Erase("s", "q"), std::nullopt);
  EXPECT_EQ(records.size(), 0u);
}

}  // namespace
}  // namespace tessera::shard
