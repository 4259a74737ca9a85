// ComputeInstance over real compute modules (tests/guests/compute_*, built
// with the C++ SDK) loaded through the real loader, with a recording
// HostCalls double in place of the engine: the ABI spec, entry calls and
// their results, and what kills an instance.
#include "wasm/instance.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <string>
#include <vector>

#include "compute/instance_test_util.h"
#include "guest/watchdog.h"
#include "wasm/loader.h"
#include "wasm/testing/wat.h"

namespace tessera::compute {
namespace {

namespace abi = compute_abi;
using json = nlohmann::json;
using test::InvokeInput;
using test::kLimits;
using test::NewInstance;
using test::RecordingCalls;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(ComputeAbiSpecTest, NamesTheComputeImportModuleAndMarker) {
  const wasm::AbiSpec& spec = ComputeAbiSpec();
  EXPECT_EQ(spec.import_module(), "tessera_compute_v1");
  EXPECT_EQ(spec.marker(), "tessera_compute_abi_v1");
  std::vector<std::string> hosts;
  for (const auto& h : spec.host_functions) hosts.push_back(h.name);
  EXPECT_THAT(hosts, ElementsAre("log", "now_ms", "random_bytes", "state_get",
                                 "state_set", "emit_event", "emit_channel",
                                 "emit_spatial", "last_error", "data", "shards",
                                 "reply"));
  std::map<std::string, bool> required;
  for (const auto& e : spec.exports) required[e.name] = e.required;
  EXPECT_TRUE(required.at("tessera_compute_init"));
  EXPECT_TRUE(required.at("tessera_compute_tick"));
  EXPECT_TRUE(required.at("tessera_compute_invoke"));
  EXPECT_FALSE(required.at("tessera_compute_event"));
  EXPECT_FALSE(required.at("_initialize"));
  EXPECT_EQ(ComputeCheckOptions(8).memory_cap_pages, 128u);
}

// A shard module is not a compute module: its import module is refused,
// naming what a compute module may import.
TEST(ComputeAbiSpecTest, TheLoaderRefusesOtherImportModules) {
  const std::vector<uint8_t> wasm = wasm::testing::Wat(R"((module
    (import "tessera_v1" "log" (func (param i32 i32 i32)))
    (memory (export "memory") 1)))");
  auto info = wasm::CheckModule(wasm, ComputeCheckOptions(16));
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.status().code(), StatusCode::kRefused);
  EXPECT_THAT(info.status().message(),
              HasSubstr("imports `tessera_v1.log`: tessera modules may "
                        "import only tessera_compute_v1.log, "));
  // A module without the marker is not a compute module.
  auto bare = wasm::CheckModule(
      wasm::testing::Wat(R"((module (memory (export "memory") 1)))"),
      ComputeCheckOptions(16));
  ASSERT_FALSE(bare.ok());
  EXPECT_THAT(bare.status().message(),
              HasSubstr("missing required export `tessera_compute_abi_v1`: "
                        "this is not a tessera compute module"));
}

TEST(ComputeInstanceTest, CounterKeepsItsCountInTheStateBlob) {
  auto inst = NewInstance("counter");
  ASSERT_NE(inst, nullptr);
  EXPECT_FALSE(inst->has_event());
  RecordingCalls calls;
  CallOutcome init = inst->Init(calls, kLimits);
  ASSERT_TRUE(init.ok) << init.error;
  EXPECT_THAT(calls.logs, ElementsAre("1 init"));
  EXPECT_GT(init.fuel_used, 0);
  for (int k = 1; k <= 3; ++k) {
    CallOutcome tick = inst->Tick(500, calls, kLimits);
    ASSERT_TRUE(tick.ok) << tick.error;
    EXPECT_TRUE(tick.output.empty());
    EXPECT_EQ(calls.state, std::to_string(k));
  }
  EXPECT_EQ(calls.logs.back(), "1 tick 3 dt 500");
  CallOutcome get = inst->Invoke(InvokeInput("get"), calls, kLimits);
  ASSERT_TRUE(get.ok) << get.error;
  EXPECT_EQ(json::parse(get.output), (json{{"count", 3}, {"stored", true}}));
}

