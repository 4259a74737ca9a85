// GuestShard against the real test guests (skipped when they are not built).
#include "shard/guest_shard.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "guest/watchdog.h"
#include "shard/lag_compensation.h"
#include "shard/test_guests.h"

namespace tessera::shard {
namespace {

using ::tessera::shard::testing::FromMsgpack;
using ::tessera::shard::testing::Msgpack;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using json = nlohmann::json;

KindConfig Kind(std::string name) {
  KindConfig kind;
  kind.name = std::move(name);
  return kind;
}

std::vector<PendingInput> Inputs(
    std::initializer_list<std::pair<std::string, json>> list) {
  std::vector<PendingInput> out;
  uint64_t seq = 0;
  for (const auto& [sid, input] : list) {
    out.push_back(PendingInput{sid, ++seq, Msgpack(input), {}, {}});
  }
  return out;
}

TEST(GuestShardTest, CounterAppliesInputsAndSnapshots) {
  TESSERA_LOAD_GUEST(module, "counter", 64);
  auto shard = GuestShard::Create(module, Kind("counter"), "c1",
                                  Msgpack({{"start", 5}}));
  ASSERT_TRUE(shard.ok()) << shard.status().ToString();
  GuestShard& g = **shard;

  StepResult r = g.Step(Inputs({{"alice", {{"add", {{"n", 2}}}}},
                                {"bob", {{"add", {{"n", 0}}}}},
                                {"bob", {{"add", {{"n", 3}}}}}}),
                        50000);
  ASSERT_TRUE(r.outcome.running()) << r.outcome.message;
  ASSERT_EQ(r.inputs.size(), 3u);
  EXPECT_TRUE(r.inputs[0].accepted);
  EXPECT_EQ(r.inputs[0].seq, 1u);
  EXPECT_FALSE(r.inputs[1].accepted);
  EXPECT_EQ(r.inputs[1].rejection, "n must be positive");
  EXPECT_TRUE(r.inputs[2].accepted);
  json snap = FromMsgpack(r.snapshot);
  EXPECT_EQ(snap["value"], 10);
  EXPECT_EQ(snap["ticks"], 1);
  EXPECT_EQ(snap["last_sid"], "bob");
  EXPECT_EQ(g.ticks(), 1u);
  EXPECT_GT(g.fuel_used(), 0);
}

// An input with a rewind goes to tessera_apply_input_at (the lagcomp guest
// reports what the rewind said), one without to tessera_apply_input.
TEST(GuestShardTest, RewindGoesToApplyInputAt) {
  TESSERA_LOAD_GUEST(module, "lagcomp", 64);
  auto shard = GuestShard::Create(module, Kind("lagcomp"), "l1", "");
  ASSERT_TRUE(shard.ok()) << shard.status().ToString();
  GuestShard& g = **shard;
  EXPECT_TRUE(g.has_apply_input_at());
  EXPECT_TRUE(g.has_hook(Hook::kLagCompensation));
  replication::DrawnPicture picture;
  picture.view_tick = 2.5;
  picture.now_tick = 3;
  picture.entities = {{10, 1, 2, 3}, {12, 4, 5, 6}};
  std::vector<PendingInput> inputs =
      Inputs({{"alice", {{"probe", {{"id", 10}}}}},
              {"alice", {{"probe", {{"id", 10}}}}},
              {"alice", {{"probe", {{"id", 11}}}}},
              {"alice", {{"probe", {{"id", 10}}}}}});
  inputs[1].rewind = EncodeRewind(picture);
  inputs[2].rewind = EncodeRewind(picture);
  inputs[3].rewind = "not a rewind";
  StepResult r = g.Step(inputs, 50000);
  ASSERT_TRUE(r.outcome.running()) << r.outcome.message;
  ASSERT_EQ(r.inputs.size(), 4u);
  EXPECT_EQ(r.inputs[0].rejection, "apply_input: probe 10");
  EXPECT_EQ(r.inputs[1].rejection, "at 2.5 now 3 behind 0.5: 10 at (1, 2, 3)");
  EXPECT_EQ(r.inputs[2].rejection, "at 2.5 now 3 behind 0.5: 11 not drawn");
  EXPECT_THAT(r.inputs[3].rejection, StartsWith("abi: malformed rewind: "));
}

// A rewind for a module without tessera_apply_input_at (the host never
// builds one: lag compensation needs the export) fails the shard.
TEST(GuestShardTest, RewindWithoutApplyInputAtFailsTheShard) {
  TESSERA_LOAD_GUEST(module, "counter", 64);
  auto shard = GuestShard::Create(module, Kind("counter"), "c1", "");
  ASSERT_TRUE(shard.ok()) << shard.status().ToString();
  GuestShard& g = **shard;
  EXPECT_FALSE(g.has_apply_input_at());
  InputResult r = g.ApplyInput("alice", Msgpack({{"add", {{"n", 1}}}}),
                               std::string_view("rewind"));
  EXPECT_FALSE(r.accepted);
  EXPECT_EQ(r.rejection, "shard failed");
  EXPECT_THAT(g.failure(), StartsWith("abi: the module exports no function"));
}

TEST(GuestShardTest, InitRefusalCarriesTheModulesText) {
  TESSERA_LOAD_GUEST(module, "counter", 64);
  auto shard = GuestShard::Create(module, Kind("counter"), "c1",
                                  Msgpack({{"start", "not a number"}}));
  ASSERT_FALSE(shard.ok());
  EXPECT_EQ(shard.status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(shard.status().message().empty());
}

TEST(GuestShardTest, InitErrorTextBecomesTheStatus) {
  TESSERA_LOAD_GUEST(module, "initfail", 64);
  auto shard = GuestShard::Create(module, Kind("initfail"), "i1",
                                  Msgpack({{"reason", "no map"}}));
  ASSERT_FALSE(shard.ok());
  EXPECT_EQ(shard.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(shard.status().message(), "init failed: no map");
  // No params at all: the guest's defaults apply.
  shard = GuestShard::Create(module, Kind("initfail"), "i1", "");
  EXPECT_EQ(shard.status().message(), "init failed: on purpose");
}

TEST(GuestShardTest, LogIsCapturedInABoundedBuffer) {
  TESSERA_LOAD_GUEST(module, "logger", 64);
  int forwarded = 0;
  GuestEnv env;
  env.log_lines = 3;
  env.forward_log = [&](int, std::string_view) { ++forwarded; };
  auto shard = GuestShard::Create(module, Kind("logger"), "l1", "", env);
  ASSERT_TRUE(shard.ok()) << shard.status().ToString();
  ASSERT_TRUE((*shard)->Step({}, 50000).outcome.running());
  ASSERT_TRUE((*shard)->Step({}, 50000).outcome.running());
  std::vector<LogLine> log = (*shard)->recent_log();
  ASSERT_EQ(log.size(), 3u);
  for (const LogLine& line : log) {
    EXPECT_THAT(line.text, HasSubstr("tick 2"));
    EXPECT_GE(line.level, 0);
    EXPECT_LE(line.level, 3);
  }
  EXPECT_GE(forwarded, 8);  // 4 levels x 2 ticks, plus printf lines
  EXPECT_TRUE((*shard)->last_panic().empty());
}

TEST(GuestShardTest, FinishStopsWithReasonFinished) {
  TESSERA_LOAD_GUEST(module, "counter", 64);
  auto shard = GuestShard::Create(module, Kind("counter"), "c1",
                                  Msgpack({{"start", 0}}));
  ASSERT_TRUE(shard.ok()) << shard.status().ToString();
  StepResult r =
      (*shard)->Step(Inputs({{"alice", {{"finish", json::object()}}}}), 50000);
  EXPECT_EQ(r.outcome.stop, StopReason::kFinished) << r.outcome.message;
  EXPECT_EQ(r.outcome.message, "done");
  EXPECT_FALSE(r.snapshot.empty());  // the final state still goes out
  EXPECT_TRUE((*shard)->finished());
  // Once finished the guest is not called again.
  EXPECT_EQ((*shard)->Tick(50000).stop, StopReason::kFinished);
  InputResult late =
      (*shard)->ApplyInput("bob", Msgpack({{"add", {{"n", 1}}}}));
  EXPECT_FALSE(late.accepted);
}

TEST(GuestShardTest, SameInputsGiveSameSnapshotsAndFuel) {
  TESSERA_LOAD_GUEST(module, "counter", 64);
  auto run = [&](std::vector<std::string>* snapshots) -> int64_t {
    auto shard = GuestShard::Create(module, Kind("counter"), "c1",
                                    Msgpack({{"start", 1}}));
    EXPECT_TRUE(shard.ok());
    for (int t = 0; t < 50; ++t) {
      auto inputs =
          Inputs({{"p" + std::to_string(t % 3), {{"add", {{"n", t % 4}}}}}});
      StepResult r = (*shard)->Step(inputs, 50000);
      EXPECT_TRUE(r.outcome.running());
      snapshots->push_back(r.snapshot);
    }
    return (*shard)->fuel_used();
  };
  std::vector<std::string> a, b;
  int64_t fuel_a = run(&a);
  int64_t fuel_b = run(&b);
  EXPECT_EQ(a, b);
  EXPECT_EQ(fuel_a, fuel_b);
  EXPECT_GT(fuel_a, 0);
}

TEST(GuestShardTest, SaveRestoreGivesTheSameNextSnapshot) {
  TESSERA_LOAD_GUEST(module, "counter", 64);
  const std::string params = Msgpack({{"start", 7}});
  auto original = GuestShard::Create(module, Kind("counter"), "c1", params);
  ASSERT_TRUE(original.ok());
  for (int t = 0; t < 5; ++t) {
    (*original)->Step(Inputs({{"alice", {{"add", {{"n", t + 1}}}}}}), 50000);
  }
  auto saved = (*original)->Save();
  ASSERT_TRUE(saved.ok()) << saved.status().ToString();
  ASSERT_TRUE(saved->has_value()) << "counter implements save";

  auto restored =
      GuestShard::Restore(module, Kind("counter"), "c1", params, **saved);
  ASSERT_TRUE(restored.ok()) << restored.status().ToString();
  auto next = Inputs({{"bob", {{"add", {{"n", 4}}}}}});
  StepResult a = (*original)->Step(next, 50000);
  StepResult b = (*restored)->Step(next, 50000);
  ASSERT_TRUE(a.outcome.running());
  ASSERT_TRUE(b.outcome.running()) << b.outcome.message;
  EXPECT_EQ(FromMsgpack(a.snapshot), FromMsgpack(b.snapshot));
  EXPECT_EQ(a.snapshot, b.snapshot);
}

TEST(GuestShardTest, RefusedRestoreKeepsTheModulesMessage) {
  TESSERA_LOAD_GUEST(module, "badrestore", 64);
  auto shard = GuestShard::Restore(module, Kind("badrestore"), "b1",
                                   Msgpack(json::object()), "whatever");
  ASSERT_FALSE(shard.ok());
  EXPECT_EQ(shard.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(shard.status().message(), HasSubstr("state is corrupt"));
}

TEST(GuestShardTest, InfiniteLoopRunsOutOfFuelDeterministically) {
  TESSERA_LOAD_GUEST(module, "spin", 64);
  KindConfig kind = Kind("spin");
  kind.max_run_ms = 60000;       // let fuel, not the watchdog, stop it
  kind.tick_budget_ms = 600000;  // and not the tick budget
  auto run = [&]() -> std::pair<std::string, int64_t> {
    auto shard =
        GuestShard::Create(module, kind, "s1", Msgpack({{"mode", "loop"}}));
    EXPECT_TRUE(shard.ok()) << shard.status().ToString();
    if (!shard.ok()) return {"", 0};
    StepResult r = (*shard)->Step({}, 50000);
    EXPECT_EQ(r.outcome.stop, StopReason::kFailed);
    return {r.outcome.message, (*shard)->fuel_used()};
  };
  auto [message_a, fuel_a] = run();
  auto [message_b, fuel_b] = run();
  EXPECT_EQ(message_a,
            "fuel exhausted: the tick used more than 200000000 fuel");
  EXPECT_EQ(message_b, message_a);
  EXPECT_EQ(fuel_a, fuel_b);
  EXPECT_GT(fuel_a, 200000000);
}

// A spin shard looping forever in its tick, stopped only by `watchdog` at
// maxRunMs 100 (fuel and the CPU budget never run out).
Result<std::unique_ptr<GuestShard>> SpinForever(
    std::shared_ptr<const wasm::CompiledModule> module,
    guest::Watchdog& watchdog) {
  GuestEnv env;
  env.watchdog = &watchdog;
  KindConfig kind = Kind("spin");
  kind.fuel_per_tick = 1000000000000000ull;  // 1e15: fuel never runs out
  kind.max_run_ms = 100;
  kind.tick_budget_ms = 600000;
  return GuestShard::Create(module, kind, "s1", Msgpack({{"mode", "loop"}}),
                            env);
}

// The watchdog on a fake clock: the tick's deadline is exactly maxRunMs
// after the call starts, nothing fires before it, and firing it interrupts
// the loop (the tick fails with the watchdog's text). No wall-clock bound:
// the stop latency is interrupt_bench's figure (bench/).
TEST(GuestShardTest, WatchdogStopsALongLoopAtMaxRunMs) {
  TESSERA_LOAD_GUEST(module, "spin", 64);
  FakeClock clock(1'000'000);
  guest::Watchdog watchdog(&clock);  // not started: this test polls it
  auto shard = SpinForever(module, watchdog);
  ASSERT_TRUE(shard.ok()) << shard.status().ToString();
  ASSERT_EQ(watchdog.armed(), 0u);
  int fired_early = -1;
  int fired_at_deadline = -1;
  std::thread poller([&] {
    // Waits for the tick's call to arm its deadline (30 s give-up).
    const auto give_up =
        std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (watchdog.armed() == 0 &&
           std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    fired_early = watchdog.Poll(clock.NowUs() + 100'000 - 1);
    clock.Advance(100'000);
    fired_at_deadline = watchdog.Poll(clock.NowUs());
  });
  TickOutcome out = (*shard)->Tick(50000);
  poller.join();
  EXPECT_EQ(fired_early, 0) << "the watchdog fired before maxRunMs";
  EXPECT_EQ(fired_at_deadline, 1) << "the tick's deadline was not armed";
  EXPECT_EQ(out.stop, StopReason::kFailed);
  EXPECT_EQ(out.message,
            "watchdog: call ran longer than maxRunMs 100 ms (the tick)");
  EXPECT_EQ(watchdog.armed(), 0u);
}

// The same with the watchdog's own polling thread on the real clock: the
// loop is interrupted, not before maxRunMs. How soon after it is a figure
// to read (printed here; bench/interrupt_bench.cc), not a bound to assert.
TEST(GuestShardTest, WatchdogThreadStopsALongLoop) {
  TESSERA_LOAD_GUEST(module, "spin", 64);
  guest::Watchdog watchdog(RealClock::Get());
  watchdog.Start();
  auto shard = SpinForever(module, watchdog);
  ASSERT_TRUE(shard.ok()) << shard.status().ToString();
  const int64_t start = RealClock::Get()->NowUs();
  TickOutcome out = (*shard)->Tick(50000);
  const int64_t elapsed_ms = (RealClock::Get()->NowUs() - start) / 1000;
  EXPECT_EQ(out.stop, StopReason::kFailed);
  EXPECT_EQ(out.message,
            "watchdog: call ran longer than maxRunMs 100 ms (the tick)");
  EXPECT_GE(elapsed_ms, 100);  // a lower bound: never flakes
  std::printf("[ figure ] watchdog stop after %lld ms (maxRunMs 100)\n",
              static_cast<long long>(elapsed_ms));
  EXPECT_EQ(watchdog.armed(), 0u);
}

TEST(GuestShardTest, TickBudgetCountsCpuOfTheWholeTick) {
  TESSERA_LOAD_GUEST(module, "counter", 64);
  // A CPU clock that reports 130 ms between any two readings.
  class SlowCpu final : public Clock {
   public:
    int64_t NowUs() const override { return (calls_++) * 130000; }

   private:
    mutable int64_t calls_ = 0;
  } cpu;
  GuestEnv env;
  env.cpu_clock = &cpu;
  auto shard = GuestShard::Create(module, Kind("counter"), "c1",
                                  Msgpack({{"start", 0}}), env);
  ASSERT_TRUE(shard.ok());
  StepResult r = (*shard)->Step({}, 50000);
  EXPECT_EQ(r.outcome.stop, StopReason::kFailed);
  EXPECT_EQ(r.outcome.message,
            "tick budget: tick used 130 ms of CPU, budget 100 ms");
  EXPECT_TRUE(r.snapshot.empty());
}

TEST(GuestShardTest, LongTickOverRealCpuBudgetFails) {
  TESSERA_LOAD_GUEST(module, "spin", 64);
  KindConfig kind = Kind("spin");
  kind.fuel_per_tick = 1000000000000000ull;
  kind.max_run_ms = 60000;
  kind.tick_budget_ms = 5;
  // Enough iterations for well over 5 ms of CPU on any machine.
  auto shard = GuestShard::Create(
      module, kind, "s1",
      Msgpack({{"mode", "long"}, {"iterations", 200000000}}));
  ASSERT_TRUE(shard.ok()) << shard.status().ToString();
  StepResult r = (*shard)->Step({}, 50000);
  EXPECT_EQ(r.outcome.stop, StopReason::kFailed);
  EXPECT_THAT(r.outcome.message, StartsWith("tick budget: tick used "));
  EXPECT_THAT(r.outcome.message, HasSubstr(" ms of CPU, budget 5 ms"));
}

TEST(GuestShardTest, MemoryBombCannotPassTheCap) {
  TESSERA_LOAD_GUEST(module, "membomb", 16);
  KindConfig kind = Kind("membomb");
  kind.memory_mb = 16;
  // One 1 MiB chunk per tick, so the cap is approached tick by tick.
  auto shard =
      GuestShard::Create(module, kind, "m1", Msgpack({{"chunks_per_tick", 1}}));
  ASSERT_TRUE(shard.ok()) << shard.status().ToString();
  GuestShard& g = **shard;
  int ticks = 0;
  while (ticks < 100 && g.Step({}, 50000).outcome.running()) {
    ++ticks;
    ASSERT_LE(g.memory_bytes(), 16u * 1024 * 1024);
  }
  EXPECT_TRUE(g.failed()) << "still running after 100 MiB of allocations";
  EXPECT_GE(ticks, 8);  // it did allocate for a while first
  EXPECT_THAT(g.failure(), HasSubstr("grow its memory past memoryMb 16"));
  EXPECT_EQ(g.memory_bytes(), 0u);  // released
}

TEST(GuestShardTest, DeepRecursionTrapsCleanly) {
  TESSERA_LOAD_GUEST(module, "recurse", 64);
  auto shard = GuestShard::Create(module, Kind("recurse"), "r1",
                                  Msgpack(json::object()));
  ASSERT_TRUE(shard.ok()) << shard.status().ToString();
  StepResult r = (*shard)->Step({}, 50000);
  EXPECT_EQ(r.outcome.stop, StopReason::kFailed);
  EXPECT_THAT(r.outcome.message, HasSubstr("stack exhausted"));
  // Dead shards stay dead without touching the guest again.
  EXPECT_EQ((*shard)->Tick(50000).message, r.outcome.message);
  EXPECT_FALSE((*shard)->Snapshot().ok());
}

TEST(GuestShardTest, PanicTextReachesTheFailure) {
  TESSERA_LOAD_GUEST(module, "panicker", 64);
  auto shard =
      GuestShard::Create(module, Kind("panicker"), "p1", Msgpack({{"at", 3}}));
  ASSERT_TRUE(shard.ok()) << shard.status().ToString();
  GuestShard& g = **shard;
  EXPECT_TRUE(g.Step({}, 50000).outcome.running());
  EXPECT_TRUE(g.Step({}, 50000).outcome.running());
  StepResult r = g.Step({}, 50000);
  EXPECT_EQ(r.outcome.stop, StopReason::kFailed);
  EXPECT_THAT(r.outcome.message, StartsWith("panic: "));
  ASSERT_FALSE(g.last_panic().empty());
  EXPECT_EQ(r.outcome.message, "panic: " + g.last_panic());
  std::vector<LogLine> log = g.recent_log();
  ASSERT_FALSE(log.empty());
  EXPECT_EQ(log.back().level, 4);
}

}  // namespace
}  // namespace tessera::shard
