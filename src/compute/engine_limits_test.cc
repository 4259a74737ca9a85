// ComputeEngine: limits and breakers (circuit, fuel, watchdog, egress, kill
// switch), events (debounce, the cascade's depth limit), activation (idle
// unload, alwaysOn), the state revision guard of a short-lived instance, and
// templates (engine_test_fixture.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "compute/engine_test_fixture.h"

namespace tessera::compute::testing {
namespace {

using ::testing::HasSubstr;

int Count(const std::vector<RunRecord>& runs, TriggerSource source,
          bool success) {
  return static_cast<int>(
      std::count_if(runs.begin(), runs.end(), [&](const RunRecord& r) {
        return r.source == source && r.success == success;
      }));
}

bool HasLog(const std::vector<LogRecord>& logs, std::string_view text) {
  return std::any_of(logs.begin(), logs.end(), [&](const LogRecord& l) {
    return l.message.find(text) != std::string::npos;
  });
}

TEST_F(EngineTest, FailedTicksOpenTheCircuitAndAProbeClosesIt) {
  ASSERT_TRUE(
      engine_->SetPolicy(R"({"failureThreshold": 3, "cooldownMs": 10000})")
          .ok());
  Ready("trap", "trap", {Tick(1), Invoke("ok")});
  Pass();  // init
  // Each tick traps (the instance dies; the next deadline loads a fresh
  // one, whose successful init does not reset the failure count).
  for (int i = 0; i < 5; ++i) Advance(1'000'000);
  std::vector<RunRecord> runs = RunsOf("trap");
  EXPECT_EQ(Count(runs, TriggerSource::kTick, false), 3);
  EXPECT_EQ(runs.front().circuit_action, "opened");
  EXPECT_THAT(runs.front().error_message, HasSubstr("trap"));
  ModuleView view = ViewOf("trap");
  EXPECT_EQ(view.record.circuit, CircuitState::kOpen);
  EXPECT_EQ(view.record.consecutive_failures, 3);
  EXPECT_EQ(engine_->counters().circuit_opens, 1);
  Result<ModuleRecord> stored = store_.GetModule("trap");
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->circuit, CircuitState::kOpen);

  // Open: runs are refused and are not runs.
  const size_t rows = runs.size();
  Result<InvokeResult> refused = Call("trap", "ok");
  EXPECT_EQ(refused.status().code(), StatusCode::kUnavailable);
  for (int i = 0; i < 8; ++i) Advance(1'000'000);
  EXPECT_EQ(RunsOf("trap").size(), rows);

  // After the cooldown the next run is the probe: the init of a fresh
  // instance, which succeeds and closes the circuit.
  Advance(2'000'000);
  runs = RunsOf("trap");
  ASSERT_GT(runs.size(), rows);
  const RunRecord& probe = runs[runs.size() - rows - 1];
  EXPECT_EQ(probe.source, TriggerSource::kProbe);
  EXPECT_EQ(probe.entry, "init");
  EXPECT_EQ(probe.circuit_action, "closed");
  EXPECT_EQ(ViewOf("trap").record.circuit, CircuitState::kClosed);
  EXPECT_TRUE(Call("trap", "ok").ok());

  // Re-enabling resets the circuit even while it is open.
  for (int i = 0; i < 8; ++i) Advance(1'000'000);
  ASSERT_EQ(ViewOf("trap").record.circuit, CircuitState::kOpen);
  ASSERT_TRUE(engine_->SetEnabled("trap", true).ok());
  view = ViewOf("trap");
  EXPECT_EQ(view.record.circuit, CircuitState::kClosed);
  EXPECT_EQ(view.record.consecutive_failures, 0);
  EXPECT_EQ(view.record.last_error, "");
  EXPECT_TRUE(Call("trap", "ok").ok());
}

TEST_F(EngineTest, FuelExhaustionFailsTheRunAndRestartsTheInstance) {
  ASSERT_TRUE(engine_->SetPolicy(R"({"fuelPerInvoke": 5000000})").ok());
  Ready("spin", "spin", {Invoke("spin")});
  Pass();
  ASSERT_TRUE(ViewOf("spin").loaded);
  Result<InvokeResult> r = Call("spin", "spin");
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(r.status().message(), HasSubstr("fuel"));
  EXPECT_FALSE(ViewOf("spin").loaded);
  std::vector<RunRecord> runs = RunsOf("spin");
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_FALSE(runs[0].success);
  EXPECT_GE(runs[0].fuel_used, 5'000'000);
  Pass();  // a fresh instance runs init
  EXPECT_TRUE(ViewOf("spin").loaded);
  runs = RunsOf("spin");
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0].source, TriggerSource::kInit);
  EXPECT_TRUE(runs[0].success);
}