// state_get's two calls (size, then bytes) ask the host once; a module
// without a blob sees kErrNoState and starts from zero.
TEST(ComputeInstanceTest, StateGetAsksTheHostOncePerRead) {
  auto inst = NewInstance("counter");
  ASSERT_NE(inst, nullptr);
  RecordingCalls calls;
  ASSERT_TRUE(inst->Init(calls, kLimits).ok);
  CallOutcome get = inst->Invoke(InvokeInput("get"), calls, kLimits);
  ASSERT_TRUE(get.ok) << get.error;
  EXPECT_EQ(json::parse(get.output), (json{{"count", 0}, {"stored", false}}));
  EXPECT_EQ(calls.state_gets, 1);
  calls.state = "41";
  ASSERT_TRUE(inst->Tick(100, calls, kLimits).ok);
  EXPECT_EQ(calls.state_gets, 2);
  EXPECT_EQ(calls.state, "42");
}

// The engine's revision guard refuses a stale writer: the module sees
// kErrStale with last_error's code and message.
TEST(ComputeInstanceTest, AStaleStateSetIsSurfacedToTheModule) {
  auto inst = NewInstance("counter");
  ASSERT_NE(inst, nullptr);
  RecordingCalls calls;
  ASSERT_TRUE(inst->Init(calls, kLimits).ok);
  calls.set_result = HostCallResult::Error(
      abi::kErrStale, "the tick-lease holder persisted revision 7");
  CallOutcome save =
      inst->Invoke(InvokeInput("save", {{"value", 9}}), calls, kLimits);
  ASSERT_TRUE(save.ok) << save.error;
  EXPECT_EQ(json::parse(save.output),
            (json{{"ok", false},
                  {"code", abi::kErrStale},
                  {"errorCode", "stale_state"},
                  {"message", "the tick-lease holder persisted revision 7"}}));
  EXPECT_EQ(calls.state, std::nullopt);
  // A tick's failed state_set fails the run (the SDK's status text), and
  // the instance lives on.
  CallOutcome tick = inst->Tick(100, calls, kLimits);
  EXPECT_FALSE(tick.ok);
  EXPECT_FALSE(tick.instance_dead);
  EXPECT_EQ(tick.error,
            "stale_state: the tick-lease holder persisted revision 7");
  calls.set_result = HostCallResult::Ok();
  EXPECT_TRUE(inst->Tick(100, calls, kLimits).ok);
}

TEST(ComputeInstanceTest, EchoReturnsItsInputAndCaller) {
  auto inst = NewInstance("echo");
  ASSERT_NE(inst, nullptr);
  RecordingCalls calls;
  ASSERT_TRUE(inst->Init(calls, kLimits).ok);
  const std::string input = InvokeInput("echo", {{"a", 1}}, "u-7");
  CallOutcome echo = inst->Invoke(input, calls, kLimits);
  ASSERT_TRUE(echo.ok) << echo.error;
  EXPECT_EQ(echo.output, input);
  EXPECT_GT(echo.fuel_used, 0);
  EXPECT_GE(echo.duration_us, 0);
  CallOutcome caller =
      inst->Invoke(InvokeInput("caller", {}, "u-7"), calls, kLimits);
  ASSERT_TRUE(caller.ok) << caller.error;
  EXPECT_EQ(json::parse(caller.output),
            (json{{"caller", "u-7"}, {"exportName", "caller"}}));
  CallOutcome bytes = inst->Invoke(InvokeInput("bytes"), calls, kLimits);
  ASSERT_TRUE(bytes.ok);
  EXPECT_EQ(bytes.output, std::string("\x00\xff\x01", 3));
}

// A non-zero entry fails the run with the module's text; the instance
// stays usable.
TEST(ComputeInstanceTest, AFailedInvokeKeepsTheInstance) {
  auto inst = NewInstance("echo");
  ASSERT_NE(inst, nullptr);
  RecordingCalls calls;
  ASSERT_TRUE(inst->Init(calls, kLimits).ok);
  CallOutcome fail = inst->Invoke(
      InvokeInput("fail", {{"reason", "out of stock"}}), calls, kLimits);
  EXPECT_FALSE(fail.ok);
  EXPECT_FALSE(fail.instance_dead);
  EXPECT_EQ(fail.error, "echo failed: out of stock");
  EXPECT_TRUE(fail.output.empty());
  EXPECT_FALSE(inst->dead());
  EXPECT_TRUE(inst->Invoke(InvokeInput("echo"), calls, kLimits).ok);
  // Input the SDK cannot parse fails in the SDK, before the module's code.
  CallOutcome garbled = inst->Invoke("{\"export\": 7}", calls, kLimits);
  EXPECT_FALSE(garbled.ok);
  EXPECT_FALSE(garbled.instance_dead);
  EXPECT_THAT(garbled.error, StartsWith("invoke input: "));
  // Error text is cut to kMaxErrorBytes as valid UTF-8.
  std::string reason;
  for (int k = 0; k < 3000; ++k) reason += "\xC3\xA9";  // 6000 bytes of é
  CallOutcome big =
      inst->Invoke(InvokeInput("fail", {{"reason", reason}}), calls, kLimits);
  EXPECT_FALSE(big.ok);
  EXPECT_LE(big.error.size(), abi::kMaxErrorBytes);
  EXPECT_THAT(big.error, StartsWith("echo failed: \xC3\xA9"));
  EXPECT_EQ(big.error.substr(big.error.size() - 3), "...");
}

