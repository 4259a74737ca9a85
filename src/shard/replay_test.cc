// Record and replay (shard_input_log.cc, replay.h): a manual ShardHost
// records a counter shard's inputs into a log on disk, and a replay of any
// stretch of it from the nearest save (or from init) gives the same
// snapshots bit for bit and the same fuel, tick by tick; a panicking tick
// replays to the same panic; another module diverges, and says where.
#include "shard/replay.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "shard/input_log.h"
#include "shard/input_log_files.h"
#include "shard/shard_host.h"
#include "shard/test_guests.h"

namespace tessera::shard {
namespace {

namespace fs = std::filesystem;
using ::tessera::shard::testing::FromMsgpack;
using ::tessera::shard::testing::LoadGuest;
using ::tessera::shard::testing::Msgpack;
using ::testing::HasSubstr;

constexpr int64_t kTickUs = 50'000;

class SnapshotSink final : public ShardSink {
 public:
  void OnFrame(std::string_view, uint64_t tick, std::string_view snapshot,
               const std::vector<InputResult>&) override {
    snapshots[tick] = std::string(snapshot);
  }
  void OnStopped(std::string_view, StopReason, std::string_view) override {}
  std::map<uint64_t, std::string> snapshots;
};

class ReplayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/tessera-replay-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    AddKind("counter", "counter");
    AddKind("panicker", "panicker");
    HostOptions options;
    options.workers = 0;
    options.clock = &clock_;
    options.save_interval_us = 4 * kTickUs;  // a save every 4 ticks
    options.input_log_dir = dir_.string();
    host_ = std::make_unique<ShardHost>(&kinds_, &sink_, nullptr, options);
  }
  void TearDown() override {
    host_.reset();
    fs::remove_all(dir_);
  }

  void AddKind(const std::string& name, const std::string& guest) {
    KindConfig kind;
    kind.name = name;
    kind.record_inputs = true;
    auto module = LoadGuest(guest, kind.memory_mb);
    ASSERT_TRUE(module.ok()) << module.status().ToString();
    ASSERT_TRUE(kinds_.Add(kind, *module).ok());
  }

  void Step(int ticks) {
    for (int i = 0; i < ticks; ++i) {
      now_ += kTickUs;
      clock_.Set(now_);
      host_->StepForTest(now_);
    }
  }

  // 24 ticks of a counter with inputs from two players on most ticks (one
  // refused: n must be positive).
  void RecordCounter() {
    ASSERT_TRUE(host_->Create("counter", "c1", Msgpack({{"start", 5}})).ok());
    for (int t = 1; t <= 24; ++t) {
      if (t % 3 != 0) {
        ASSERT_TRUE(host_
                        ->SubmitInput("c1", "alice", ++seq_,
                                      Msgpack({{"add", {{"n", t}}}}))
                        .ok());
      }
      if (t % 5 == 0) {
        ASSERT_TRUE(host_
                        ->SubmitInput("c1", "bob", ++seq_,
                                      Msgpack({{"add", {{"n", -1}}}}))
                        .ok());
      }
      Step(1);
    }
  }

  Result<ReadLog> ReadShardLog(const std::string& id) {
    DiskLogFiles files(dir_ / InputLogDirName(id));
    return ReadInputLog(files);
  }

  ReplayRequest Request(const std::string& guest, const std::string& kind,
                        uint64_t from, uint64_t to) {
    ReplayRequest request;
    request.from = from;
    request.to = to;
    request.kind = kinds_.Find(kind)->config;
    request.shard_id = "c1";
    auto module = LoadGuest(guest, request.kind.memory_mb);
    EXPECT_TRUE(module.ok());
    if (module.ok()) request.module = *module;
    return request;
  }

  fs::path dir_;
  FakeClock clock_{0};
  KindRegistry kinds_;
  SnapshotSink sink_;
  std::unique_ptr<ShardHost> host_;
  int64_t now_ = 0;
  uint64_t seq_ = 0;
};