TEST_F(EngineTest, TheWatchdogStopsALongCall) {
  ASSERT_TRUE(
      engine_->SetPolicy(R"({"fuelPerInvoke": 1000000000000, "maxRunMs": 30})")
          .ok());
  Ready("busy", "busy", {Invoke("spin")});
  Pass();
  Result<InvokeResult> r =
      Call("busy", "spin", R"({"iterations": 1000000000000})");
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_THAT(r.status().message(), HasSubstr("watchdog"));
  EXPECT_FALSE(ViewOf("busy").loaded);
  EXPECT_FALSE(RunsOf("busy").front().success);
}

TEST_F(EngineTest, OverTheEgressBudgetTheModuleGetsAnErrorAndNothingIsSent) {
  ASSERT_TRUE(engine_->SetPolicy(R"({"maxEgressMsgsPerMin": 2})").ok());
  Ready("emit", "emit", {Invoke("channel")});
  Pass();
  const std::string params = R"({"channel": "all", "payload": "hi"})";
  for (int i = 0; i < 2; ++i) {
    Result<InvokeResult> r = Call("emit", "channel", params);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(nlohmann::json::parse(r->result)["ok"], true);
  }
  Result<InvokeResult> over = Call("emit", "channel", params);
  ASSERT_TRUE(over.ok());
  nlohmann::json outcome = nlohmann::json::parse(over->result);
  EXPECT_EQ(outcome["ok"], false);
  EXPECT_EQ(outcome["code"], -5);
  EXPECT_EQ(outcome["errorCode"], "egress_budget");
  EXPECT_THAT(outcome["lastError"].get<std::string>(),
              HasSubstr("\"code\":\"egress_budget\""));
  {
    std::lock_guard<std::mutex> lock(notify_.mu);
    ASSERT_EQ(notify_.sent.size(), 2u);
    EXPECT_EQ(notify_.sent[0].module, "emit");
    EXPECT_EQ(notify_.sent[0].channel, "all");
    EXPECT_EQ(notify_.sent[0].payload, "hi");
    EXPECT_FALSE(notify_.sent[0].flow_id.empty());
  }
  UsageRow usage = UsageTotal("emit");
  EXPECT_EQ(usage.egress_msgs, 2);
  EXPECT_EQ(usage.egress_bytes, 4);
  EXPECT_EQ(engine_->counters().egress_refused, 1);
  EXPECT_EQ(RunsOf("emit").front().egress_msgs, 0);

  Advance(60'000'000);  // the next minute
  Result<InvokeResult> again = Call("emit", "channel", params);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(nlohmann::json::parse(again->result)["ok"], true);
}