TEST(ComputeInstanceTest, AnOversizeResultKillsTheInstance) {
  auto inst = NewInstance("echo");
  ASSERT_NE(inst, nullptr);
  RecordingCalls calls;
  ASSERT_TRUE(inst->Init(calls, kLimits).ok);
  CallOutcome ok = inst->Invoke(
      InvokeInput("big", {{"n", abi::kMaxResultBytes}}), calls, kLimits);
  ASSERT_TRUE(ok.ok) << ok.error;
  EXPECT_EQ(ok.output.size(), abi::kMaxResultBytes);
  CallOutcome over = inst->Invoke(
      InvokeInput("big", {{"n", abi::kMaxResultBytes + 1}}), calls, kLimits);
  EXPECT_FALSE(over.ok);
  EXPECT_TRUE(over.instance_dead);
  EXPECT_EQ(over.stop_kind, "abi");
  EXPECT_THAT(over.error, HasSubstr("over the cap of 1048576 bytes"));
}

TEST(ComputeInstanceTest, AnOversizeInputIsRefusedBeforeTheCall) {
  auto inst = NewInstance("echo");
  ASSERT_NE(inst, nullptr);
  RecordingCalls calls;
  ASSERT_TRUE(inst->Init(calls, kLimits).ok);
  CallOutcome r = inst->Invoke(std::string(abi::kMaxInvokeInputBytes + 1, ' '),
                               calls, kLimits);
  EXPECT_FALSE(r.ok);
  EXPECT_FALSE(r.instance_dead);
  EXPECT_EQ(r.fuel_used, 0);
  EXPECT_THAT(r.error, HasSubstr("over the limit of 1048576"));
  CallOutcome event = inst->Event("{}", calls, kLimits);
  EXPECT_FALSE(event.ok);
  EXPECT_FALSE(event.instance_dead);
  EXPECT_EQ(event.error, "the module exports no tessera_compute_event");
}

