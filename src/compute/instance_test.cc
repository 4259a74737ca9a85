// ComputeInstance over real compute modules (tests/guests/compute_*, built
// with the C++ SDK) loaded through the real loader, with a recording
// HostCalls double in place of the engine.
#include "wasm/instance.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compute/compute_test_guests.h"
#include "compute/module_instance.h"
#include "guest/watchdog.h"
#include "tessera/compute_abi.h"
#include "wasm/loader.h"
#include "wasm/testing/wat.h"

namespace tessera::compute {
namespace {

namespace abi = compute_abi;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using json = nlohmann::json;

// Records every host call; answers from its fields.
class RecordingCalls : public HostCalls {
 public:
  struct Emit {
    std::string kind;  // "event", "channel", "spatial"
    std::string target;
    std::string payload;
    float x = 0, y = 0, radius = 0;
  };

  int64_t NowMs() override { return now_ms; }
  void FillRandom(std::span<uint8_t> out) override {
    for (size_t i = 0; i < out.size(); ++i) {
      out[i] = static_cast<uint8_t>(i + 1);
    }
    ++random_calls;
  }
  HostCallResult GetState(std::string* bytes) override {
    ++state_gets;
    if (!state) {
      return HostCallResult::Error(abi::kErrNoState, "no state blob yet");
    }
    *bytes = *state;
    return HostCallResult::Ok();
  }
  HostCallResult SetState(std::string_view bytes) override {
    ++state_sets;
    if (set_result.code < 0) return set_result;
    state = std::string(bytes);
    return HostCallResult::Ok();
  }
  HostCallResult EmitEvent(std::string_view name,
                           std::string_view payload) override {
    emits.push_back({"event", std::string(name), std::string(payload)});
    return emit_result;
  }
  HostCallResult EmitChannel(std::string_view channel,
                             std::string_view payload) override {
    emits.push_back({"channel", std::string(channel), std::string(payload)});
    return emit_result;
  }
  HostCallResult EmitSpatial(std::string_view shard, float x, float y,
                             float radius, std::string_view payload) override {
    emits.push_back(
        {"spatial", std::string(shard), std::string(payload), x, y, radius});
    return emit_result;
  }
  void Log(int level, std::string_view text) override {
    logs.push_back(std::to_string(level) + " " + std::string(text));
  }

