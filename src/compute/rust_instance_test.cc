// Rust compute modules really run: the counter template, the world-sim
// example and a probe module (tests/rust/compute_rust_test_module), built
// from source with the crate builder (app::BuildCrate, Debian's toolchain
// offline, the tessera-compute-sdk crate patched in), loaded with the
// compute ABI checks and run through ComputeInstance with a HostCalls
// double in place of the engine.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "app/crate_builder.h"
#include "compute/module_instance.h"
#include "compute/templates.h"
#include "tessera/compute_abi.h"
#include "wasm/loader.h"

namespace tessera::compute {
namespace {

namespace abi = compute_abi;
namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using json = nlohmann::json;

const fs::path kSource = TESSERA_SOURCE_DIR;
const fs::path kBuild = TESSERA_COMPUTE_RUST_BUILD_DIR;

// Serves the host functions from its fields and records what they did.
class FakeCalls : public HostCalls {
 public:
  int64_t NowMs() override { return now_ms; }
  void FillRandom(std::span<uint8_t> out) override {
    for (uint8_t& b : out) b = static_cast<uint8_t>(next_random++ * 37 + 11);
  }
  HostCallResult GetState(std::string* bytes) override {
    if (!state) return HostCallResult::Error(abi::kErrNoState, "no state");
    *bytes = *state;
    return HostCallResult::Ok();
  }
  HostCallResult SetState(std::string_view bytes) override {
    if (set_result.code < 0) return set_result;
    state = std::string(bytes);
    ++state_sets;
    return HostCallResult::Ok();
  }
  HostCallResult EmitEvent(std::string_view name,
                           std::string_view payload) override {
    return Record("event", name, payload, event_result);
  }
  HostCallResult EmitChannel(std::string_view channel,
                             std::string_view payload) override {
    return Record("channel", channel, payload, channel_result);
  }
  HostCallResult EmitSpatial(std::string_view shard, float x, float y,
                             float radius, std::string_view payload) override {
    std::ostringstream target;
    target << shard << "@" << x << "," << y << "," << radius;
    return Record("spatial", target.str(), payload, spatial_result);
  }
  void Log(int level, std::string_view text) override {
    logs.push_back(std::to_string(level) + " " + std::string(text));
  }

  // (kind, target, payload) of every emit, refused ones included.
  struct Emit {
    std::string kind, target, payload;
  };
  std::vector<Emit> Emits(std::string_view kind) const {
    std::vector<Emit> out;
    for (const Emit& e : emits) {
      if (e.kind == kind) out.push_back(e);
    }
    return out;
  }

  int64_t now_ms = 1'765'000'000'000;
  uint32_t next_random = 0;
  std::optional<std::string> state;
  int state_sets = 0;
  HostCallResult set_result = HostCallResult::Ok();
  HostCallResult event_result = HostCallResult::Ok();
  HostCallResult channel_result = HostCallResult::Ok(2);
  HostCallResult spatial_result = HostCallResult::Ok(1);
  std::vector<Emit> emits;
  std::vector<std::string> logs;