TEST(ComputeInstanceTest, FuelExhaustionKillsTheInstance) {
  auto inst = NewInstance("spin");
  ASSERT_NE(inst, nullptr);
  RecordingCalls calls;
  ASSERT_TRUE(inst->Init(calls, kLimits).ok);
  CallOutcome tick = inst->Tick(100, calls, {2'000'000, 60'000});
  EXPECT_FALSE(tick.ok);
  EXPECT_TRUE(tick.instance_dead);
  EXPECT_EQ(tick.stop_kind, "fuel");
  EXPECT_EQ(tick.error,
            "fuel exhausted: tessera_compute_tick used more than 2000000 "
            "fuel");
  EXPECT_GE(tick.fuel_used, 2'000'000);
  EXPECT_TRUE(inst->dead());
  EXPECT_EQ(inst->memory_bytes(), 0u);
  // Every later call reports the death without running.
  CallOutcome again = inst->Invoke(InvokeInput("x"), calls, kLimits);
  EXPECT_TRUE(again.instance_dead);
  EXPECT_EQ(again.stop_kind, "fuel");
  EXPECT_EQ(again.error, tick.error);
  EXPECT_EQ(again.fuel_used, 0);
}

// A loop of hours with a budget it never exhausts: the watchdog stops it
// at maxRunMs of the call's limits.
TEST(ComputeInstanceTest, TheWatchdogKillsALongCall) {
  guest::Watchdog watchdog(RealClock::Get());
  watchdog.Start();
  guest::SandboxEnv env;
  env.watchdog = &watchdog;
  auto inst = NewInstance("busy", {}, std::move(env));
  ASSERT_NE(inst, nullptr);
  RecordingCalls calls;
  ASSERT_TRUE(inst->Init(calls, kLimits).ok);
  CallOutcome small =
      inst->Invoke(InvokeInput("spin", {{"iterations", 1000}}), calls, kLimits);
  ASSERT_TRUE(small.ok) << small.error;
  EXPECT_EQ(json::parse(small.output), (json{{"spins", 1000}}));
  CallOutcome tick = inst->Tick(100, calls, {wasm::kUnlimitedFuel / 2, 20});
  EXPECT_FALSE(tick.ok);
  EXPECT_TRUE(tick.instance_dead);
  EXPECT_EQ(tick.stop_kind, "watchdog");
  EXPECT_EQ(tick.error,
            "watchdog: call ran longer than maxRunMs 20 ms "
            "(tessera_compute_tick)");
}

TEST(ComputeInstanceTest, ATrapKillsTheInstance) {
  auto inst = NewInstance("trap");
  ASSERT_NE(inst, nullptr);
  RecordingCalls calls;
  ASSERT_TRUE(inst->Init(calls, kLimits).ok);
  CallOutcome tick = inst->Tick(100, calls, kLimits);
  EXPECT_FALSE(tick.ok);
  EXPECT_TRUE(tick.instance_dead);
  EXPECT_EQ(tick.stop_kind, "trap");
  EXPECT_THAT(tick.error, StartsWith("trap: "));
  EXPECT_THAT(tick.error, HasSubstr("tessera_compute_tick"));
}

TEST(ComputeInstanceTest, APanicKillsTheInstanceWithItsText) {
  auto inst = NewInstance("trap");
  ASSERT_NE(inst, nullptr);
  RecordingCalls calls;
  ASSERT_TRUE(inst->Init(calls, kLimits).ok);
  CallOutcome panic = inst->Invoke(InvokeInput("panic"), calls, kLimits);
  EXPECT_FALSE(panic.ok);
  EXPECT_TRUE(panic.instance_dead);
  EXPECT_EQ(panic.stop_kind, "panic");
  EXPECT_EQ(panic.error, "panic: boom in invoke");
  EXPECT_THAT(calls.logs, ElementsAre("4 boom in invoke"));
}

// A (ptr, len) outside guest memory traps the call before the host runs.
TEST(ComputeInstanceTest, ABadPointerTrapsTheCall) {
  for (const char* which : {"bad_ptr", "bad_log"}) {
    auto inst = NewInstance("trap");
    ASSERT_NE(inst, nullptr);
    RecordingCalls calls;
    ASSERT_TRUE(inst->Init(calls, kLimits).ok);
    CallOutcome r = inst->Invoke(InvokeInput(which), calls, kLimits);
    EXPECT_FALSE(r.ok) << which;
    EXPECT_TRUE(r.instance_dead) << which;
    EXPECT_EQ(r.stop_kind, "trap") << which;
    EXPECT_THAT(r.error, HasSubstr("out of bounds")) << which;
    EXPECT_EQ(calls.state_sets, 0) << which;
    EXPECT_TRUE(calls.logs.empty()) << which;
  }
}

TEST(ComputeInstanceTest, GrowingPastTheMemoryCapKillsTheInstance) {
  InstanceOptions options;
  options.memory_mb = 8;
  auto inst = NewInstance("membomb", options);
  ASSERT_NE(inst, nullptr);
  RecordingCalls calls;
  ASSERT_TRUE(inst->Init(calls, kLimits).ok);
  CallOutcome tick = inst->Tick(100, calls, kLimits);
  EXPECT_FALSE(tick.ok);
  EXPECT_TRUE(tick.instance_dead);
  EXPECT_EQ(tick.stop_kind, "memory");
  EXPECT_THAT(tick.error, HasSubstr("grow its memory past memoryMb 8"));
  EXPECT_THAT(tick.error, HasSubstr("out of memory: cannot allocate"));
}

// A clock that moves `step` microseconds at every reading.
class SteppingClock final : public Clock {
 public:
  explicit SteppingClock(int64_t step) : step_(step) {}
  int64_t NowUs() const override { return now_.fetch_add(step_) + step_; }

 private:
  int64_t step_;
  mutable std::atomic<int64_t> now_{0};
};

// duration_us and cpu_us are two readings of the clocks the options give.
TEST(ComputeInstanceTest, DurationsComeFromTheGivenClocks) {
  SteppingClock wall(7), cpu(3);
  InstanceOptions options;
  options.clock = &wall;
  options.cpu_clock = &cpu;
  auto inst = NewInstance("echo", options);
  ASSERT_NE(inst, nullptr);
  RecordingCalls calls;
  CallOutcome init = inst->Init(calls, kLimits);
  ASSERT_TRUE(init.ok);
  EXPECT_EQ(init.duration_us, 7);
  EXPECT_EQ(init.cpu_us, 3);
}

}  // namespace
}  // namespace tessera::compute