  int64_t now_ms = 1'700'000'000'123;
  std::optional<std::string> state;
  HostCallResult set_result = HostCallResult::Ok();
  HostCallResult emit_result = HostCallResult::Ok(3);
  int state_gets = 0, state_sets = 0, random_calls = 0;
  std::vector<Emit> emits;
  std::vector<std::string> logs;
};

constexpr CallLimits kLimits{100'000'000, 5'000};

std::unique_ptr<ComputeInstance> NewInstance(std::string_view name,
                                             InstanceOptions options = {},
                                             guest::SandboxEnv env = {}) {
  auto module = testing::LoadComputeGuest(name, options.memory_mb);
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  if (!module.ok()) return nullptr;
  auto instance = ComputeInstance::Create(*module, options, std::move(env));
  EXPECT_TRUE(instance.ok()) << instance.status().ToString();
  return instance.ok() ? std::move(*instance) : nullptr;
}

std::string InvokeInput(std::string_view export_name, json params = json(),
                        std::string_view caller = "") {
  return json{{"export", export_name},
              {"params", params.is_null() ? json::object() : params},
              {"callerUserId", caller}}
      .dump();
}

TEST(ComputeAbiSpecTest, NamesTheComputeImportModuleAndMarker) {
  const wasm::AbiSpec& spec = ComputeAbiSpec();
  EXPECT_EQ(spec.import_module(), "tessera_compute_v1");
  EXPECT_EQ(spec.marker(), "tessera_compute_abi_v1");
  std::vector<std::string> hosts;
  for (const auto& h : spec.host_functions) hosts.push_back(h.name);
  EXPECT_THAT(hosts, ElementsAre("log", "now_ms", "random_bytes", "state_get",
                                 "state_set", "emit_event", "emit_channel",
                                 "emit_spatial", "last_error"));
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

json EmitCall(ComputeInstance& inst, RecordingCalls& calls,
              std::string_view export_name, json params = json()) {
  CallOutcome r = inst.Invoke(InvokeInput(export_name, params), calls, kLimits);
  EXPECT_TRUE(r.ok) << r.error;
  return r.ok ? json::parse(r.output) : json();
}

TEST(ComputeInstanceTest, EmitsReachTheHostCalls) {
  auto inst = NewInstance("emit");
  ASSERT_NE(inst, nullptr);
  RecordingCalls calls;
  ASSERT_TRUE(inst->Init(calls, kLimits).ok);
  json ev = EmitCall(*inst, calls, "event",
                     {{"name", "season-changed"}, {"payload", "{\"s\":2}"}});
  EXPECT_EQ(ev["ok"], true);
  EXPECT_EQ(ev["count"], 3);
  json ch = EmitCall(*inst, calls, "channel",
                     {{"channel", "group:north"}, {"payload", "hi"}});
  EXPECT_EQ(ch["ok"], true);
  EXPECT_EQ(ch["count"], 3);  // connections reached, as the host said
  json sp = EmitCall(*inst, calls, "spatial",
                     {{"shard", "arena-1"},
                      {"x", 1.5},
                      {"y", -2},
                      {"radius", 30},
                      {"payload", "boom"}});
  EXPECT_EQ(sp["ok"], true);
  ASSERT_EQ(calls.emits.size(), 3u);
  EXPECT_EQ(calls.emits[0].kind, "event");
  EXPECT_EQ(calls.emits[0].target, "season-changed");
  EXPECT_EQ(calls.emits[0].payload, "{\"s\":2}");
  EXPECT_EQ(calls.emits[1].target, "group:north");
  EXPECT_EQ(calls.emits[1].payload, "hi");
  EXPECT_EQ(calls.emits[2].kind, "spatial");
  EXPECT_EQ(calls.emits[2].target, "arena-1");
  EXPECT_EQ(calls.emits[2].x, 1.5f);
  EXPECT_EQ(calls.emits[2].y, -2.0f);
  EXPECT_EQ(calls.emits[2].radius, 30.0f);
  EXPECT_EQ(calls.emits[2].payload, "boom");
  // tick emits on "all".
  ASSERT_TRUE(inst->Tick(100, calls, kLimits).ok);
  EXPECT_EQ(calls.emits.back().target, "all");
}

// Payloads, names and blobs over the ABI's limits, and malformed channels
// or coordinates, fail in the instance: the host calls never see them, the
// module gets the code and last_error's JSON.
TEST(ComputeInstanceTest, OverLimitArgumentsNeverReachTheHost) {
  auto inst = NewInstance("emit");
  ASSERT_NE(inst, nullptr);
  RecordingCalls calls;
  ASSERT_TRUE(inst->Init(calls, kLimits).ok);
  struct Case {
    std::string export_name;
    json params;
    int code;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"oversize",
       {{"size", abi::kMaxNotifyPayloadBytes + 1}, {"target", "channel"}},
       abi::kErrTooLarge,
       "emit_channel: the payload is 1025 bytes, over the limit of 1024"},
      {"oversize",
       {{"size", abi::kMaxNotifyPayloadBytes + 1}, {"target", "spatial"}},
       abi::kErrTooLarge,
       "emit_spatial: the payload is 1025 bytes, over the limit of 1024"},
      {"oversize",
       {{"size", abi::kMaxEventPayloadBytes + 1}, {"target", "event"}},
       abi::kErrTooLarge,
       "emit_event: the payload is 65537 bytes, over the limit of 65536"},
      {"oversize",
       {{"size", abi::kMaxStateBytes + 1}, {"target", "state"}},
       abi::kErrTooLarge,
       "state_set: the blob is 262145 bytes, over the limit of 262144"},
      {"event",
       {{"name", std::string(abi::kMaxEventNameBytes + 1, 'n')}},
       abi::kErrTooLarge,
       "emit_event: the event name is 129 bytes, over the limit of 128"},
      {"event",
       {{"name", ""}},
       abi::kErrInvalid,
       "emit_event: the event name is empty"},
      {"channel",
       {{"channel", "everyone"}},
       abi::kErrInvalid,
       "emit_channel: unknown channel \"everyone\" (expected all, "
       "shard:<id>, kind:<kind>, group:<name> or player:<id>)"},
      {"channel",
       {{"channel", "shard:"}},
       abi::kErrInvalid,
       "emit_channel: unknown channel \"shard:\" (expected all, shard:<id>, "
       "kind:<kind>, group:<name> or player:<id>)"},
      {"spatial",
       {{"shard", "arena"}, {"radius", -1}},
       abi::kErrInvalid,
       "emit_spatial: x, y and radius must be finite and the radius not "
       "negative"},
      {"spatial",
       {{"shard", ""}},
       abi::kErrInvalid,
       "emit_spatial: the shard id is empty"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.params.dump().substr(0, 80));
    json r = EmitCall(*inst, calls, c.export_name, c.params);
    EXPECT_EQ(r["ok"], false);
    EXPECT_EQ(r["code"], c.code);
    EXPECT_EQ(r["message"], c.message);
    const char* name = c.code == abi::kErrTooLarge ? "too_large" : "invalid";
    EXPECT_EQ(r["errorCode"], name);
    EXPECT_EQ(json::parse(r["lastError"].get<std::string>()),
              (json{{"code", name}, {"message", c.message}}));
  }
  EXPECT_TRUE(calls.emits.empty());
  EXPECT_EQ(calls.state_sets, 0);
  // At the limits, they pass.
  json at =
      EmitCall(*inst, calls, "oversize",
               {{"size", abi::kMaxNotifyPayloadBytes}, {"target", "channel"}});
  EXPECT_EQ(at["ok"], true);
  ASSERT_EQ(calls.emits.size(), 1u);
  EXPECT_EQ(calls.emits[0].payload.size(), abi::kMaxNotifyPayloadBytes);
}

// The host's own refusals (egress budget, depth, no such shard) reach the
// module as the code, its name and the host's message.
TEST(ComputeInstanceTest, HostRefusalsAreSeenByTheModule) {
  auto inst = NewInstance("emit");
  ASSERT_NE(inst, nullptr);
  RecordingCalls calls;
  ASSERT_TRUE(inst->Init(calls, kLimits).ok);
  calls.emit_result = HostCallResult::Error(
      abi::kErrEgressBudget, "over maxEgressMsgsPerMin 600 this minute");
  json r =
      EmitCall(*inst, calls, "channel", {{"channel", "all"}, {"payload", "x"}});
  EXPECT_EQ(r["ok"], false);
  EXPECT_EQ(r["code"], abi::kErrEgressBudget);
  EXPECT_EQ(r["errorCode"], "egress_budget");
  EXPECT_EQ(r["message"], "over maxEgressMsgsPerMin 600 this minute");
  EXPECT_EQ(json::parse(r["lastError"].get<std::string>()),
            (json{{"code", "egress_budget"},
                  {"message", "over maxEgressMsgsPerMin 600 this minute"}}));
  calls.emit_result = HostCallResult::Error(abi::kErrDepth, "");
  r = EmitCall(*inst, calls, "event", {{"name", "again"}});
  EXPECT_EQ(r["errorCode"], "event_depth");
  EXPECT_EQ(r["message"], "event_depth");  // no message: the code's name
  calls.emit_result = HostCallResult::Error(abi::kErrNotFound, "no shard x");
  r = EmitCall(*inst, calls, "spatial", {{"shard", "x"}, {"radius", 1}});
  EXPECT_EQ(r["errorCode"], "not_found");
  // The tick's emit fails its run with the SDK's text.
  calls.emit_result = HostCallResult::Error(abi::kErrEgressBudget, "budget");
  CallOutcome tick = inst->Tick(100, calls, kLimits);
  EXPECT_FALSE(tick.ok);
  EXPECT_FALSE(tick.instance_dead);
  EXPECT_EQ(tick.error, "egress_budget: budget");
  // A new entry call starts with no last_error.
  calls.emit_result = HostCallResult::Ok(0);
  r = EmitCall(*inst, calls, "channel", {{"channel", "all"}, {"payload", ""}});
  EXPECT_EQ(r["ok"], true);
  EXPECT_EQ(r["lastError"], "");
}

TEST(ComputeInstanceTest, RandomNowStateAndLogServeTheModule) {
  auto inst = NewInstance("emit");
  ASSERT_NE(inst, nullptr);
  RecordingCalls calls;
  ASSERT_TRUE(inst->Init(calls, kLimits).ok);
  EXPECT_EQ(EmitCall(*inst, calls, "random", {{"n", 4}}),
            (json{{"hex", "01020304"}}));
  // More than kMaxRandomBytes: the SDK asks in pieces.
  json big =
      EmitCall(*inst, calls, "random", {{"n", abi::kMaxRandomBytes + 2}});
  EXPECT_EQ(big["hex"].get<std::string>().size(),
            2 * (abi::kMaxRandomBytes + 2));
  EXPECT_EQ(big["hex"].get<std::string>().substr(2 * abi::kMaxRandomBytes),
            "0102");
  EXPECT_EQ(calls.random_calls, 3);
  EXPECT_EQ(EmitCall(*inst, calls, "now"), (json{{"now", calls.now_ms}}));
  EXPECT_EQ(EmitCall(*inst, calls, "state"),
            (json{{"found", false}, {"bytes", ""}}));
  calls.state = "blob";
  EXPECT_EQ(EmitCall(*inst, calls, "state"),
            (json{{"found", true}, {"bytes", "blob"}}));
  calls.state = "";
  EXPECT_EQ(EmitCall(*inst, calls, "state"),
            (json{{"found", true}, {"bytes", ""}}));
  // Log lines reach the call's HostCalls with their level, as valid UTF-8;
  // the SDK logs levels above error as error.
  EmitCall(*inst, calls, "log", {{"level", 2}, {"text", "careful"}});
  EmitCall(*inst, calls, "log", {{"level", 9}, {"text", "loud"}});
  EXPECT_THAT(calls.logs, ElementsAre("2 careful", "3 loud"));
  // Lines logged while no call runs go nowhere but the sandbox.
  RecordingCalls other;
  EmitCall(*inst, other, "log", {{"level", 1}, {"text", "to other"}});
  EXPECT_EQ(calls.logs.size(), 2u);
  EXPECT_THAT(other.logs, ElementsAre("1 to other"));
}

TEST(ComputeInstanceTest, EventsRunTheEventExport) {
  auto inst = NewInstance("events");
  ASSERT_NE(inst, nullptr);
  EXPECT_TRUE(inst->has_event());
  RecordingCalls calls;
  ASSERT_TRUE(inst->Init(calls, kLimits).ok);
  const std::string input = json{
      {"event", "compute_event"},
      {"name", "season-changed"},
      {"payload", {{"season", "winter"}}},
      {"sourceModule", "world-sim"},
      {"flowId", "f-1"},
      {"depth", 2},
      {"coalesced", 3}}.dump();
  CallOutcome ev = inst->Event(input, calls, kLimits);
  ASSERT_TRUE(ev.ok) << ev.error;
  EXPECT_TRUE(ev.output.empty());
  EXPECT_EQ(calls.state, input);
  EXPECT_THAT(calls.logs,
              ElementsAre("1 event season-changed from world-sim depth 2 "
                          "coalesced 3 payload json"));
  const std::string b64 = json{
      {"event", "compute_event"},
      {"name", "raw"},
      {"payload", nullptr},
      {"payloadBase64", "AP8B"},
      {"sourceModule", ""},
      {"flowId", "f-2"},
      {"depth", 0}}.dump();
  ASSERT_TRUE(inst->Event(b64, calls, kLimits).ok);
  EXPECT_EQ(calls.logs.back(),
            "1 event raw from  depth 0 coalesced 0 payload base64:AP8B");
  CallOutcome last = inst->Invoke(InvokeInput("last"), calls, kLimits);
  ASSERT_TRUE(last.ok);
  EXPECT_EQ(last.output, b64);

  CallOutcome fail = inst->Event(
      json{{"name", "fail"}, {"payload", nullptr}}.dump(), calls, kLimits);
  EXPECT_FALSE(fail.ok);
  EXPECT_FALSE(fail.instance_dead);
  EXPECT_EQ(fail.error, "event refused: fail");
  // A cascade the host cuts at its depth limit fails the event run.
  calls.emit_result = HostCallResult::Error(
      abi::kErrDepth, "the event cascade is at depth 8, the limit");
  CallOutcome again =
      inst->Event(json{{"name", "again"}}.dump(), calls, kLimits);
  EXPECT_FALSE(again.ok);
  EXPECT_EQ(again.error,
            "event_depth: the event cascade is at depth 8, the limit");
  EXPECT_EQ(calls.emits.back().target, "again");
  // Input that is not an event object fails in the SDK.
  CallOutcome bad = inst->Event("[1]", calls, kLimits);
  EXPECT_FALSE(bad.ok);
  EXPECT_THAT(bad.error, StartsWith("event input: "));
}

// Host calls during instantiation (static constructors) get
// kErrUnavailable: there is no entry call whose HostCalls could serve them.
TEST(ComputeInstanceTest, HostCallsWhileInstantiatingAreUnavailable) {
  const std::vector<uint8_t> wasm = wasm::testing::Wat(R"((module
    (import "tessera_compute_v1" "state_set"
      (func $set (param i32 i32) (result i32)))
    (import "tessera_compute_v1" "now_ms" (func $now (result i64)))
    (memory (export "memory") 1)
    (global $r (mut i32) (i32.const 99))
    (global $t (mut i64) (i64.const 99))
    (func (export "tessera_compute_abi_v1"))
    (func (export "_initialize")
      (global.set $r (call $set (i32.const 0) (i32.const 4)))
      (global.set $t (call $now)))
    (func (export "tessera_alloc") (param i32) (result i32) (i32.const 1024))
    (func (export "tessera_output_ptr") (result i32) (i32.const 0))
    (func (export "tessera_output_len") (result i32) (i32.const 0))
    (func (export "tessera_compute_init") (result i32)
      (i32.add (global.get $r) (i32.wrap_i64 (global.get $t))))
    (func (export "tessera_compute_tick") (param i32) (result i32)
      (i32.const 0))
    (func (export "tessera_compute_invoke") (param i32 i32) (result i32)
      (i32.const 0))))");
  wasm::LoadOptions lo;
  lo.check = ComputeCheckOptions(1);
  lo.cache_dir = TESSERA_COMPUTE_TEST_CACHE;
  auto module = wasm::LoadModule(wasm, lo);
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  auto inst = ComputeInstance::Create(*module, {}, {});
  ASSERT_TRUE(inst.ok()) << inst.status().ToString();
  RecordingCalls calls;
  // init returns r + t = kErrUnavailable + 0, as its (failing) code.
  CallOutcome init = (*inst)->Init(calls, kLimits);
  EXPECT_FALSE(init.ok);
  EXPECT_EQ(init.error, "tessera_compute_init failed with code -9");
  EXPECT_EQ(calls.state_sets, 0);
}

// The C++ example: buy spends the gold in the blob and notifies the buyer.
TEST(ComputeInstanceTest, TheShopExampleSellsForGold) {
  auto inst = NewInstance("shop");
  ASSERT_NE(inst, nullptr);
  RecordingCalls calls;
  ASSERT_TRUE(inst->Init(calls, kLimits).ok);
  CallOutcome buy = inst->Invoke(
      InvokeInput("buy", {{"amount", 3}, {"item", "plank"}}, "u-1"), calls,
      kLimits);
  ASSERT_TRUE(buy.ok) << buy.error;
  const json receipt = {{"item", "plank"},
                        {"amount", 3},
                        {"cost", 15},
                        {"gold", 85},
                        {"owned", 3}};
  EXPECT_EQ(json::parse(buy.output), receipt);
  EXPECT_EQ(json::parse(*calls.state),
            (json{{"gold", 85}, {"inventory", {{"plank", 3}}}}));
  ASSERT_EQ(calls.emits.size(), 1u);
  EXPECT_EQ(calls.emits[0].target, "player:u-1");
  EXPECT_EQ(json::parse(calls.emits[0].payload), receipt);

  CallOutcome broke = inst->Invoke(
      InvokeInput("buy", {{"amount", 5}, {"item", "lantern"}}), calls, kLimits);
  EXPECT_FALSE(broke.ok);
  EXPECT_EQ(broke.error, "not enough gold: 100 needed, 85 left");
  CallOutcome seeds =
      inst->Invoke(InvokeInput("buy", {{"amount", 2}}), calls, kLimits);
  ASSERT_TRUE(seeds.ok) << seeds.error;
  EXPECT_EQ(calls.emits.back().target, "all");  // a management caller
  CallOutcome balance = inst->Invoke(InvokeInput("balance"), calls, kLimits);
  ASSERT_TRUE(balance.ok);
  EXPECT_EQ(json::parse(balance.output),
            (json{{"gold", 81}, {"inventory", {{"plank", 3}, {"seeds", 2}}}}));
  calls.set_result = HostCallResult::Error(abi::kErrStale, "stale");
  CallOutcome stale =
      inst->Invoke(InvokeInput("buy", {{"amount", 1}}), calls, kLimits);
  EXPECT_FALSE(stale.ok);
  EXPECT_EQ(stale.error, "the purchase was not saved (stale_state): try again");
}

}  // namespace
}  // namespace tessera::compute
