// ComputeEngine: management, invoke and ticks (engine_test_fixture.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "compute/engine_test_fixture.h"

namespace tessera::compute::testing {
namespace {

using ::testing::HasSubstr;

int CountLogs(const std::vector<LogRecord>& logs, std::string_view prefix) {
  int n = 0;
  for (const LogRecord& l : logs) n += l.message.rfind(prefix, 0) == 0;
  return n;
}

TEST_F(EngineTest, ModulesStartDisabledAndEnablingNeedsASucceededVersion) {
  Result<ModuleRecord> m = engine_->UpsertModule("world-sim", "crops", false);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_FALSE(m->enabled);
  EXPECT_EQ(engine_->UpsertModule("World", "", false).status().code(),
            StatusCode::kInvalidArgument);

  Result<ModuleRecord> on = engine_->SetEnabled("world-sim", true);
  EXPECT_EQ(on.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(on.status().message(), HasSubstr("no versions"));

  DeployRequest bad;
  bad.module = "world-sim";
  bad.files = ModuleFiles("broken");
  Result<VersionRecord> v = engine_->DeployVersion(bad);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->version_no, 1);
  EXPECT_EQ(v->status, CompileStatus::kPending);
  VersionRecord done = WaitCompiled(1);
  EXPECT_EQ(done.status, CompileStatus::kFailed);
  on = engine_->SetEnabled("world-sim", true);
  EXPECT_EQ(on.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(on.status().message(), HasSubstr("version 1 is failed"));

  Result<std::vector<VersionRecord>> versions =
      engine_->Versions("world-sim", 10);
  ASSERT_TRUE(versions.ok());
  ASSERT_EQ(versions->size(), 1u);
  EXPECT_THAT(versions->front().compile_log, HasSubstr("broken on purpose"));

  // A source the rules refuse never becomes a version.
  DeployRequest refused;
  refused.module = "world-sim";
  refused.files = {{"build.sh", "echo hi"}};
  EXPECT_EQ(engine_->DeployVersion(refused).status().code(),
            StatusCode::kInvalidArgument);
  DeployRequest nowhere;
  nowhere.module = "nope";
  nowhere.files = ModuleFiles("counter");
  EXPECT_EQ(engine_->DeployVersion(nowhere).status().code(),
            StatusCode::kNotFound);
}

TEST_F(EngineTest, MaxModulesIsEnforced) {
  ASSERT_TRUE(engine_->SetPolicy(R"({"maxModules": 2})").ok());
  ASSERT_TRUE(engine_->UpsertModule("a", "", false).ok());
  ASSERT_TRUE(engine_->UpsertModule("b", "", false).ok());
  EXPECT_EQ(engine_->UpsertModule("c", "", false).status().code(),
            StatusCode::kResourceExhausted);
  EXPECT_TRUE(engine_->UpsertModule("a", "again", true).ok());
  ASSERT_TRUE(engine_->DeleteModule("b").ok());
  EXPECT_TRUE(engine_->UpsertModule("c", "", false).ok());
  EXPECT_EQ(engine_->DeleteModule("b").code(), StatusCode::kNotFound);
}

TEST_F(EngineTest, TriggersAreValidated) {
  ASSERT_TRUE(engine_->UpsertModule("m", "", false).ok());
  EXPECT_EQ(engine_->UpsertTrigger({"m", Tick(11)}).status().code(),
            StatusCode::kInvalidArgument);  // over maxTickHz 10
  EXPECT_EQ(engine_->UpsertTrigger({"m", Tick(0)}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(engine_->UpsertTrigger({"m", Invoke("")}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(engine_->UpsertTrigger({"m", Invoke("x", R"({"type":"nobody"})")})
                .status()
                .code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(
      engine_
          ->UpsertTrigger(
              {"m", Invoke("x", "", R"({"params":{"a":{"type":"long"}}})")})
          .status()
          .code(),
      StatusCode::kInvalidArgument);
  TriggerRecord data = OnEvent("x", 0);
  data.on_event = "property_changed";
  EXPECT_EQ(engine_->UpsertTrigger({"m", data}).status().code(),
            StatusCode::kInvalidArgument);
  Result<TriggerRecord> tick = engine_->UpsertTrigger({"m", Tick(2)});
  ASSERT_TRUE(tick.ok());
  ASSERT_TRUE(engine_->UpsertTrigger({"m", Tick(5)}).ok());  // replaces it
  Result<std::vector<TriggerRecord>> all = engine_->Triggers("m");
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ(all->front().tick_hz, 5);
  EXPECT_TRUE(engine_->DeleteTrigger("m", all->front().id).ok());
  EXPECT_EQ(engine_->DeleteTrigger("m", all->front().id).code(),
            StatusCode::kNotFound);
}

// The seed's worked example: alwaysOn, 2 Hz, enabled -> an init run row
// with its log line, then ~120 ticks a minute in usage and none in runs.
TEST_F(EngineTest, TicksAtTwoHertzCountInUsageNotRuns) {
  const int64_t id = Ready("counter", "counter", {Tick(2)});
  Pass();
  EXPECT_TRUE(ViewOf("counter").loaded);
  std::vector<RunRecord> runs = RunsOf("counter");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].source, TriggerSource::kInit);
  EXPECT_TRUE(runs[0].success);
  EXPECT_EQ(runs[0].version_no, 1);
  EXPECT_FALSE(runs[0].flow_id.empty());
  std::vector<LogRecord> logs = LogsOf("counter");
  ASSERT_EQ(logs.size(), 1u);
  EXPECT_EQ(logs[0].message, "init");
  EXPECT_EQ(logs[0].source, TriggerSource::kInit);

  for (int i = 0; i < 120; ++i) Advance(500'000);
  UsageRow usage = UsageTotal("counter");
  EXPECT_EQ(usage.ticks, 120);
  EXPECT_EQ(usage.runs, 121);  // the init run too
  EXPECT_EQ(usage.failures, 0);
  EXPECT_GT(usage.fuel_used, 0);
  EXPECT_EQ(RunsOf("counter").size(), 1u);
  Result<StateBlob> blob = store_.GetState(id);
  ASSERT_TRUE(blob.ok());
  EXPECT_EQ(blob->bytes, "120");
  EXPECT_EQ(CountLogs(LogsOf("counter"), "tick "), 120);
  logs = LogsOf("counter");
  EXPECT_EQ(logs.front().message, "tick 120 dt 500");  // newest first
  EXPECT_EQ(engine_->counters().ticks, 120);
  EXPECT_EQ(engine_->counters().loaded_modules, 1);

  Result<StatsView> stats = engine_->Stats(60);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->total_runs, 121);
  EXPECT_EQ(stats->failed_runs, 0);
  Result<DiagnosticsView> diag = engine_->Diagnostics();
  ASSERT_TRUE(diag.ok());
  EXPECT_EQ(diag->module_count, 1);
  EXPECT_EQ(diag->enabled_module_count, 1);
  EXPECT_EQ(diag->loaded_module_count, 1);
  EXPECT_EQ(diag->version_count, 1);
  EXPECT_EQ(diag->trigger_count, 1);
  EXPECT_EQ(diag->runs_24h, 121);
}

TEST_F(EngineTest, TicksNeverBurstAfterASlowTickAndDtIsTheTimeSinceTheLast) {
  Ready("counter", "counter", {Tick(10)});
  Pass();            // init at t0
  Advance(100'000);  // tick 1, dt 100
  // The worker was held up (a slow tick elsewhere on it): 350 ms pass
  // before the next pass. One tick runs, not three.
  Advance(350'000);
  std::vector<LogRecord> logs = LogsOf("counter");
  EXPECT_EQ(CountLogs(logs, "tick "), 2);
  EXPECT_EQ(logs.front().message, "tick 2 dt 350");
  // The cadence stays on the original grid: t0 + 500 ms is the next.
  Advance(40'000);  // t0 + 490 ms: not due
  EXPECT_EQ(CountLogs(LogsOf("counter"), "tick "), 2);
  Advance(10'000);  // t0 + 500 ms
  logs = LogsOf("counter");
  EXPECT_EQ(CountLogs(logs, "tick "), 3);
  EXPECT_EQ(logs.front().message, "tick 3 dt 50");
  // Extra passes (pokes) at the same time never fire a tick twice.
  Pass();
  Pass();
  EXPECT_EQ(CountLogs(LogsOf("counter"), "tick "), 3);
}

TEST_F(EngineTest, InvokeReturnsJsonOrBytesWithFuelAndFlow) {
  Ready("echo", "echo",
        {Invoke("echo"), Invoke("bytes"), Invoke("caller"), Invoke("fail")});
  Pass();
  Result<InvokeResult> r = Call("echo", "echo", R"({"day": 3})", false, "u-17");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->result_is_json);
  nlohmann::json echoed = nlohmann::json::parse(r->result);
  EXPECT_EQ(echoed["export"], "echo");
  EXPECT_EQ(echoed["params"]["day"], 3);
  EXPECT_EQ(echoed["callerUserId"], "u-17");
  EXPECT_GT(r->fuel_used, 0);
  EXPECT_FALSE(r->flow_id.empty());

  Result<InvokeResult> bytes = Call("echo", "bytes");
  ASSERT_TRUE(bytes.ok());
  EXPECT_FALSE(bytes->result_is_json);
  EXPECT_EQ(bytes->result, std::string("\x00\xff\x01", 3));

  Result<InvokeResult> failed =
      Call("echo", "fail", R"({"reason": "no gold"})");
  EXPECT_FALSE(failed.ok());
  EXPECT_THAT(failed.status().message(), HasSubstr("echo failed: no gold"));

  std::vector<RunRecord> runs = RunsOf("echo");
  ASSERT_EQ(runs.size(), 4u);  // init + 3 invokes, newest first
  EXPECT_EQ(runs[0].entry, "fail");
  EXPECT_FALSE(runs[0].success);
  EXPECT_THAT(runs[0].error_message, HasSubstr("no gold"));
  EXPECT_EQ(runs[2].source, TriggerSource::kInvoke);
  EXPECT_EQ(runs[2].entry, "echo");
  EXPECT_EQ(runs[2].flow_id, r->flow_id);
  EXPECT_EQ(runs[3].source, TriggerSource::kInit);

  EXPECT_EQ(Call("echo", "nope").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(Call("ghost", "echo").status().code(), StatusCode::kNotFound);
}

TEST_F(EngineTest, PolicyDenialAndContractViolationsNeverReachTheSandbox) {
  Ready("shop", "echo",
        {Invoke("echo", R"({"type":"user_in_list","users":["alice"]})",
                R"({"params":{"amount":{"type":"int","required":true}}})"),
         Invoke("caller", "")});
  Pass();
  const size_t runs_before = RunsOf("shop").size();
  const int64_t fuel_before = engine_->counters().fuel_used;

  Result<InvokeResult> denied =
      Call("shop", "echo", R"({"amount": 1})", false, "bob");
  EXPECT_EQ(denied.status().code(), StatusCode::kPermissionDenied);
  // No policy: management callers only.
  EXPECT_EQ(Call("shop", "caller", "{}", false, "alice").status().code(),
            StatusCode::kPermissionDenied);
  Result<InvokeResult> bad =
      Call("shop", "echo", R"({"amount": "five"})", false, "alice");
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(),
              HasSubstr("BAD_REQUEST: params.amount: expected int"));
  Result<InvokeResult> missing = Call("shop", "echo", "{}", true);
  EXPECT_EQ(missing.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(missing.status().message(), HasSubstr("params.amount"));
  EXPECT_EQ(Call("shop", "caller", "[1]").status().code(),
            StatusCode::kInvalidArgument);
  const std::string huge = R"({"pad": ")" + std::string(1 << 20, 'x') + "\"}";
  Result<InvokeResult> too_big = Call("shop", "caller", huge);
  EXPECT_EQ(too_big.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(too_big.status().message(), HasSubstr("over the limit"));

  EXPECT_EQ(RunsOf("shop").size(), runs_before);
  EXPECT_EQ(engine_->counters().fuel_used, fuel_before);

  EXPECT_TRUE(Call("shop", "echo", R"({"amount": 1})", false, "alice").ok());
  EXPECT_TRUE(Call("shop", "caller", "{}", true).ok());
  EXPECT_EQ(RunsOf("shop").size(), runs_before + 2);
}

TEST_F(EngineTest, DisableUnloadsAndANewVersionRestartsTheInstance) {
  Ready("counter", "counter", {Tick(2), Invoke("get")});
  Pass();
  ASSERT_TRUE(ViewOf("counter").loaded);
  ASSERT_TRUE(engine_->SetEnabled("counter", false).ok());
  Pass();
  EXPECT_FALSE(ViewOf("counter").loaded);
  EXPECT_EQ(Call("counter", "get").status().code(), StatusCode::kUnavailable);
  ASSERT_TRUE(engine_->SetEnabled("counter", true).ok());
  Pass();
  EXPECT_TRUE(ViewOf("counter").loaded);

  // Version 2 succeeds while the module is enabled: it becomes active and
  // a fresh instance runs init.
  DeployRequest deploy;
  deploy.module = "counter";
  deploy.files = ModuleFiles("counter");
  deploy.files["module.cc"] += "// v2\n";
  ASSERT_TRUE(engine_->DeployVersion(deploy).ok());
  WaitCompiled(2);
  Pass();
  ModuleView view = ViewOf("counter");
  EXPECT_EQ(view.record.active_version, 2);
  EXPECT_TRUE(view.loaded);
  std::vector<RunRecord> runs = RunsOf("counter");
  ASSERT_EQ(runs.size(), 3u);  // three inits, newest first
  EXPECT_EQ(runs[0].source, TriggerSource::kInit);
  EXPECT_EQ(runs[0].version_no, 2);
}

TEST_F(EngineTest, EnableOnSuccessEnablesTheModuleOnceCompiled) {
  ASSERT_TRUE(engine_->UpsertModule("m", "", true).ok());
  DeployRequest deploy;
  deploy.module = "m";
  deploy.files = ModuleFiles("counter");
  deploy.enable_on_success = true;
  ASSERT_TRUE(engine_->DeployVersion(deploy).ok());
  WaitCompiled(1);
  ModuleView view = ViewOf("m");
  EXPECT_TRUE(view.record.enabled);
  EXPECT_EQ(view.record.active_version, 1);
  Result<ModuleRecord> stored = store_.GetModule("m");
  ASSERT_TRUE(stored.ok());
  EXPECT_TRUE(stored->enabled);
  Pass();
  EXPECT_TRUE(ViewOf("m").loaded);
}

// A restart while a manifest module's first version compiled: the store
// has the version pending, the restarted queue resumes it, and the boot
// sync's EnableWhenCompiled enables the module when (or if already) it
// succeeded; a failed version leaves it disabled.
TEST_F(EngineTest, EnableWhenCompiledEnablesAVersionAResumedCompileFinishes) {
  engine_->Shutdown();
  engine_.reset();
  Result<ModuleRecord> m = store_.UpsertModule("m", "", true);
  ASSERT_TRUE(m.ok());
  Result<ModuleRecord> bad = store_.UpsertModule("bad", "", true);
  ASSERT_TRUE(bad.ok());
  for (auto [id, guest] : {std::pair<int64_t, const char*>{m->id, "counter"},
                           {bad->id, "broken"}}) {
    VersionRecord pending;
    pending.module_id = id;
    pending.language = Language::kCpp;
    pending.sdk_version = "0.1.0";
    pending.files = ModuleFiles(guest);
    pending.source_hash =
        SourceHash(Language::kCpp, pending.sdk_version, pending.files);
    ASSERT_TRUE(store_.AddVersion(pending).ok());
  }
  Boot();
  ASSERT_TRUE(engine_->EnableWhenCompiled("m", 1).ok());
  ASSERT_TRUE(engine_->EnableWhenCompiled("bad", 1).ok());
  WaitCompiled(2);
  EXPECT_TRUE(ViewOf("m").record.enabled);
  EXPECT_EQ(ViewOf("m").record.active_version, 1);
  EXPECT_FALSE(ViewOf("bad").record.enabled);
  // Asked again after the compile finished: still enabled, no error.
  ASSERT_TRUE(engine_->EnableWhenCompiled("m", 1).ok());
  EXPECT_TRUE(ViewOf("m").record.enabled);
  Result<ModuleRecord> stored = store_.GetModule("m");
  ASSERT_TRUE(stored.ok());
  EXPECT_TRUE(stored->enabled);
  EXPECT_EQ(engine_->EnableWhenCompiled("nope", 1).code(),
            StatusCode::kNotFound);
}

TEST_F(EngineTest, ARestartedEngineResumesFromTheStore) {
  Ready("counter", "counter", {Tick(2)});
  Pass();
  Advance(500'000);
  engine_->Shutdown();
  EXPECT_EQ(Call("counter", "get").status().code(), StatusCode::kUnavailable);
  engine_.reset();
  Boot();
  Pass();
  EXPECT_TRUE(ViewOf("counter").loaded);
  EXPECT_EQ(RunsOf("counter").size(), 2u);  // one init per engine
  EXPECT_EQ(UsageTotal("counter").ticks, 1);
}

}  // namespace
}  // namespace tessera::compute::testing
