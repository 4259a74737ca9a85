// ShardHost: scheduling, lifecycle and failure isolation. Deterministic
// tests run with workers = 0 and a FakeClock (StepForTest); the stress test
// uses real worker threads.
#include "shard/shard_host.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "shard/test_guests.h"

namespace tessera::shard {
namespace {

using ::tessera::shard::testing::FromMsgpack;
using ::tessera::shard::testing::Msgpack;
using ::testing::HasSubstr;
using json = nlohmann::json;

constexpr int64_t kSecond = 1'000'000;

class RecordingSink final : public ShardSink {
 public:
  struct Frame {
    std::string shard;
    uint64_t tick;
    std::string snapshot;
    std::vector<InputResult> inputs;
  };
  struct Stop {
    std::string shard;
    StopReason reason;
    std::string message;
  };

  void OnFrame(std::string_view shard_id, uint64_t tick,
               std::string_view snapshot,
               const std::vector<InputResult>& inputs) override {
    std::lock_guard<std::mutex> lock(mu_);
    ++frame_count_;
    if (!keep_frames_) return;
    frames_.push_back(
        Frame{std::string(shard_id), tick, std::string(snapshot), inputs});
  }
  void OnStopped(std::string_view shard_id, StopReason reason,
                 std::string_view message) override {
    std::lock_guard<std::mutex> lock(mu_);
    ++stop_counts_[reason];
    if (!keep_frames_) return;
    stops_.push_back(Stop{std::string(shard_id), reason, std::string(message)});
  }

  std::vector<Frame> frames() {
    std::lock_guard<std::mutex> lock(mu_);
    return frames_;
  }
  std::vector<Stop> stops() {
    std::lock_guard<std::mutex> lock(mu_);
    return stops_;
  }
  size_t stop_count(StopReason r) {
    std::lock_guard<std::mutex> lock(mu_);
    return stop_counts_[r];
  }
  void set_keep_frames(bool keep) {
    std::lock_guard<std::mutex> lock(mu_);
    keep_frames_ = keep;
  }

 private:
  std::mutex mu_;
  bool keep_frames_ = true;
  size_t frame_count_ = 0;
  std::vector<Frame> frames_;
  std::vector<Stop> stops_;
  std::map<StopReason, size_t> stop_counts_;
};

KindConfig Kind(std::string name, uint32_t tick_rate = 20) {
  KindConfig kind;
  kind.name = std::move(name);
  kind.tick_rate = tick_rate;
  return kind;
}

class ShardHostTest : public ::testing::Test {
 protected:
  // Registers `name` as kind `kind_name` (if built); false if not built.
  bool AddKind(const std::string& guest, KindConfig kind) {
    if (testing::GuestPath(guest) == nullptr) return false;
    auto module = testing::LoadGuest(guest, kind.memory_mb);
    EXPECT_TRUE(module.ok()) << module.status().ToString();
    if (!module.ok()) return false;
    EXPECT_TRUE(kinds_.Add(kind, *module).ok());
    return true;
  }
  std::unique_ptr<ShardHost> ManualHost(HostOptions options = {}) {
    options.workers = 0;
    options.clock = &clock_;
    return std::make_unique<ShardHost>(&kinds_, &sink_, &store_,
                                       std::move(options));
  }
  // Advances the fake clock to `t` and steps.
  void StepTo(ShardHost& host, int64_t t) {
    clock_.Set(t);
    host.StepForTest(t);
  }