TEST_F(EngineTest, EventsAreDebouncedAndCascadesStopAtTheDepthLimit) {
  const int64_t id =
      Ready("ev", "events", {OnEvent("ping", 1000), OnEvent("again", 0)});
  Pass();
  engine_->RaiseEvent("compute_event", "ping", R"({"n": 1})", "flow-a");
  engine_->RaiseEvent("compute_event", "ping", R"({"n": 2})", "flow-b");
  Advance(500'000);
  engine_->RaiseEvent("compute_event", "ping", R"({"n": 3})", "flow-c");
  Pass();
  EXPECT_EQ(Count(RunsOf("ev"), TriggerSource::kEvent, true), 0);
  Advance(500'000);  // the window of the first event ends
  std::vector<RunRecord> runs = RunsOf("ev");
  ASSERT_EQ(Count(runs, TriggerSource::kEvent, true), 1);
  EXPECT_EQ(runs.front().entry, "event:ping");
  EXPECT_EQ(runs.front().flow_id, "flow-c");
  EXPECT_TRUE(HasLog(LogsOf("ev"),
                     "event ping from  depth 1 coalesced 3 payload json"));
  Result<StateBlob> blob = store_.GetState(id);
  ASSERT_TRUE(blob.ok());
  nlohmann::json input = nlohmann::json::parse(blob->bytes);
  EXPECT_EQ(input["payload"]["n"], 3);
  EXPECT_EQ(input["flowId"], "flow-c");

  // Not JSON: payloadBase64.
  engine_->RaiseEvent("compute_event", "again", "\x01\x02", "flow-d");
  // Each pass delivers one event of the cascade; the run at depth 8 cannot
  // emit and fails.
  for (int i = 0; i < 12; ++i) Pass();
  runs = RunsOf("ev");
  int again_ok = 0, again_failed = 0;
  for (const RunRecord& r : runs) {
    if (r.entry != "event:again") continue;
    EXPECT_EQ(r.flow_id, "flow-d");
    (r.success ? again_ok : again_failed)++;
  }
  EXPECT_EQ(again_ok, 7);
  EXPECT_EQ(again_failed, 1);
  EXPECT_THAT(runs.front().error_message, HasSubstr("event_depth"));
  std::vector<LogRecord> logs = LogsOf("ev");
  EXPECT_TRUE(HasLog(logs,
                     "event again from  depth 1 coalesced 0 payload "
                     "base64:AQI="));
  EXPECT_TRUE(HasLog(logs, "event again from ev depth 8"));
  EXPECT_FALSE(HasLog(logs, "depth 9"));
}

TEST_F(EngineTest, TheKillSwitchPausesEverything) {
  Ready("counter", "counter", {Tick(2), Invoke("get")});
  Pass();
  Advance(1'000'000);  // one pass: one tick (never a burst)
  const int64_t ticks = UsageTotal("counter").ticks;
  ASSERT_GT(ticks, 0);
  ASSERT_TRUE(engine_->SetPolicy(R"({"enabled": false})").ok());
  Result<InvokeResult> r = Call("counter", "get");
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(r.status().message(),
            "compute is switched off for this app (policy.enabled = false)");
  for (int i = 0; i < 10; ++i) Advance(500'000);
  EXPECT_EQ(UsageTotal("counter").ticks, ticks);
  EXPECT_FALSE(ViewOf("counter").loaded);
  ASSERT_TRUE(engine_->SetPolicy(R"({"enabled": true})").ok());
  Pass();
  EXPECT_TRUE(ViewOf("counter").loaded);
  Advance(500'000);
  EXPECT_EQ(UsageTotal("counter").ticks, ticks + 1);
}

TEST_F(EngineTest, ModulesLoadWithSessionsAndUnloadAfterTheIdleWindow) {
  ASSERT_TRUE(engine_->SetPolicy(R"({"idleUnloadMs": 10000})").ok());
  Ready("lazy", "counter", {Tick(1)}, /*always_on=*/false);
  Ready("always", "counter", {Tick(1)}, /*always_on=*/true);
  Pass();
  EXPECT_FALSE(ViewOf("lazy").loaded);
  EXPECT_TRUE(ViewOf("always").loaded);

  notify_.sessions = 2;
  engine_->OnSessionsChanged();
  Pass();  // the housekeeping pass sees the sessions and pokes the modules
  Pass();
  EXPECT_TRUE(ViewOf("lazy").loaded);
  EXPECT_EQ(RunsOf("lazy").size(), 1u);  // its init

  notify_.sessions = 0;
  engine_->OnSessionsChanged();
  Pass();
  for (int i = 0; i < 9; ++i) Advance(1'000'000);
  EXPECT_TRUE(ViewOf("lazy").loaded);  // within the idle window
  Advance(1'000'000);
  Pass();
  EXPECT_FALSE(ViewOf("lazy").loaded);
  EXPECT_TRUE(ViewOf("always").loaded);
  EXPECT_EQ(RunsOf("lazy").size(), 1u);  // an unload is not a run
  const int64_t lazy_ticks = UsageTotal("lazy").ticks;
  for (int i = 0; i < 3; ++i) Advance(1'000'000);
  EXPECT_EQ(UsageTotal("lazy").ticks, lazy_ticks);
}

// A module that is not loaded runs invokes on a short-lived instance that
// does not hold the tick lease: its state_set passes only over the revision
// it read; after the lease holder persisted it is refused with a warning.
TEST_F(EngineTest, AShortLivedInstanceCannotOverwriteTheLeaseHolder) {
  const int64_t id = Ready("counter", "counter", {Invoke("save")},
                           /*always_on=*/false);
  Pass();
  ASSERT_FALSE(ViewOf("counter").loaded);
  Result<InvokeResult> first = Call("counter", "save", R"({"value": 5})");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(nlohmann::json::parse(first->result)["ok"], true);
  EXPECT_FALSE(ViewOf("counter").loaded);
  std::vector<RunRecord> runs = RunsOf("counter");
  ASSERT_EQ(runs.size(), 2u);  // the short-lived instance's init, the call
  EXPECT_EQ(runs[1].source, TriggerSource::kInit);
  EXPECT_EQ(runs[1].flow_id, runs[0].flow_id);

  // The lease holder (another server's instance) persists while the next
  // short-lived instance runs its init.
  on_log = [&](std::string_view text) {
    if (text == "init") {
      EXPECT_TRUE(store_.SetState(id, "77", 0, true).ok());
    }
  };
  Result<InvokeResult> second = Call("counter", "save", R"({"value": 6})");
  on_log = nullptr;
  ASSERT_TRUE(second.ok());
  nlohmann::json outcome = nlohmann::json::parse(second->result);
  EXPECT_EQ(outcome["ok"], false);
  EXPECT_EQ(outcome["errorCode"], "stale_state");
  Result<StateBlob> blob = store_.GetState(id);
  ASSERT_TRUE(blob.ok());
  EXPECT_EQ(blob->bytes, "77");
  EXPECT_TRUE(HasLog(LogsOf("counter"),
                     "state_set refused: the tick-lease holder persisted "
                     "revision 2 after this instance read revision 1"));
}

TEST_F(EngineTest, TheLeaseHolderAlwaysWinsStateWrites) {
  const int64_t id = Ready("counter", "counter", {Invoke("save")});
  Pass();
  ASSERT_TRUE(ViewOf("counter").loaded);
  ASSERT_TRUE(store_.SetState(id, "41", 0, true).ok());
  Result<InvokeResult> r = Call("counter", "save", R"({"value": 42})");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(nlohmann::json::parse(r->result)["ok"], true);
  EXPECT_EQ(store_.GetState(id)->bytes, "42");
}

TEST_F(EngineTest, DeployTemplateCreatesTheModuleAndDeploysItsFiles) {
  engine_->Shutdown();
  templates_dir_ =
      std::filesystem::path(TESSERA_COMPUTE_TEST_CACHE) / "engine_templates";
  std::filesystem::create_directories(templates_dir_ / "probe");
  std::ofstream(templates_dir_ / "probe" / "template.json")
      << R"({"description": "a probe", "language": "cpp"})";
  std::ofstream(templates_dir_ / "probe" / "module.cc")
      << "// test module: echo\nint unused_symbol;\n";
  Boot();
  std::vector<TemplateInfo> templates = engine_->Templates();
  ASSERT_EQ(templates.size(), 1u);
  EXPECT_EQ(templates[0].name, "probe");
  EXPECT_EQ(templates[0].language, Language::kCpp);

  Result<VersionRecord> v = engine_->DeployTemplate("probe", "");
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->template_name, "probe");
  EXPECT_EQ(WaitCompiled(1).status, CompileStatus::kSucceeded);
  ModuleView view = ViewOf("probe");
  EXPECT_EQ(view.record.description, "a probe");
  ASSERT_TRUE(view.latest_version.has_value());
  EXPECT_EQ(view.latest_version->template_name, "probe");
  EXPECT_EQ(engine_->DeployTemplate("nope", "x").status().code(),
            StatusCode::kNotFound);
}

TEST_F(EngineTest, OldRunsAndLogsArePrunedUsageStaysLonger) {
  Ready("counter", "counter", {Invoke("get")});
  Pass();
  ASSERT_TRUE(Call("counter", "get").ok());
  ASSERT_EQ(RunsOf("counter").size(), 2u);
  ASSERT_FALSE(LogsOf("counter").empty());
  Advance(8LL * 24 * 3600 * 1'000'000);  // the hourly prune runs
  EXPECT_TRUE(RunsOf("counter").empty());
  EXPECT_TRUE(LogsOf("counter").empty());
  EXPECT_EQ(UsageTotal("counter").runs, 2);  // kept 30 days
  Result<StatsView> stats = engine_->Stats(60);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->total_runs, 0);  // outside the window
  Advance(23LL * 24 * 3600 * 1'000'000);
  EXPECT_EQ(UsageTotal("counter").runs, 0);
}

// Real threads: ticks on a worker while the test thread invokes the same
// module; the module's calls are serialised, none fails.
TEST_F(EngineTest, TicksOnWorkerThreadsAndConcurrentInvokesDoNotOverlap) {
  engine_->Shutdown();
  engine_.reset();
  guest::WorkerPool workers(guest::WorkerPoolOptions{});
  EngineOptions options = Options();
  options.workers = &workers;
  options.clock = nullptr;  // real time
  options.wall_clock = nullptr;
  engine_ = std::make_unique<ComputeEngine>(options);
  ASSERT_TRUE(engine_->Start().ok());
  Ready("emit", "emit", {Tick(10), Invoke("now")});
  int invokes = 0;
  for (int i = 0; i < 200; ++i) {
    Result<InvokeResult> r = Call("emit", "now");
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ++invokes;
  }
  notify_.WaitSent(3);  // three ticks emitted on "all"
  engine_->Shutdown();
  ComputeEngine::Counters c = engine_->counters();
  EXPECT_EQ(c.failures, 0);
  EXPECT_GE(c.ticks, 3);
  EXPECT_EQ(c.runs, c.ticks + invokes + 1);  // + the init
  engine_.reset();
  workers.Shutdown();
}

}  // namespace
}  // namespace tessera::compute::testing