TEST_F(ReplayTest, AReplayFromASaveEqualsTheRecordedRunBitForBit) {
  RecordCounter();
  Result<ReadLog> log = ReadShardLog("c1");
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  ASSERT_EQ(log->runs.size(), 1u);
  ASSERT_FALSE(log->runs[0].saves.empty());
  ASSERT_EQ(log->runs[0].ticks.size(), 24u);

  std::vector<ReplayedTick> ticks;
  Result<ReplaySummary> summary =
      Replay(log->runs[0], Request("counter", "counter", 11, 20),
             [&](const ReplayedTick& t) { ticks.push_back(t); });
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_TRUE(summary->from_save);
  EXPECT_EQ(summary->start_tick, 8u);  // saves after ticks 4, 8, 12, ...
  EXPECT_EQ(summary->diverged, 0u);
  ASSERT_EQ(ticks.size(), 12u);  // 9..20, of which 11..20 shown
  EXPECT_FALSE(ticks[1].shown);
  EXPECT_TRUE(ticks[2].shown);
  for (const ReplayedTick& t : ticks) {
    const uint64_t tick = t.recorded->tick;
    EXPECT_FALSE(t.diverged()) << "tick " << tick;
    // The very bytes the live shard sent, and the same fuel.
    EXPECT_EQ(t.step.snapshot, sink_.snapshots.at(tick)) << "tick " << tick;
    EXPECT_EQ(t.step.fuel, t.recorded->fuel);
    EXPECT_GT(t.step.fuel, 0);
  }
  // A refused input is refused again.
  const ReplayedTick& tick10 = ticks[1];
  ASSERT_EQ(tick10.step.inputs.size(), 2u);
  EXPECT_EQ(tick10.step.inputs[1].rejection, "n must be positive");
  EXPECT_EQ(FromMsgpack(ticks.back().step.snapshot)["ticks"], 20);
}

TEST_F(ReplayTest, AReplayFromInitCoversTheFirstTicks) {
  RecordCounter();
  Result<ReadLog> log = ReadShardLog("c1");
  ASSERT_TRUE(log.ok());
  uint64_t shown = 0;
  Result<ReplaySummary> summary =
      Replay(log->runs[0], Request("counter", "counter", 1, 3),
             [&](const ReplayedTick& t) {
               shown += t.shown;
               EXPECT_EQ(t.step.snapshot, sink_.snapshots.at(t.recorded->tick));
             });
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_FALSE(summary->from_save);
  EXPECT_EQ(summary->diverged, 0u);
  EXPECT_EQ(shown, 3u);
}

TEST_F(ReplayTest, ANewModuleDivergesWhereItsBehaviourDiffers) {
  RecordCounter();
  Result<ReadLog> log = ReadShardLog("c1");
  ASSERT_TRUE(log.ok());
  // counter2 adds ten times n: the first tick after the save with an
  // accepted input differs.
  Result<ReplaySummary> summary =
      Replay(log->runs[0], Request("counter2", "counter", 9, 12),
             [](const ReplayedTick&) {});
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_GT(summary->diverged, 0u);
  EXPECT_EQ(summary->first_divergence, 10u);  // tick 9 has none (9 % 3 == 0)
}

TEST_F(ReplayTest, AFailedShardKeepsItsLogAndTheReplayReproducesTheTrap) {
  ASSERT_TRUE(host_->Create("panicker", "p1", Msgpack({{"at", 7}})).ok());
  Step(10);
  std::optional<ShardInfo> info = host_->Get("p1");
  ASSERT_TRUE(info.has_value());
  ASSERT_EQ(info->stop_reason, StopReason::kFailed);
  Result<ReadLog> log = ReadShardLog("p1");
  ASSERT_TRUE(log.ok());
  ASSERT_EQ(log->runs.size(), 1u);
  ASSERT_EQ(log->runs[0].ticks.size(), 7u);
  EXPECT_EQ(log->runs[0].ticks.back().stop,
            static_cast<uint8_t>(StopReason::kFailed));

  ReplayRequest request = Request("panicker", "panicker", 5, 7);
  request.shard_id = "p1";
  std::vector<ReplayedTick> ticks;
  Result<ReplaySummary> summary =
      Replay(log->runs[0], request,
             [&](const ReplayedTick& t) { ticks.push_back(t); });
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(summary->diverged, 0u);
  ASSERT_EQ(ticks.size(), 7u);
  EXPECT_EQ(ticks.back().step.outcome.stop, StopReason::kFailed);
  EXPECT_THAT(ticks.back().step.outcome.message, HasSubstr("boom at tick 7"));
  EXPECT_EQ(ticks.back().step.outcome.message, info->stop_message);
  EXPECT_EQ(ticks.back().step.fuel, ticks.back().recorded->fuel);
}

TEST_F(ReplayTest, AShardStoppedOnRequestLeavesNoLog) {
  RecordCounter();
  ASSERT_TRUE(host_->Stop("c1").ok());
  Step(1);
  Result<ReadLog> log = ReadShardLog("c1");
  ASSERT_TRUE(log.ok());
  EXPECT_TRUE(log->runs.empty());
}

TEST_F(ReplayTest, ARangeTheLogDoesNotHoldIsRefusedWithWhatItHolds) {
  RecordCounter();
  Result<ReadLog> log = ReadShardLog("c1");
  ASSERT_TRUE(log.ok());
  Result<const LoggedRun*> run = SelectRun(*log, 20, 30);
  ASSERT_FALSE(run.ok());
  EXPECT_THAT(run.status().message(), HasSubstr("run 1: ticks 1-24"));
}

}  // namespace
}  // namespace tessera::shard