 private:
  HostCallResult Record(const char* kind, std::string_view target,
                        std::string_view payload, const HostCallResult& r) {
    emits.push_back({kind, std::string(target), std::string(payload)});
    return r;
  }
};

constexpr CallLimits kLimits{200'000'000, 10'000};

// Writes `files` under <kBuild>/crates/<name>/ (only what changed, so an
// unchanged crate stays up to date), builds it with the crate builder and
// loads the module for the compute ABI. Built once per process.
std::shared_ptr<const wasm::CompiledModule> Build(const std::string& name,
                                                  const SourceFiles& files) {
  static std::map<std::string, std::shared_ptr<const wasm::CompiledModule>>
      built;
  if (auto it = built.find(name); it != built.end()) return it->second;
  const fs::path dir = kBuild / "crates" / name;
  for (const auto& [path, text] : files) {
    const fs::path file = dir / path;
    std::ifstream in(file, std::ios::binary);
    const std::string old((std::istreambuf_iterator<char>(in)),
                          std::istreambuf_iterator<char>());
    if (in.is_open() && old == text) continue;
    fs::create_directories(file.parent_path());
    std::ofstream(file, std::ios::binary) << text;
  }
  app::CrateBuildSpec spec;
  spec.name = name;
  spec.crate_dir = dir;
  spec.output = kBuild / "out" / (name + ".wasm");
  spec.build_dir = kBuild / "work";
  std::ostringstream progress;
  Status s = app::BuildCrate(spec, app::BuildOptions(), progress);
  // The build's own lines ("built ... in N s") go to the test log.
  std::cout << progress.str();
  EXPECT_TRUE(s.ok()) << s.ToString();
  if (!s.ok()) return nullptr;
  std::ifstream in(spec.output, std::ios::binary);
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                   std::istreambuf_iterator<char>());
  wasm::LoadOptions options;
  options.check = ComputeCheckOptions(64);
  options.fuel = true;
  options.cache_dir = (kBuild / "module-cache").string();
  fs::create_directories(options.cache_dir);
  auto module = wasm::LoadModule(bytes, options);
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  if (!module.ok()) return nullptr;
  built[name] = *module;
  return *module;
}

// The files of a crate directory in the source tree.
SourceFiles CrateFiles(const fs::path& dir) {
  SourceFiles files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    const std::string rel = entry.path().lexically_relative(dir).string();
    if (!entry.is_regular_file() ||
        (rel != "Cargo.toml" && rel.rfind("src/", 0) != 0)) {
      continue;
    }
    std::ifstream in(entry.path(), std::ios::binary);
    files[rel] = std::string((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  }
  return files;
}

std::unique_ptr<ComputeInstance> NewInstance(
    const std::shared_ptr<const wasm::CompiledModule>& module) {
  if (module == nullptr) return nullptr;
  auto instance = ComputeInstance::Create(module, InstanceOptions(), {});
  EXPECT_TRUE(instance.ok()) << instance.status().ToString();
  return instance.ok() ? std::move(*instance) : nullptr;
}

// A bundled template, loaded as computeDeployTemplate does, built.
std::unique_ptr<ComputeInstance> Template(const std::string& name) {
  Result<fs::path> dir = FindTemplatesDir();
  EXPECT_TRUE(dir.ok()) << dir.status().ToString();
  if (!dir.ok()) return nullptr;
  Result<SourceFiles> files = LoadTemplate(*dir, name);
  EXPECT_TRUE(files.ok()) << files.status().ToString();
  if (!files.ok()) return nullptr;
  return NewInstance(Build(name, *files));
}

std::unique_ptr<ComputeInstance> Counter() { return Template("counter"); }

std::unique_ptr<ComputeInstance> Probe() {
  return NewInstance(Build(
      "probe", CrateFiles(kSource / "tests/rust/compute_rust_test_module")));
}

std::unique_ptr<ComputeInstance> WorldSim() {
  return NewInstance(Build(
      "world-sim", CrateFiles(kSource / "examples/compute/compute/world-sim")));
}

std::string InvokeInput(const std::string& export_name,
                        json params = json::object()) {
  return json{
      {"export", export_name}, {"params", params}, {"callerUserId", "u1"}}
      .dump();
}

std::string Le64(uint64_t n) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(n >> (8 * i));
  return out;
}

TEST(RustCounterTemplateTest, CountsTicksIntoTheStateBlob) {
  auto counter = Counter();
  ASSERT_NE(counter, nullptr);
  EXPECT_FALSE(counter->has_event());
  FakeCalls calls;
  CallOutcome init = counter->Init(calls, kLimits);
  ASSERT_TRUE(init.ok) << init.error;
  EXPECT_EQ(calls.logs, std::vector<std::string>{"1 module init"});
  for (int i = 0; i < 3; ++i) {
    CallOutcome tick = counter->Tick(500, calls, kLimits);
    ASSERT_TRUE(tick.ok) << tick.error;
    EXPECT_GT(tick.fuel_used, 0);
  }
  EXPECT_EQ(calls.state, Le64(3));

  // A fresh instance continues from the blob.
  auto fresh = Counter();
  ASSERT_NE(fresh, nullptr);
  ASSERT_TRUE(fresh->Init(calls, kLimits).ok);
  ASSERT_TRUE(fresh->Tick(500, calls, kLimits).ok);
  EXPECT_EQ(calls.state, Le64(4));

  // A refused state_set is the module's warning, not a failed tick.
  calls.set_result = HostCallResult::Error(
      abi::kErrStale, "the tick-lease holder persisted revision 9");
  CallOutcome stale = fresh->Tick(500, calls, kLimits);
  EXPECT_TRUE(stale.ok) << stale.error;
  EXPECT_EQ(calls.logs.back(),
            "2 tick 5: state_set failed: stale_state: the tick-lease holder "
            "persisted revision 9");
}

TEST(RustCounterTemplateTest, InvokeEchoesItsInput) {
  auto counter = Counter();
  ASSERT_NE(counter, nullptr);
  FakeCalls calls;
  ASSERT_TRUE(counter->Init(calls, kLimits).ok);
  const std::string input = InvokeInput("echo", {{"text", "héllo"}});
  CallOutcome out = counter->Invoke(input, calls, kLimits);
  ASSERT_TRUE(out.ok) << out.error;
  EXPECT_EQ(out.output, input);
  // Twice: the SDK's input and output buffers are reused correctly.
  CallOutcome again = counter->Invoke("{}", calls, kLimits);
  ASSERT_TRUE(again.ok) << again.error;
  EXPECT_EQ(again.output, "{}");
}

TEST(RustProbeModuleTest, HostFunctionsAndTheirErrorsReachTheModule) {
  auto probe = Probe();
  ASSERT_NE(probe, nullptr);
  FakeCalls calls;
  ASSERT_TRUE(probe->Init(calls, kLimits).ok);
  CallOutcome ok = probe->Invoke(InvokeInput("host"), calls, kLimits);
  ASSERT_TRUE(ok.ok) << ok.error;
  json host = json::parse(ok.output);
  // A die roll from rng(), seeded by the host's random bytes.
  ASSERT_TRUE(host["roll"].is_number_integer()) << ok.output;
  EXPECT_GE(host["roll"], 1);
  EXPECT_LE(host["roll"], 6);
  host.erase("roll");
  EXPECT_EQ(host, json::parse(R"({"now":1765000000000,
      "random":[11,48,85],"channel":2,"spatial":1,"event":0,"set":0,
      "state":"probe state"})"))
      << ok.output;
  ASSERT_EQ(calls.emits.size(), 3u);
  EXPECT_EQ(calls.emits[0].target, "all");
  EXPECT_EQ(calls.emits[0].payload, "to everyone");
  EXPECT_EQ(calls.emits[1].target, "zone-1@1.5,-2,8");
  EXPECT_EQ(calls.emits[2].target, "probe-event");
  EXPECT_EQ(calls.emits[2].payload, R"({"n":1})");

  // Refusals come back as HostError {code, message} from last_error.
  calls.channel_result = HostCallResult::Error(
      abi::kErrEgressBudget, "over maxEgressMsgsPerMin (600)");
  calls.spatial_result =
      HostCallResult::Error(abi::kErrNotFound, "no shard zone-1");
  calls.event_result =
      HostCallResult::Error(abi::kErrDepth, "the cascade is at depth 8");
  calls.set_result = HostCallResult::Error(abi::kErrStale, "revision 4");
  CallOutcome refused = probe->Invoke(InvokeInput("host"), calls, kLimits);
  ASSERT_TRUE(refused.ok) << refused.error;
  const json r = json::parse(refused.output);
  EXPECT_EQ(r["channel"], "egress_budget|over maxEgressMsgsPerMin (600)");
  EXPECT_EQ(r["spatial"], "not_found|no shard zone-1");
  EXPECT_EQ(r["event"], "event_depth|the cascade is at depth 8");
  EXPECT_EQ(r["set"], "stale_state|revision 4");
}

TEST(RustProbeModuleTest, AnErrFailsTheRunAndTheInstanceLives) {
  auto probe = Probe();
  ASSERT_NE(probe, nullptr);
  FakeCalls calls;
  ASSERT_TRUE(probe->Init(calls, kLimits).ok);
  CallOutcome tick = probe->Tick(13, calls, kLimits);
  EXPECT_FALSE(tick.ok);
  EXPECT_FALSE(tick.instance_dead);
  EXPECT_EQ(tick.error, "unlucky tick 13");
  CallOutcome fail = probe->Invoke(InvokeInput("fail"), calls, kLimits);
  EXPECT_FALSE(fail.ok);
  EXPECT_FALSE(fail.instance_dead);
  EXPECT_EQ(fail.error, "asked to fail");
  EXPECT_TRUE(probe->Tick(500, calls, kLimits).ok);
}

TEST(RustProbeModuleTest, APanicFailsTheRunWithItsTextAndKillsTheInstance) {
  auto probe = Probe();
  ASSERT_NE(probe, nullptr);
  FakeCalls calls;
  ASSERT_TRUE(probe->Init(calls, kLimits).ok);
  CallOutcome panic = probe->Invoke(InvokeInput("panic"), calls, kLimits);
  EXPECT_FALSE(panic.ok);
  EXPECT_TRUE(panic.instance_dead);
  EXPECT_EQ(panic.stop_kind, "panic");
  EXPECT_THAT(panic.error, HasSubstr("boom from invoke (at src/lib.rs:"));
  EXPECT_TRUE(probe->dead());
  EXPECT_THAT(calls.logs.back(), StartsWith("4 boom from invoke (at "));

  auto other = Probe();
  ASSERT_NE(other, nullptr);
  ASSERT_TRUE(other->Init(calls, kLimits).ok);
  CallOutcome tick = other->Tick(666, calls, kLimits);
  EXPECT_TRUE(tick.instance_dead);
  EXPECT_THAT(tick.error, HasSubstr("tick panicked at dt 666"));
}

// The crop-weather template: crops grow per tick, the weather turns after
// 30 s of simulated time, raising weather-changed and a notice on "all".
TEST(RustCropWeatherTemplateTest, WeatherTurnsRaiseAnEventAndANotice) {
  auto sim = Template("crop-weather");
  ASSERT_NE(sim, nullptr);
  FakeCalls calls;
  ASSERT_TRUE(sim->Init(calls, kLimits).ok);
  EXPECT_EQ(calls.logs.back(), "1 crop-weather init: 3 crops, weather Sunny");
  for (int i = 0; i < 59; ++i) {
    CallOutcome tick = sim->Tick(500, calls, kLimits);
    ASSERT_TRUE(tick.ok) << tick.error;
  }
  EXPECT_TRUE(calls.emits.empty());
  json state = json::parse(*calls.state);
  EXPECT_EQ(state["weather"], "sunny");
  EXPECT_EQ(state["elapsedMs"], 29'500);
  EXPECT_DOUBLE_EQ(state["crops"][0]["growth"].get<double>(), 29.5);

  ASSERT_TRUE(sim->Tick(500, calls, kLimits).ok);
  state = json::parse(*calls.state);
  ASSERT_EQ(calls.emits.size(), 2u);
  EXPECT_EQ(calls.emits[0].kind, "event");
  EXPECT_EQ(calls.emits[0].target, "weather-changed");
  const json change = json::parse(calls.emits[0].payload);
  EXPECT_EQ(change["from"], "sunny");
  EXPECT_EQ(change["to"], state["weather"]);
  EXPECT_EQ(change["durationMs"], state["weatherMsLeft"]);
  EXPECT_EQ(calls.emits[1].kind, "channel");
  EXPECT_EQ(calls.emits[1].target, "all");
  EXPECT_EQ(json::parse(calls.emits[1].payload)["weather"], state["weather"]);

  CallOutcome planted =
      sim->Invoke(InvokeInput("plant", {{"crop", "beans"}}), calls, kLimits);
  ASSERT_TRUE(planted.ok) << planted.error;
  EXPECT_EQ(json::parse(planted.output)["crops"].size(), 4u);
  EXPECT_EQ(json::parse(*calls.state)["crops"][3]["name"], "beans");
  CallOutcome bad =
      sim->Invoke(InvokeInput("plant", {{"crop", 3}}), calls, kLimits);
  EXPECT_FALSE(bad.ok);
  EXPECT_THAT(bad.error, StartsWith("plant: invalid params: "));
  CallOutcome status = sim->Invoke(InvokeInput("status"), calls, kLimits);
  ASSERT_TRUE(status.ok) << status.error;
  EXPECT_EQ(json::parse(status.output), json::parse(*calls.state));
}

// The example's cascade: a season ends on a tick, the module raises
// season-changed, and its event entry (the event trigger's delivery)
// harvests and announces on channel "all".
TEST(RustWorldSimTest, SeasonsCascadeThroughItsOwnEventTrigger) {
  auto sim = WorldSim();
  ASSERT_NE(sim, nullptr);
  EXPECT_TRUE(sim->has_event());
  FakeCalls calls;
  CallOutcome init = sim->Init(calls, kLimits);
  ASSERT_TRUE(init.ok) << init.error;
  EXPECT_EQ(calls.logs.back(), "1 world-sim init: year 1, Spring, tick 0");

  for (int i = 0; i < 60; ++i) {
    CallOutcome tick = sim->Tick(500, calls, kLimits);
    ASSERT_TRUE(tick.ok) << "tick " << i << ": " << tick.error;
  }
  const std::vector<FakeCalls::Emit> events = calls.Emits("event");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].target, "season-changed");
  EXPECT_EQ(json::parse(events[0].payload),
            json::parse(R"({"season":"summer","year":1})"));
  // Weather turns were announced to everyone.
  const std::vector<FakeCalls::Emit> weather = calls.Emits("channel");
  ASSERT_FALSE(weather.empty());
  for (const auto& e : weather) {
    EXPECT_EQ(e.target, "all");
    EXPECT_EQ(json::parse(e.payload)["type"], "weather") << e.payload;
  }
  ASSERT_TRUE(calls.state.has_value());
  json state = json::parse(*calls.state);
  EXPECT_EQ(state["season"], "summer");
  EXPECT_EQ(state["ticks"], 60);
  ASSERT_EQ(state["fields"].size(), 4u);
  EXPECT_EQ(state["fields"][0]["crop"], "wheat");

