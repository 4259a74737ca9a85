// Hot reload (ShardHost::Reload): a running counter shard moves to the
// counter2 module (same state, inputs add ten times as much) by save ->
// restore between two ticks, keeping its value, tick count and
// subscribers; a module that cannot move its state keeps running.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "shard/manual_host_test.h"
#include "shard/shard_host.h"
#include "shard/test_guests.h"

namespace tessera::shard {
namespace {

using ::tessera::shard::testing::FromMsgpack;
using ::tessera::shard::testing::LoadGuest;
using ::tessera::shard::testing::Msgpack;
using ::testing::HasSubstr;
using json = nlohmann::json;

class FrameSink final : public ShardSink {
 public:
  void OnFrame(std::string_view shard_id, uint64_t tick,
               std::string_view snapshot,
               const std::vector<InputResult>&) override {
    frames.push_back({std::string(shard_id), tick, std::string(snapshot)});
  }
  void OnStopped(std::string_view shard_id, StopReason,
                 std::string_view message) override {
    stops.push_back(std::string(shard_id) + ": " + std::string(message));
  }
  struct Frame {
    std::string shard;
    uint64_t tick;
    std::string snapshot;
  };
  std::vector<Frame> frames;
  std::vector<std::string> stops;
};

class ShardReloadTest : public testing::ManualHostTest<FrameSink> {
 protected:
  std::shared_ptr<const KindEntry> Replace(const std::string& kind,
                                           const std::string& guest,
                                           const std::string& version) {
    auto module = LoadGuest(guest, KindConfig().memory_mb);
    EXPECT_TRUE(module.ok()) << module.status().ToString();
    if (!module.ok()) return nullptr;
    auto entry = kinds_.Replace(kind, *module, version);
    EXPECT_TRUE(entry.ok()) << entry.status().ToString();
    return entry.ok() ? *entry : nullptr;
  }

  // Reloads `kind` to `entry` and steps until every shard answered.
  std::vector<ReloadOutcome> Reload(const std::string& kind,
                                    std::shared_ptr<const KindEntry> entry) {
    std::optional<std::vector<ReloadOutcome>> got;
    host_->Reload(kind, entry, [&](std::vector<ReloadOutcome> outcomes) {
      got = std::move(outcomes);
    });
    for (int i = 0; i < 5 && !got; ++i) Step();
    EXPECT_TRUE(got.has_value()) << "the reload never answered";
    return got.value_or(std::vector<ReloadOutcome>{});
  }

  void Add(const std::string& shard, int n) {
    ASSERT_TRUE(host_
                    ->SubmitInput(shard, "alice", ++seq_,
                                  Msgpack({{"add", {{"n", n}}}}))
                    .ok());
  }

  json LastSnapshot(const std::string& shard) {
    for (auto it = sink_.frames.rbegin(); it != sink_.frames.rend(); ++it) {
      if (it->shard == shard) return FromMsgpack(it->snapshot);
    }
    return nullptr;
  }
};

TEST_F(ShardReloadTest, ARunningShardTakesTheNewCodeWithItsState) {
  StartHost({{"counter", "counter"}});
  ASSERT_TRUE(host_->Create("counter", "a", Msgpack({{"start", 5}})).ok());
  ASSERT_TRUE(host_->AddSubscriber("a", "alice").ok());
  Step(3);
  Add("a", 1);
  Step();
  EXPECT_EQ(LastSnapshot("a")["value"], 6);
  const uint64_t tick_before = host_->Get("a")->tick;
  const uint64_t run_before = host_->Get("a")->run_id;

  auto entry = Replace("counter", "counter2", "v2");
  ASSERT_NE(entry, nullptr);
  std::vector<ReloadOutcome> outcomes = Reload("counter", entry);
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_EQ(outcomes[0].shard_id, "a");
  EXPECT_TRUE(outcomes[0].reloaded) << outcomes[0].message;

  // Same state, same subscriber, ticks go on; inputs now add ten times.
  Add("a", 1);
  Step();
  const json snapshot = LastSnapshot("a");
  EXPECT_EQ(snapshot["value"], 16);
  EXPECT_EQ(snapshot["last_sid"], "alice");
  std::optional<ShardInfo> info = host_->Get("a");
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->module_version, "v2");
  EXPECT_EQ(info->subscribers, 1u);
  EXPECT_EQ(info->run_id, run_before);
  EXPECT_GT(info->tick, tick_before);
  uint64_t last_tick = 0;
  for (const auto& frame : sink_.frames) {
    EXPECT_GT(frame.tick, last_tick) << "a frame's tick went back";
    last_tick = frame.tick;
  }
  EXPECT_TRUE(sink_.stops.empty());

