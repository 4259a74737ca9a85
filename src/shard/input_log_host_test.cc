// Durable inputs (shard_input_log.cc, docs/record-replay.md "No
// acknowledged input lost"): a recording shard syncs its log every tick
// before the tick's frame goes out, and a restart restored from the last
// save runs the logged ticks after it again, so the shard comes back with
// every input a client saw acknowledged. A crash is the store and the log
// directory as they were at some moment, taken while the host still runs.
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
#include "shard/state_store.h"
#include "shard/test_guests.h"

namespace tessera::shard {
namespace {

namespace fs = std::filesystem;
using ::tessera::shard::testing::FromMsgpack;
using ::tessera::shard::testing::LoadGuest;
using ::tessera::shard::testing::Msgpack;

constexpr int64_t kDurableTickUs = 50'000;

class DurableFrames final : public ShardSink {
 public:
  void OnFrame(std::string_view, uint64_t tick, std::string_view snapshot,
               const std::vector<InputResult>&) override {
    snapshots[tick] = FromMsgpack(snapshot);
  }
  void OnStopped(std::string_view, StopReason, std::string_view) override {}
  std::map<uint64_t, nlohmann::json> snapshots;
};

// One server: a manual host on its own store and log directory.
struct DurableServer {
  DurableServer(const KindRegistry* kinds, StateStore* store,
                const fs::path& logs)
      : clock(0) {
    HostOptions options;
    options.workers = 0;
    options.clock = &clock;
    options.save_interval_us = 4 * kDurableTickUs;
    options.input_log_dir = logs.string();
    host = std::make_unique<ShardHost>(kinds, &frames, store, options);
  }
  void Step(int ticks) {
    for (int i = 0; i < ticks; ++i) {
      now += kDurableTickUs;
      clock.Set(now);
      host->StepForTest(now);
    }
  }
  FakeClock clock;
  DurableFrames frames;
  std::unique_ptr<ShardHost> host;
  int64_t now = 0;
};

class DurableInputsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/tessera-durable-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    KindConfig kind;
    kind.name = "counter";
    kind.record_inputs = true;
    auto module = LoadGuest("counter", kind.memory_mb);
    ASSERT_TRUE(module.ok()) << module.status().ToString();
    ASSERT_TRUE(kinds_.Add(kind, *module, "v1").ok());
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
  KindRegistry kinds_;
};

TEST_F(DurableInputsTest, ARestartRunsTheLoggedTicksSinceTheLastSaveAgain) {
  MemoryStateStore store;
  DurableServer first(&kinds_, &store, dir_ / "logs");
  ASSERT_TRUE(
      first.host->Create("counter", "c1", Msgpack({{"start", 0}})).ok());
  uint64_t seq = 0;
  for (int t = 1; t <= 22; ++t) {
    ASSERT_TRUE(
        first.host
            ->SubmitInput("c1", "alice", ++seq, Msgpack({{"add", {{"n", t}}}}))
            .ok());
    first.Step(1);
  }
  // What a client was sent (and acknowledged) last: tick 22, value 1+..+22.
  ASSERT_EQ(first.frames.snapshots.at(22)["value"], 253);

  // The crash: the store's last save (after tick 20) and the log as it is.
  MemoryStateStore crashed;
  auto saved = store.Load("c1");
  ASSERT_TRUE(saved.ok() && saved->has_value());
  ASSERT_TRUE(crashed.Save("c1", **saved).ok());
  EXPECT_EQ(FromMsgpack(**saved)["value"], 210);  // ticks 21, 22 not in it
  fs::copy(dir_ / "logs", dir_ / "crashed", fs::copy_options::recursive);

  DurableServer second(&kinds_, &crashed, dir_ / "crashed");
  ASSERT_TRUE(
      second.host->Restore("counter", "c1", Msgpack({{"start", 0}})).ok());
  EXPECT_EQ(second.host->Get("c1")->tick, 22u);  // it goes on numbering
  second.Step(1);
  ASSERT_EQ(second.frames.snapshots.count(23), 1u);
  EXPECT_EQ(second.frames.snapshots.at(23)["value"], 253);
  EXPECT_EQ(second.frames.snapshots.at(23)["ticks"], 23);

  // Its log now begins a run at that state, replayable as any other.
  DiskLogFiles files(dir_ / "crashed" / "c1");
  auto log = ReadInputLog(files);
  ASSERT_TRUE(log.ok());
  ASSERT_EQ(log->runs.size(), 2u);
  EXPECT_TRUE(log->runs[1].run.restored);
  ASSERT_FALSE(log->runs[1].saves.empty());
  EXPECT_EQ(log->runs[1].saves[0].tick, 22u);
  first.host->Shutdown();
}

TEST_F(DurableInputsTest, EveryTickIsLoggedBeforeItsFrameGoesOut) {
  // A sink that reads the log from disk when the frame arrives: the tick
  // is already there.
  class Checking final : public ShardSink {
   public:
    explicit Checking(fs::path dir) : dir_(std::move(dir)) {}
    void OnFrame(std::string_view, uint64_t tick, std::string_view,
                 const std::vector<InputResult>&) override {
      DiskLogFiles files(dir_);
      auto log = ReadInputLog(files);
      logged.push_back(log.ok() && !log->runs.empty() &&
                               !log->runs.back().ticks.empty()
                           ? log->runs.back().ticks.back().tick == tick
                           : false);
    }
    void OnStopped(std::string_view, StopReason, std::string_view) override {}
    std::vector<bool> logged;

   private:
    fs::path dir_;
  };
  Checking sink(dir_ / "logs" / "c1");
  FakeClock clock(0);
  HostOptions options;
  options.workers = 0;
  options.clock = &clock;
  options.input_log_dir = (dir_ / "logs").string();
  ShardHost host(&kinds_, &sink, nullptr, options);
  ASSERT_TRUE(host.Create("counter", "c1", "").ok());
  for (int t = 1; t <= 5; ++t) {
    ASSERT_TRUE(
        host.SubmitInput("c1", "bob", t, Msgpack({{"add", {{"n", 1}}}})).ok());
    clock.Set(t * kDurableTickUs);
    host.StepForTest(t * kDurableTickUs);
  }
  EXPECT_EQ(sink.logged, std::vector<bool>(5, true));
}

}  // namespace
}  // namespace tessera::shard