  // The engine delivers the event back (event trigger "season-changed").
  const json event = {{"event", "compute_event"},
                      {"name", "season-changed"},
                      {"payload", json::parse(events[0].payload)},
                      {"sourceModule", "world-sim"},
                      {"flowId", "flow-1"},
                      {"depth", 1}};
  calls.emits.clear();
  CallOutcome handled = sim->Event(event.dump(), calls, kLimits);
  ASSERT_TRUE(handled.ok) << handled.error;
  ASSERT_EQ(calls.emits.size(), 1u);
  EXPECT_EQ(calls.emits[0].kind, "channel");
  EXPECT_EQ(calls.emits[0].target, "all");
  const json notice = json::parse(calls.emits[0].payload);
  EXPECT_EQ(notice["type"], "season");
  EXPECT_EQ(notice["season"], "summer");
  state = json::parse(*calls.state);
  ASSERT_EQ(state["fields"].size(), 4u);
  EXPECT_EQ(state["fields"][0]["crop"], "corn");
  EXPECT_EQ(state["fields"][0]["growth"], 0.0);

  // A fresh instance carries on from the blob; forecast reads it.
  auto fresh = WorldSim();
  ASSERT_NE(fresh, nullptr);
  ASSERT_TRUE(fresh->Init(calls, kLimits).ok);
  EXPECT_EQ(calls.logs.back(), "1 world-sim init: year 1, Summer, tick 60");
  CallOutcome forecast = fresh->Invoke(InvokeInput("forecast"), calls, kLimits);
  ASSERT_TRUE(forecast.ok) << forecast.error;
  const json f = json::parse(forecast.output);
  EXPECT_EQ(f["season"], "summer");
  EXPECT_EQ(f["ticksToNextSeason"], 60);
  EXPECT_EQ(f["harvested"], state["harvested"]);

  CallOutcome unknown = fresh->Invoke(InvokeInput("nope"), calls, kLimits);
  EXPECT_FALSE(unknown.ok);
  EXPECT_FALSE(unknown.instance_dead);
  EXPECT_EQ(unknown.error, R"(unknown export "nope" (forecast))");

  // Over the egress budget the notice is logged, never silently dropped.
  calls.channel_result = HostCallResult::Error(
      abi::kErrEgressBudget, "over maxEgressMsgsPerMin (600)");
  CallOutcome again = fresh->Event(event.dump(), calls, kLimits);
  ASSERT_TRUE(again.ok) << again.error;
  EXPECT_EQ(calls.logs.back(),
            "2 notice not sent: egress_budget: over maxEgressMsgsPerMin "
            "(600)");
}

}  // namespace
}  // namespace tessera::compute