  FakeClock clock_{0};
  KindRegistry kinds_;
  RecordingSink sink_;
  MemoryStateStore store_;
};

#define REQUIRE_KIND(guest, kind) \
  if (!AddKind(guest, kind))      \
  GTEST_SKIP() << "test guest " << guest << " was not built"

TEST_F(ShardHostTest, UnknownKindAndDuplicateIds) {
  REQUIRE_KIND("counter", Kind("counter"));
  auto host = ManualHost();
  EXPECT_EQ(host->Create("nope", "x", "").code(), StatusCode::kNotFound);
  ASSERT_TRUE(host->Create("counter", "c1", Msgpack({{"start", 0}})).ok());
  EXPECT_EQ(host->Create("counter", "c1", Msgpack({{"start", 0}})).code(),
            StatusCode::kAlreadyExists);
  Status refused = host->Create("counter", "c2", Msgpack({{"start", "x"}}));
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(host->Get("c2").has_value());
  ASSERT_EQ(host->List().size(), 1u);
  EXPECT_EQ(host->List()[0].status, ShardStatus::kRunning);
}

TEST_F(ShardHostTest, InputsAppliedInOrderBeforeTheNextTick) {
  REQUIRE_KIND("counter", Kind("counter"));
  auto host = ManualHost();
  ASSERT_TRUE(host->Create("counter", "c1", Msgpack({{"start", 5}})).ok());
  StepTo(*host, 49'999);
  EXPECT_TRUE(sink_.frames().empty());
  StepTo(*host, 50'000);
  ASSERT_EQ(sink_.frames().size(), 1u);
  EXPECT_EQ(sink_.frames()[0].tick, 1u);

  ASSERT_TRUE(
      host->SubmitInput("c1", "alice", 10, Msgpack({{"add", {{"n", 2}}}}))
          .ok());
  ASSERT_TRUE(
      host->SubmitInput("c1", "bob", 11, Msgpack({{"add", {{"n", -1}}}})).ok());
  ASSERT_TRUE(
      host->SubmitInput("c1", "bob", 12, Msgpack({{"add", {{"n", 3}}}})).ok());
  EXPECT_EQ(host->Get("c1")->queued_inputs, 3u);
  StepTo(*host, 100'000);
  auto frames = sink_.frames();
  ASSERT_EQ(frames.size(), 2u);
  const auto& f = frames[1];
  EXPECT_EQ(f.tick, 2u);
  ASSERT_EQ(f.inputs.size(), 3u);
  EXPECT_EQ(f.inputs[0].seq, 10u);
  EXPECT_TRUE(f.inputs[0].accepted);
  EXPECT_EQ(f.inputs[1].seq, 11u);
  EXPECT_FALSE(f.inputs[1].accepted);
  EXPECT_EQ(f.inputs[1].rejection, "n must be positive");
  EXPECT_EQ(f.inputs[2].seq, 12u);
  json snap = FromMsgpack(f.snapshot);
  EXPECT_EQ(snap["value"], 10);
  EXPECT_EQ(snap["last_sid"], "bob");

  ShardInfo info = *host->Get("c1");
  EXPECT_EQ(info.tick, 2u);
  EXPECT_EQ(info.queued_inputs, 0u);
  EXPECT_GT(info.fuel_used, 0);
}

TEST_F(ShardHostTest, AnHourOnAbsoluteDeadlinesWithoutDrift) {
  REQUIRE_KIND("counter", Kind("counter", 20));
  HostOptions options;
  options.save_interval_us = 0;
  // The tick events say which ticks overran, as they happen.
  std::atomic<uint64_t> events{0}, overrun_events{0};
  options.on_tick = [&](std::string_view, const TickEvent& tick) {
    ++events;
    if (tick.overrun) ++overrun_events;
  };
  auto host = ManualHost(options);
  ASSERT_TRUE(host->Create("counter", "c1", Msgpack({{"start", 0}})).ok());
  ASSERT_TRUE(host->AddSubscriber("c1", "alice").ok());  // not idle
  sink_.set_keep_frames(false);
  // Step every 7 ms of fake time for an hour (ticks are up to 7 ms late,
  // never a whole period).
  const int64_t end = 3600 * kSecond;
  for (int64_t t = 7000; t < end; t += 7000) StepTo(*host, t);
  StepTo(*host, end);
  ShardInfo info = *host->Get("c1");
  EXPECT_EQ(info.tick, 72'000u);
  EXPECT_EQ(info.overruns, 0u);
  // Falling 3.5 periods behind counts one overrun and skips ahead.
  StepTo(*host, end + 175'000);
  info = *host->Get("c1");
  EXPECT_EQ(info.tick, 72'001u);
  EXPECT_EQ(info.overruns, 1u);
  StepTo(*host, end + 200'000);  // back on the grid
  info = *host->Get("c1");
  EXPECT_EQ(info.tick, 72'002u);
  EXPECT_EQ(info.overruns, 1u);
  EXPECT_EQ(events.load(), 72'002u);
  EXPECT_EQ(overrun_events.load(), 1u);
}

TEST_F(ShardHostTest, StopIdleAndRetention) {
  KindConfig kind = Kind("counter");
  kind.idle_shutdown_secs = 2;
  REQUIRE_KIND("counter", kind);
  HostOptions options;
  options.stopped_retention_us = 5 * kSecond;
  auto host = ManualHost(options);
  ASSERT_TRUE(host->Create("counter", "a", Msgpack({{"start", 0}})).ok());
  ASSERT_TRUE(host->Create("counter", "b", Msgpack({{"start", 0}})).ok());
  ASSERT_TRUE(host->AddSubscriber("b", "alice").ok());
  ASSERT_TRUE(host->AddSubscriber("b", "alice").ok());  // two connections

  ASSERT_TRUE(host->Stop("a").ok());
  StepTo(*host, 10'000);
  ShardInfo a = *host->Get("a");
  EXPECT_EQ(a.status, ShardStatus::kStopped);
  EXPECT_EQ(a.stop_reason, StopReason::kStopped);
  EXPECT_EQ(host->Stop("a").code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(host->SubmitInput("a", "x", 1, "").code(),
            StatusCode::kFailedPrecondition);

  // b has subscribers: never idle.
  for (int64_t t = 50'000; t <= 4 * kSecond; t += 50'000) StepTo(*host, t);
  EXPECT_EQ(host->Get("b")->status, ShardStatus::kRunning);
  EXPECT_EQ(host->Get("b")->subscribers, 1u);
  ASSERT_TRUE(host->RemoveSubscriber("b", "alice").ok());
  EXPECT_EQ(host->Get("b")->subscribers, 1u);  // one connection left
  ASSERT_TRUE(host->RemoveSubscriber("b", "alice").ok());
  EXPECT_EQ(host->RemoveSubscriber("b", "alice").code(), StatusCode::kNotFound);
  for (int64_t t = 4 * kSecond + 50'000; t < 6 * kSecond; t += 50'000) {
    StepTo(*host, t);
  }
  EXPECT_EQ(host->Get("b")->status, ShardStatus::kRunning);
  StepTo(*host, 6 * kSecond);
  EXPECT_EQ(host->Get("b")->status, ShardStatus::kStopped);
  EXPECT_EQ(host->Get("b")->stop_reason, StopReason::kIdle);

  auto stops = sink_.stops();
  ASSERT_EQ(stops.size(), 2u);
  EXPECT_EQ(stops[0].shard, "a");
  EXPECT_EQ(stops[1].shard, "b");
  EXPECT_EQ(stops[1].reason, StopReason::kIdle);

  // Stopped shards stay listed until the retention has passed: "a"
  // (stopped at 0.01 s) went at 5.01 s, "b" (stopped at 6 s) goes at 11 s.
  EXPECT_FALSE(host->Get("a").has_value());
  StepTo(*host, 11 * kSecond - 1);
  EXPECT_TRUE(host->Get("b").has_value());
  StepTo(*host, 11 * kSecond);
  EXPECT_TRUE(host->List().empty());
  // The id is free again.
  EXPECT_TRUE(host->Create("counter", "a", Msgpack({{"start", 0}})).ok());
}

TEST_F(ShardHostTest, FinishedAndFailedShardsStopWhileOthersTick) {
  REQUIRE_KIND("counter", Kind("counter"));
  REQUIRE_KIND("panicker", Kind("panicker"));
  auto host = ManualHost();
  ASSERT_TRUE(host->Create("counter", "c", Msgpack({{"start", 0}})).ok());
  ASSERT_TRUE(host->Create("counter", "f", Msgpack({{"start", 0}})).ok());
  ASSERT_TRUE(host->Create("panicker", "p", Msgpack({{"at", 2}})).ok());
  ASSERT_TRUE(
      host->SubmitInput("f", "alice", 1, Msgpack({{"finish", json::object()}}))
          .ok());
  for (int64_t t = 50'000; t <= kSecond; t += 50'000) StepTo(*host, t);

  ShardInfo f = *host->Get("f");
  EXPECT_EQ(f.stop_reason, StopReason::kFinished);
  ShardInfo p = *host->Get("p");
  EXPECT_EQ(p.status, ShardStatus::kStopped);
  EXPECT_EQ(p.stop_reason, StopReason::kFailed);
  EXPECT_THAT(p.last_error, HasSubstr("panic: "));
  EXPECT_EQ(p.tick, 1u);
  ShardInfo c = *host->Get("c");
  EXPECT_EQ(c.status, ShardStatus::kRunning);
  EXPECT_EQ(c.tick, 20u);
}

TEST_F(ShardHostTest, PeriodicSaveShutdownSaveAndRestore) {
  REQUIRE_KIND("counter", Kind("counter"));
  HostOptions options;
  options.save_interval_us = kSecond;
  auto host = ManualHost(options);
  ASSERT_TRUE(host->Create("counter", "c1", Msgpack({{"start", 3}})).ok());
  ASSERT_TRUE(host->AddSubscriber("c1", "alice").ok());
  for (int64_t t = 50'000; t < kSecond; t += 50'000) StepTo(*host, t);
  EXPECT_EQ(store_.saves(), 0u);
  StepTo(*host, kSecond);
  EXPECT_EQ(store_.saves(), 1u);
  ASSERT_TRUE(
      host->SubmitInput("c1", "alice", 1, Msgpack({{"add", {{"n", 4}}}})).ok());
  StepTo(*host, kSecond + 50'000);
  json before = FromMsgpack(sink_.frames().back().snapshot);
  EXPECT_EQ(before["value"], 7);
  const ShardHost::ShutdownReport report = host->Shutdown();
  EXPECT_EQ(store_.saves(), 2u);
  EXPECT_EQ(report.running, 1u);
  EXPECT_EQ(report.saved, 1u);
  EXPECT_EQ(report.unsaved, 0u);
  EXPECT_EQ(host->Shutdown().running, 0u);  // a second call did nothing
  EXPECT_EQ(host->Create("counter", "x", "").code(),
            StatusCode::kFailedPrecondition);

  // A new host resumes from the save.
  RecordingSink sink2;
  HostOptions options2;
  options2.workers = 0;
  options2.clock = &clock_;
  ShardHost host2(&kinds_, &sink2, &store_, options2);
  ASSERT_TRUE(host2.Restore("counter", "c1", Msgpack({{"start", 3}})).ok());
  clock_.Advance(50'000);
  host2.StepForTest(clock_.NowUs());
  ASSERT_EQ(sink2.frames().size(), 1u);
  json after = FromMsgpack(sink2.frames()[0].snapshot);
  EXPECT_EQ(after["value"], 7);
  EXPECT_EQ(after["ticks"], before["ticks"].get<int>() + 1);

  // Stopping forgets the saved state.
  ASSERT_TRUE(host2.Stop("c1").ok());
  host2.StepForTest(clock_.NowUs());
  EXPECT_FALSE(store_.Load("c1")->has_value());
}

// The cluster's self-fence: every shard stops before its next tick with
// kFenced, nothing is saved from then on (not even at Shutdown), the saved
// state stays for whoever runs the shard next, no shard starts while
// fenced, and after Unfence it restores from the last save.
TEST_F(ShardHostTest, AFenceStopsEveryShardUnsavedAndKeepsItsSave) {
  REQUIRE_KIND("counter", Kind("counter"));
  HostOptions options;
  options.save_interval_us = kSecond;
  auto host = ManualHost(options);
  ASSERT_TRUE(host->Create("counter", "c1", Msgpack({{"start", 3}})).ok());
  ASSERT_TRUE(host->Create("counter", "c2", Msgpack({{"start", 5}})).ok());
  ASSERT_TRUE(host->AddSubscriber("c1", "alice").ok());
  ASSERT_TRUE(host->AddSubscriber("c2", "bob").ok());
  for (int64_t t = 50'000; t <= kSecond; t += 50'000) StepTo(*host, t);
  EXPECT_EQ(store_.saves(), 2u);
  ASSERT_TRUE(
      host->SubmitInput("c1", "alice", 1, Msgpack({{"add", {{"n", 4}}}})).ok());
  host->Fence("no heartbeat has landed for 5000 ms");
  EXPECT_TRUE(host->fenced());
  const size_t frames = sink_.frames().size();
  StepTo(*host, kSecond + 50'000);
  EXPECT_EQ(sink_.frames().size(), frames);  // no tick after the fence
  ASSERT_EQ(sink_.stop_count(StopReason::kFenced), 2u);
  EXPECT_EQ(sink_.stops().back().message,
            "no heartbeat has landed for 5000 ms");
  EXPECT_EQ(host->Get("c1")->stop_reason, StopReason::kFenced);
  // The saves are kept, unchanged: the input after the fence is not in them.
  ASSERT_TRUE(store_.Load("c1")->has_value());
  EXPECT_EQ(store_.saves(), 2u);
  EXPECT_EQ(host->Create("counter", "c3", "").code(), StatusCode::kUnavailable);
  // Back under a new epoch: restored from the last save.
  host->Unfence();
  ASSERT_TRUE(host->Restore("counter", "c1", Msgpack({{"start", 3}})).ok());
  StepTo(*host, kSecond + 100'000);
  EXPECT_EQ(FromMsgpack(sink_.frames().back().snapshot)["value"], 3);
  // A fence before Shutdown: nothing is saved at the end either.
  host->Fence("lapsed");
  EXPECT_EQ(host->Shutdown().saved, 0u);
  EXPECT_EQ(store_.saves(), 2u);
}

TEST_F(ShardHostTest, RefusedRestoreStaysOutOfRunning) {
  REQUIRE_KIND("badrestore", Kind("badrestore"));
  auto host = ManualHost();
  ASSERT_TRUE(store_.Save("b1", "saved bytes").ok());
  Status st = host->Restore("badrestore", "b1", Msgpack(json::object()));
  EXPECT_FALSE(st.ok());
  EXPECT_THAT(st.message(), HasSubstr("state is corrupt"));
  ShardInfo info = *host->Get("b1");
  EXPECT_EQ(info.status, ShardStatus::kStopped);
  EXPECT_EQ(info.stop_reason, StopReason::kFailed);
  EXPECT_THAT(info.last_error, HasSubstr("state is corrupt"));
  EXPECT_TRUE(store_.Load("b1")->has_value());  // kept for a fixed module
  EXPECT_EQ(host->Restore("badrestore", "nosave", "").code(),
            StatusCode::kNotFound);
}

TEST_F(ShardHostTest, InputQueueIsBounded) {
  REQUIRE_KIND("counter", Kind("counter"));
  HostOptions options;
  options.max_queued_inputs = 2;
  auto host = ManualHost(options);
  ASSERT_TRUE(host->Create("counter", "c1", Msgpack({{"start", 0}})).ok());
  const std::string add = Msgpack({{"add", {{"n", 1}}}});
  EXPECT_TRUE(host->SubmitInput("c1", "a", 1, add).ok());
  EXPECT_TRUE(host->SubmitInput("c1", "a", 2, add).ok());
  EXPECT_EQ(host->SubmitInput("c1", "a", 3, add).code(),
            StatusCode::kResourceExhausted);
  EXPECT_EQ(host->SubmitInput("nope", "a", 1, add).code(),
            StatusCode::kNotFound);
  StepTo(*host, 50'000);
  EXPECT_TRUE(host->SubmitInput("c1", "a", 3, add).ok());
}

TEST_F(ShardHostTest, InputQueueGrowsWithSubscribers) {
  REQUIRE_KIND("counter", Kind("counter"));
  HostOptions options;
  options.max_queued_inputs = 2;
  options.max_queued_inputs_per_subscriber = 2;
  auto host = ManualHost(options);
  ASSERT_TRUE(host->Create("counter", "c1", Msgpack({{"start", 0}})).ok());
  for (const char* sub : {"a", "b", "c"}) {
    ASSERT_TRUE(host->AddSubscriber("c1", sub).ok());
  }
  ASSERT_TRUE(host->AddSubscriber("c1", "a").ok());  // a second connection
  const std::string add = Msgpack({{"add", {{"n", 1}}}});
  for (uint64_t seq = 1; seq <= 6; ++seq) {
    EXPECT_TRUE(host->SubmitInput("c1", "a", seq, add).ok()) << seq;
  }
  EXPECT_EQ(host->SubmitInput("c1", "b", 7, add).code(),
            StatusCode::kResourceExhausted);
}

TEST_F(ShardHostTest, WorkersTickAndStopOnRequest) {
  REQUIRE_KIND("counter", Kind("counter", 200));
  HostOptions options;
  options.workers = 2;
  ShardHost host(&kinds_, &sink_, &store_, options);
  ASSERT_EQ(host.worker_count(), 2u);
  ASSERT_TRUE(host.Create("counter", "c1", Msgpack({{"start", 0}})).ok());
  ASSERT_TRUE(host.Create("counter", "c2", Msgpack({{"start", 0}})).ok());
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (host.Get("c1")->tick < 5 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_GE(host.Get("c1")->tick, 5u);
  ASSERT_TRUE(host.Stop("c1").ok());
  while (sink_.stops().empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_EQ(sink_.stops().size(), 1u);
  EXPECT_EQ(sink_.stops()[0].shard, "c1");
  EXPECT_EQ(sink_.stops()[0].reason, StopReason::kStopped);
  EXPECT_EQ(host.Get("c2")->status, ShardStatus::kRunning);
  // Frames of one shard arrive in tick order.
  uint64_t last = 0;
  for (const auto& f : sink_.frames()) {
    if (f.shard != "c1") continue;
    EXPECT_EQ(f.tick, last + 1);
    last = f.tick;
  }
  host.Shutdown();
}

// Many shards trap on every worker at once, 10,000 times in total, while
// healthy shards keep ticking on the same workers.
TEST_F(ShardHostTest, TenThousandTrapsOnAllWorkersDoNotDisturbHealthyShards) {
  KindConfig healthy = Kind("counter", 100);
  REQUIRE_KIND("counter", healthy);
  KindConfig panicky = Kind("panicker", 1000);
  REQUIRE_KIND("panicker", panicky);
  KindConfig deep = Kind("recurse", 1000);
  const bool have_recurse = AddKind("recurse", deep);

  sink_.set_keep_frames(false);
  HostOptions options;
  options.workers = std::max(2u, std::thread::hardware_concurrency());
  options.stopped_retention_us = 0;
  options.save_interval_us = 0;
  ShardHost host(&kinds_, &sink_, &store_, options);
  const int kHealthy = 2 * options.workers;
  for (int i = 0; i < kHealthy; ++i) {
    ASSERT_TRUE(host.Create("counter", "healthy-" + std::to_string(i),
                            Msgpack({{"start", 0}}))
                    .ok());
    ASSERT_TRUE(host.AddSubscriber("healthy-" + std::to_string(i), "x").ok());
  }
  auto healthy_ticks = [&] {
    uint64_t min = UINT64_MAX;
    for (int i = 0; i < kHealthy; ++i) {
      auto info = host.Get("healthy-" + std::to_string(i));
      EXPECT_TRUE(info.has_value());
      if (!info) return uint64_t{0};
      EXPECT_EQ(info->status, ShardStatus::kRunning) << info->last_error;
      min = std::min(min, info->tick);
    }
    return min;
  };
  const uint64_t ticks_before = healthy_ticks();

  constexpr int kTotal = 10'000;
  constexpr int kBatch = 250;
  const std::string panic_params = Msgpack({{"at", 1}});
  const std::string empty_params = Msgpack(json::object());
  int created = 0;
  for (int batch = 0; created < kTotal; ++batch) {
    for (int i = 0; i < kBatch && created < kTotal; ++i, ++created) {
      std::string id = "trap-" + std::to_string(created);
      bool recurse = have_recurse && created % 10 == 0;
      ASSERT_TRUE(host.Create(recurse ? "recurse" : "panicker", id,
                              recurse ? empty_params : panic_params)
                      .ok());
    }
    // Let this batch fail before the next one (bounds live instances).
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (sink_.stop_count(StopReason::kFailed) <
               static_cast<size_t>(created) &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ASSERT_EQ(sink_.stop_count(StopReason::kFailed),
              static_cast<size_t>(created));
  }
  EXPECT_EQ(sink_.stop_count(StopReason::kFailed), static_cast<size_t>(kTotal));
  // Every healthy shard is still running and ticks on past where it was
  // before the traps: waited for (30 s give-up), since how many ticks fit
  // in the storm depends on the machine's speed.
  auto min_tick = [&] {
    uint64_t min = UINT64_MAX;
    for (int i = 0; i < kHealthy; ++i) {
      auto info = host.Get("healthy-" + std::to_string(i));
      if (!info || info->status != ShardStatus::kRunning) return uint64_t{0};
      min = std::min(min, info->tick);
    }
    return min;
  };
  const auto give_up =
      std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (min_tick() <= ticks_before &&
         std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const uint64_t ticks_after = healthy_ticks();
  EXPECT_GT(ticks_after, ticks_before) << "healthy shards stopped ticking";
  host.Shutdown();
}

// Two hosts on one given (manual) pool: both tick on it; a host's Shutdown
// takes only its own shards off, and the pool outlives it.
TEST_F(ShardHostTest, HostsShareAGivenPool) {
  REQUIRE_KIND("counter", Kind("counter"));
  guest::WorkerPool::Options pool_options;
  pool_options.threads = 0;
  pool_options.clock = &clock_;
  guest::WorkerPool pool(pool_options);
  HostOptions options;
  options.pool = &pool;
  options.clock = &clock_;
  options.workers = 4;  // ignored: the pool is given
  auto a = std::make_unique<ShardHost>(&kinds_, &sink_, &store_, options);
  ShardHost b(&kinds_, &sink_, &store_, options);
  EXPECT_EQ(a->worker_count(), 0u);
  ASSERT_TRUE(a->Create("counter", "a1", Msgpack({{"start", 0}})).ok());
  ASSERT_TRUE(b.Create("counter", "b1", Msgpack({{"start", 0}})).ok());
  EXPECT_EQ(pool.task_count(), 2u);
  for (int64_t t = 50'000; t <= 200'000; t += 50'000) {
    clock_.Set(t);
    pool.RunPass(t);
  }
  EXPECT_EQ(a->Get("a1")->tick, 4u);
  EXPECT_EQ(b.Get("b1")->tick, 4u);

  // A stopped record replaced by a new shard leaves the pool at once.
  ASSERT_TRUE(b.Stop("b1").ok());
  pool.RunPass(clock_.NowUs());
  ASSERT_EQ(b.Get("b1")->status, ShardStatus::kStopped);
  ASSERT_TRUE(b.Create("counter", "b1", Msgpack({{"start", 0}})).ok());
  EXPECT_EQ(pool.task_count(), 2u);

  a->Shutdown();
  EXPECT_EQ(pool.task_count(), 1u);
  EXPECT_EQ(store_.saves(), 1u);  // a1 saved at Shutdown
  a.reset();
  for (int64_t t = 250'000; t <= 400'000; t += 50'000) {
    clock_.Set(t);
    pool.RunPass(t);
  }
  EXPECT_EQ(b.Get("b1")->tick, 4u);
  b.Shutdown();
  EXPECT_EQ(pool.task_count(), 0u);
}

}  // namespace
}  // namespace tessera::shard