  // A shard started after the kind was replaced runs the new module.
  ASSERT_TRUE(host_->Create("counter", "b", Msgpack({{"start", 0}})).ok());
  EXPECT_EQ(host_->Get("b")->module_version, "v2");
  Add("b", 2);
  Step();
  EXPECT_EQ(LastSnapshot("b")["value"], 20);
}

TEST_F(ShardReloadTest, ARestoreThatRefusesTheStateKeepsTheOldCodeRunning) {
  StartHost({{"counter", "counter"}});
  ASSERT_TRUE(host_->Create("counter", "a", Msgpack({{"start", 1}})).ok());
  Step(2);
  // badrestore refuses every state it is given.
  auto entry = Replace("counter", "badrestore", "broken");
  ASSERT_NE(entry, nullptr);
  std::vector<ReloadOutcome> outcomes = Reload("counter", entry);
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_FALSE(outcomes[0].reloaded);
  EXPECT_THAT(outcomes[0].message, HasSubstr("state is corrupt"));
  EXPECT_THAT(outcomes[0].message, HasSubstr("keeps running its old module"));
  Add("a", 2);
  Step();
  EXPECT_EQ(LastSnapshot("a")["value"], 3);  // the counter's behaviour
  EXPECT_EQ(host_->Get("a")->status, ShardStatus::kRunning);
  EXPECT_EQ(host_->Get("a")->module_version, "");
}

TEST_F(ShardReloadTest, AModuleWithoutSaveKeepsRunningAndSaysWhy) {
  StartHost({{"spinner", "spin"}});
  ASSERT_TRUE(host_->Create("spinner", "s", Msgpack(json::object())).ok());
  Step(2);
  auto entry = Replace("spinner", "spin", "again");
  ASSERT_NE(entry, nullptr);
  std::vector<ReloadOutcome> outcomes = Reload("spinner", entry);
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_FALSE(outcomes[0].reloaded);
  EXPECT_THAT(outcomes[0].message, HasSubstr("no tessera_save"));
  Step(2);
  EXPECT_EQ(host_->Get("s")->status, ShardStatus::kRunning);
}

TEST_F(ShardReloadTest, NoShardOfTheKindAnswersAtOnceAndAStopAnswersToo) {
  StartHost({{"counter", "counter"}});
  auto entry = Replace("counter", "counter2", "v2");
  ASSERT_NE(entry, nullptr);
  bool answered = false;
  host_->Reload("counter", entry, [&](std::vector<ReloadOutcome> outcomes) {
    answered = true;
    EXPECT_TRUE(outcomes.empty());
  });
  EXPECT_TRUE(answered);

  ASSERT_TRUE(host_->Create("counter", "a", Msgpack({{"start", 0}})).ok());
  Step();
  // A reload to another build, asked while a stop is pending: the stop
  // comes first and answers for the shard.
  auto v3 = Replace("counter", "counter", "v3");
  ASSERT_TRUE(host_->Stop("a").ok());
  std::vector<ReloadOutcome> outcomes = Reload("counter", v3);
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_FALSE(outcomes[0].reloaded);
  EXPECT_THAT(outcomes[0].message, HasSubstr("the shard stopped"));
}

}  // namespace
}  // namespace tessera::shard
