#include "compute/compute_store_conformance.h"

#include <string>
#include <vector>

#include "compute/compute_store_rules.h"

namespace tessera::compute {

std::string ComputeStoreBackendName(
    const ::testing::TestParamInfo<ComputeStoreBackend>& info) {
  return info.param.name;
}

void PrintTo(const ComputeStoreBackend& backend, std::ostream* os) {
  *os << backend.name;
}

void ComputeStoreConformanceTest::SetUp() {
  store_ = GetParam().make(&clock_);
  ASSERT_NE(store_, nullptr);
}

ModuleRecord ComputeStoreConformanceTest::MakeModule(const std::string& name) {
  Result<ModuleRecord> m = store_->UpsertModule(name, "about " + name, false);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return m.ok() ? *m : ModuleRecord();
}

namespace conformance {

VersionRecord MakeVersion(int64_t module_id, const std::string& hash) {
  VersionRecord v;
  v.module_id = module_id;
  v.language = Language::kCpp;
  v.sdk_version = "0.1.0";
  v.abi_version = 1;
  v.files = {{"src/lib.cc", "int x = 1;\n"},
             {"bytes.h", std::string("a\0b\xff", 4)}};
  v.source_hash = hash;
  return v;
}

RunRecord MakeRun(int64_t module_id, int64_t started_ms, bool success,
                  const std::string& flow_id) {
  RunRecord r;
  r.module_id = module_id;
  r.module_name = "m" + std::to_string(module_id);
  r.version_no = 1;
  r.started_ms = started_ms;
  r.source = TriggerSource::kInvoke;
  r.entry = "buy";
  r.success = success;
  r.flow_id = flow_id;
  return r;
}

LogRecord MakeLog(int64_t module_id, int64_t ts_ms,
                  const std::string& message) {
  LogRecord l;
  l.module_id = module_id;
  l.ts_ms = ts_ms;
  l.level = 2;
  l.message = message;
  l.source = TriggerSource::kTick;
  l.flow_id = "f-" + message;
  return l;
}

TriggerRecord MakeTrigger(int64_t module_id, TriggerType type) {
  TriggerRecord t;
  t.module_id = module_id;
  t.type = type;
  return t;
}

void ExpectNotFound(const Status& s) {
  EXPECT_EQ(s.code(), StatusCode::kNotFound) << s.ToString();
}

}  // namespace conformance

using namespace conformance;  // NOLINT: the suite's own helpers

// --- modules

TEST_P(ComputeStoreConformanceTest, UpsertModuleCreatesDisabledThenUpdates) {
  Result<ModuleRecord> a = store_->UpsertModule("sim", "world", true);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_GT(a->id, 0);
  EXPECT_EQ(a->name, "sim");
  EXPECT_EQ(a->description, "world");
  EXPECT_TRUE(a->always_on);
  EXPECT_FALSE(a->enabled);
  EXPECT_EQ(a->circuit, CircuitState::kClosed);
  EXPECT_EQ(a->active_version, 0);
  EXPECT_EQ(a->created_ms, kStartMs);
  EXPECT_EQ(a->updated_ms, kStartMs);

  ModuleRecord state = *a;
  state.enabled = true;
  state.active_version = 3;
  ASSERT_TRUE(store_->UpdateModuleState(state).ok());

  clock_.Advance(5'000);
  Result<ModuleRecord> b = store_->UpsertModule("sim", "world v2", false);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->id, a->id);
  EXPECT_EQ(b->description, "world v2");
  EXPECT_FALSE(b->always_on);
  // Only description and always_on change.
  EXPECT_TRUE(b->enabled);
  EXPECT_EQ(b->active_version, 3);
  EXPECT_EQ(b->created_ms, kStartMs);
  EXPECT_EQ(b->updated_ms, kStartMs + 5);

  Result<ModuleRecord> got = store_->GetModule("sim");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->description, "world v2");
  EXPECT_TRUE(got->enabled);
}

TEST_P(ComputeStoreConformanceTest, GetModuleAndListByName) {
  ExpectNotFound(store_->GetModule("nope"));
  ModuleRecord z = MakeModule("zeta");
  ModuleRecord a = MakeModule("alpha");
  ModuleRecord m = MakeModule("mid");
  EXPECT_NE(z.id, a.id);
  EXPECT_NE(a.id, m.id);
  Result<std::vector<ModuleRecord>> list = store_->ListModules();
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 3u);
  EXPECT_EQ((*list)[0].name, "alpha");
  EXPECT_EQ((*list)[1].name, "mid");
  EXPECT_EQ((*list)[2].name, "zeta");
  EXPECT_EQ((*list)[0].id, a.id);
  EXPECT_EQ((*list)[0].description, "about alpha");
}

TEST_P(ComputeStoreConformanceTest, UpdateModuleStateWritesTheStateFields) {
  ModuleRecord m = MakeModule("m");
  ModuleRecord change = m;
  change.name = "renamed";         // ignored
  change.description = "ignored";  // ignored
  change.always_on = true;         // ignored
  change.enabled = true;
  change.active_version = 7;
  change.circuit = CircuitState::kHalfOpen;
  change.consecutive_failures = 4;
  change.circuit_opened_ms = 12345;
  change.last_error = "trap: unreachable\n\"quoted\"";
  clock_.Advance(2'000);
  ASSERT_TRUE(store_->UpdateModuleState(change).ok());
  Result<ModuleRecord> got = store_->GetModule("m");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->id, m.id);
  EXPECT_EQ(got->description, "about m");
  EXPECT_FALSE(got->always_on);
  EXPECT_TRUE(got->enabled);
  EXPECT_EQ(got->active_version, 7);
  EXPECT_EQ(got->circuit, CircuitState::kHalfOpen);
  EXPECT_EQ(got->consecutive_failures, 4);
  EXPECT_EQ(got->circuit_opened_ms, 12345);
  EXPECT_EQ(got->last_error, change.last_error);
  EXPECT_EQ(got->created_ms, kStartMs);
  EXPECT_EQ(got->updated_ms, kStartMs + 2);
  ExpectNotFound(store_->GetModule("renamed"));

  ModuleRecord ghost;
  ghost.id = m.id + 100;
  ExpectNotFound(store_->UpdateModuleState(ghost));
}

TEST_P(ComputeStoreConformanceTest, DeleteModuleCascadesToEverything) {
  ModuleRecord gone = MakeModule("gone");
  ModuleRecord kept = MakeModule("kept");
  for (const ModuleRecord* m : {&gone, &kept}) {
    ASSERT_TRUE(store_->AddVersion(MakeVersion(m->id, "h" + m->name)).ok());
    ASSERT_TRUE(
        store_->UpsertTrigger(MakeTrigger(m->id, TriggerType::kTick)).ok());
    std::vector<RunRecord> runs = {MakeRun(m->id, kStartMs, true, "f")};
    ASSERT_TRUE(store_->AddRuns(runs).ok());
    std::vector<UsageRow> usage(1);
    usage[0].module_id = m->id;
    usage[0].minute_ms = kStartMs / 60'000 * 60'000;
    usage[0].ticks = 1;
    ASSERT_TRUE(store_->AddUsage(usage).ok());
    std::vector<LogRecord> logs = {MakeLog(m->id, kStartMs, "hi")};
    ASSERT_TRUE(store_->AddLogs(logs).ok());
    ASSERT_TRUE(store_->SetState(m->id, "blob", 0, true).ok());
  }

  ASSERT_TRUE(store_->DeleteModule(gone.id).ok());
  ExpectNotFound(store_->DeleteModule(gone.id));
  ExpectNotFound(store_->GetModule("gone"));
  ExpectNotFound(store_->GetVersion(gone.id, 1));
  Result<std::optional<VersionRecord>> cached = store_->FindCompiled("hgone");
  ASSERT_TRUE(cached.ok());
  EXPECT_FALSE(cached->has_value());

  Result<std::vector<TriggerRecord>> triggers = store_->ListTriggers(0);
  ASSERT_TRUE(triggers.ok());
  ASSERT_EQ(triggers->size(), 1u);
  EXPECT_EQ((*triggers)[0].module_id, kept.id);
  RunFilter all_runs;
  Result<std::vector<RunRecord>> runs = store_->ListRuns(all_runs);
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ((*runs)[0].module_id, kept.id);
  Result<std::vector<UsageRow>> usage = store_->ListUsage(0, 0);
  ASSERT_TRUE(usage.ok());
  ASSERT_EQ(usage->size(), 1u);
  EXPECT_EQ((*usage)[0].module_id, kept.id);
  Result<std::vector<LogRecord>> logs = store_->ListLogs(LogFilter());
  ASSERT_TRUE(logs.ok());
  ASSERT_EQ(logs->size(), 1u);
  EXPECT_EQ((*logs)[0].module_id, kept.id);
  Result<StateBlob> state = store_->GetState(gone.id);
  ASSERT_TRUE(state.ok());
  EXPECT_EQ(state->revision, 0);
  EXPECT_EQ(state->bytes, "");
  Result<StateBlob> kept_state = store_->GetState(kept.id);
  ASSERT_TRUE(kept_state.ok());
  EXPECT_EQ(kept_state->bytes, "blob");

  // The name is free again: a new module with its own numbering and state.
  ModuleRecord again = MakeModule("gone");
  EXPECT_NE(again.id, gone.id);
  EXPECT_FALSE(again.enabled);
  Result<int64_t> no = store_->AddVersion(MakeVersion(again.id, "hnew"));
  ASSERT_TRUE(no.ok());
  EXPECT_EQ(*no, 1);
  Result<int64_t> rev = store_->SetState(again.id, "x", 0, false);
  ASSERT_TRUE(rev.ok()) << rev.status().ToString();
  EXPECT_EQ(*rev, 1);
}

// --- versions

TEST_P(ComputeStoreConformanceTest, VersionsAreNumberedPerModule) {
  ModuleRecord a = MakeModule("a");
  ModuleRecord b = MakeModule("b");
  for (int64_t want = 1; want <= 3; ++want) {
    Result<int64_t> no = store_->AddVersion(MakeVersion(a.id, "a"));
    ASSERT_TRUE(no.ok()) << no.status().ToString();
    EXPECT_EQ(*no, want);
  }
  VersionRecord ignored_no = MakeVersion(b.id, "b");
  ignored_no.version_no = 42;  // assigned by the store
  Result<int64_t> first_b = store_->AddVersion(ignored_no);
  ASSERT_TRUE(first_b.ok());
  EXPECT_EQ(*first_b, 1);
  Result<int64_t> fourth_a = store_->AddVersion(MakeVersion(a.id, "a"));
  ASSERT_TRUE(fourth_a.ok());
  EXPECT_EQ(*fourth_a, 4);

  ExpectNotFound(store_->AddVersion(MakeVersion(b.id + a.id + 100, "x")));
}

TEST_P(ComputeStoreConformanceTest, VersionRoundTripsEveryField) {
  ModuleRecord m = MakeModule("m");
  VersionRecord v = MakeVersion(m.id, std::string(64, 'e'));
  v.language = Language::kRust;
  v.sdk_version = "0.2.0";
  v.abi_version = 1;
  v.template_name = "counter";
  v.files["Cargo.toml"] = "[package]\nname = \"m\"\n";
  Result<int64_t> no = store_->AddVersion(v);
  ASSERT_TRUE(no.ok());

  Result<VersionRecord> got = store_->GetVersion(m.id, *no);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->module_id, m.id);
  EXPECT_EQ(got->version_no, 1);
  EXPECT_EQ(got->language, Language::kRust);
  EXPECT_EQ(got->sdk_version, "0.2.0");
  EXPECT_EQ(got->abi_version, 1);
  EXPECT_EQ(got->files, v.files);
  EXPECT_EQ(got->source_hash, v.source_hash);
  EXPECT_EQ(got->template_name, "counter");
  EXPECT_EQ(got->status, CompileStatus::kPending);
  EXPECT_EQ(got->compile_log, "");
  EXPECT_FALSE(got->cache_hit);
  EXPECT_EQ(got->created_ms, kStartMs);
  EXPECT_EQ(got->compiled_ms, 0);

  ExpectNotFound(store_->GetVersion(m.id, 2));
  ExpectNotFound(store_->GetVersion(m.id + 1, 1));
}

TEST_P(ComputeStoreConformanceTest, ListVersionsNewestFirstWithLimit) {
  ModuleRecord m = MakeModule("m");
  ModuleRecord other = MakeModule("other");
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(
        store_->AddVersion(MakeVersion(m.id, "h" + std::to_string(i))).ok());
  }
  ASSERT_TRUE(store_->AddVersion(MakeVersion(other.id, "o")).ok());

  Result<std::vector<VersionRecord>> two = store_->ListVersions(m.id, 2, true);
  ASSERT_TRUE(two.ok());
  ASSERT_EQ(two->size(), 2u);
  EXPECT_EQ((*two)[0].version_no, 4);
  EXPECT_EQ((*two)[0].source_hash, "h3");
  EXPECT_EQ((*two)[1].version_no, 3);
  EXPECT_EQ((*two)[0].files.size(), 2u);

  Result<std::vector<VersionRecord>> bare =
      store_->ListVersions(m.id, 10, false);
  ASSERT_TRUE(bare.ok());
  ASSERT_EQ(bare->size(), 4u);
  EXPECT_EQ((*bare)[3].version_no, 1);
  for (const VersionRecord& v : *bare) {
    EXPECT_TRUE(v.files.empty());
    EXPECT_EQ(v.module_id, m.id);
    EXPECT_EQ(v.sdk_version, "0.1.0");
  }
  Result<std::vector<VersionRecord>> none = store_->ListVersions(m.id, 0, true);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  none = store_->ListVersions(m.id, -1, true);  // not "no limit"
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  Result<std::vector<VersionRecord>> unknown =
      store_->ListVersions(other.id + m.id + 10, 10, true);
  ASSERT_TRUE(unknown.ok());
  EXPECT_TRUE(unknown->empty());
}

TEST_P(ComputeStoreConformanceTest, CompileResultAndUnfinishedVersions) {
  ModuleRecord a = MakeModule("a");
  ModuleRecord b = MakeModule("b");
  ASSERT_TRUE(store_->AddVersion(MakeVersion(a.id, "a1")).ok());  // a v1
  ASSERT_TRUE(store_->AddVersion(MakeVersion(b.id, "b1")).ok());  // b v1
  ASSERT_TRUE(store_->AddVersion(MakeVersion(a.id, "a2")).ok());  // a v2
  ASSERT_TRUE(store_->AddVersion(MakeVersion(b.id, "b2")).ok());  // b v2

  VersionRecord done = MakeVersion(a.id, "a1");
  done.version_no = 1;
  done.status = CompileStatus::kSucceeded;
  done.compile_log = "   Compiling m v0.1.0\n\x1b[1mwarning\x1b[0m: unused\n";
  done.compiled_size_bytes = 54321;
  done.artifact_path = "/var/cache/a1.wasm";
  done.cache_hit = true;
  done.compiled_ms = kStartMs + 900;
  done.files.clear();        // ignored
  done.source_hash = "xyz";  // ignored
  ASSERT_TRUE(store_->UpdateVersionCompile(done).ok());
  VersionRecord compiling = MakeVersion(b.id, "b1");
  compiling.version_no = 1;
  compiling.status = CompileStatus::kCompiling;
  ASSERT_TRUE(store_->UpdateVersionCompile(compiling).ok());
  VersionRecord failed = MakeVersion(b.id, "b2");
  failed.version_no = 2;
  failed.status = CompileStatus::kFailed;
  failed.compile_log = "error[E0425]: cannot find value `x`";
  ASSERT_TRUE(store_->UpdateVersionCompile(failed).ok());

  Result<VersionRecord> got = store_->GetVersion(a.id, 1);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->status, CompileStatus::kSucceeded);
  EXPECT_EQ(got->compile_log, done.compile_log);
  EXPECT_EQ(got->compiled_size_bytes, 54321);
  EXPECT_EQ(got->artifact_path, "/var/cache/a1.wasm");
  EXPECT_TRUE(got->cache_hit);
  EXPECT_EQ(got->compiled_ms, kStartMs + 900);
  EXPECT_EQ(got->source_hash, "a1");
  EXPECT_EQ(got->files.size(), 2u);

  // Oldest first over all modules, with files.
  Result<std::vector<VersionRecord>> unfinished =
      store_->ListUnfinishedVersions();
  ASSERT_TRUE(unfinished.ok());
  ASSERT_EQ(unfinished->size(), 2u);
  EXPECT_EQ((*unfinished)[0].module_id, b.id);
  EXPECT_EQ((*unfinished)[0].version_no, 1);
  EXPECT_EQ((*unfinished)[0].status, CompileStatus::kCompiling);
  EXPECT_EQ((*unfinished)[1].module_id, a.id);
  EXPECT_EQ((*unfinished)[1].version_no, 2);
  EXPECT_EQ((*unfinished)[1].status, CompileStatus::kPending);
  EXPECT_EQ((*unfinished)[1].files, MakeVersion(a.id, "").files);

  VersionRecord ghost = MakeVersion(a.id, "");
  ghost.version_no = 9;
  ExpectNotFound(store_->UpdateVersionCompile(ghost));
}

TEST_P(ComputeStoreConformanceTest, FindCompiledOnlyFindsSucceededVersions) {
  ModuleRecord a = MakeModule("a");
  ModuleRecord b = MakeModule("b");
  Result<std::optional<VersionRecord>> none = store_->FindCompiled("same");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());

  ASSERT_TRUE(store_->AddVersion(MakeVersion(a.id, "same")).ok());
  none = store_->FindCompiled("same");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value()) << "a pending version is not compiled";

  VersionRecord failed = MakeVersion(a.id, "same");
  failed.version_no = 1;
  failed.status = CompileStatus::kFailed;
  ASSERT_TRUE(store_->UpdateVersionCompile(failed).ok());
  none = store_->FindCompiled("same");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value()) << "a failed version is not compiled";

  ASSERT_TRUE(store_->AddVersion(MakeVersion(b.id, "same")).ok());
  VersionRecord ok = MakeVersion(b.id, "same");
  ok.version_no = 1;
  ok.status = CompileStatus::kSucceeded;
  ok.artifact_path = "/cache/same.wasm";
  ok.compiled_size_bytes = 10;
  ASSERT_TRUE(store_->UpdateVersionCompile(ok).ok());
  Result<std::optional<VersionRecord>> hit = store_->FindCompiled("same");
  ASSERT_TRUE(hit.ok());
  ASSERT_TRUE(hit->has_value());
  EXPECT_EQ((*hit)->module_id, b.id);
  EXPECT_EQ((*hit)->version_no, 1);
  EXPECT_EQ((*hit)->artifact_path, "/cache/same.wasm");
  EXPECT_EQ((*hit)->compiled_size_bytes, 10);

  Result<std::optional<VersionRecord>> other = store_->FindCompiled("samex");
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(other->has_value());
}

// --- triggers

TEST_P(ComputeStoreConformanceTest, OneTickTriggerPerModule) {
  ModuleRecord m = MakeModule("m");
  ModuleRecord n = MakeModule("n");
  TriggerRecord tick = MakeTrigger(m.id, TriggerType::kTick);
  tick.tick_hz = 2;
  Result<TriggerRecord> first = store_->UpsertTrigger(tick);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_GT(first->id, 0);
  EXPECT_EQ(first->tick_hz, 2);
  EXPECT_EQ(first->created_ms, kStartMs);

  clock_.Advance(3'000);
  tick.tick_hz = 7.5;
  Result<TriggerRecord> second = store_->UpsertTrigger(tick);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->id, first->id);
  EXPECT_EQ(second->tick_hz, 7.5);
  EXPECT_EQ(second->created_ms, kStartMs);
  EXPECT_EQ(second->updated_ms, kStartMs + 3);

  // Another module's tick trigger is its own.
  Result<TriggerRecord> other =
      store_->UpsertTrigger(MakeTrigger(n.id, TriggerType::kTick));
  ASSERT_TRUE(other.ok());
  EXPECT_NE(other->id, first->id);

  Result<std::vector<TriggerRecord>> list = store_->ListTriggers(m.id);
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].tick_hz, 7.5);
  EXPECT_EQ((*list)[0].type, TriggerType::kTick);
}

TEST_P(ComputeStoreConformanceTest, InvokeTriggersAreKeyedByExport) {
  ModuleRecord m = MakeModule("m");
  TriggerRecord buy = MakeTrigger(m.id, TriggerType::kInvoke);
  buy.export_name = "buy";
  buy.invoke_policy_json = R"({"type":"anyone"})";
  buy.contract_json = R"({"params":{"amount":{"type":"int","required":true}}})";
  TriggerRecord sell = buy;
  sell.export_name = "sell";
  sell.invoke_policy_json = "";
  sell.contract_json = "";
  Result<TriggerRecord> b1 = store_->UpsertTrigger(buy);
  Result<TriggerRecord> s1 = store_->UpsertTrigger(sell);
  ASSERT_TRUE(b1.ok() && s1.ok());
  EXPECT_NE(b1->id, s1->id);

  buy.invoke_policy_json = R"({"type":"user_in_list","users":["u1"]})";
  Result<TriggerRecord> b2 = store_->UpsertTrigger(buy);
  ASSERT_TRUE(b2.ok());
  EXPECT_EQ(b2->id, b1->id);

  Result<std::vector<TriggerRecord>> list = store_->ListTriggers(m.id);
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 2u);
  const TriggerRecord& got_buy =
      (*list)[0].id == b1->id ? (*list)[0] : (*list)[1];
  const TriggerRecord& got_sell =
      (*list)[0].id == b1->id ? (*list)[1] : (*list)[0];
  EXPECT_EQ(got_buy.export_name, "buy");
  EXPECT_EQ(got_buy.invoke_policy_json, buy.invoke_policy_json);
  EXPECT_EQ(got_buy.contract_json, buy.contract_json);
  EXPECT_EQ(got_sell.export_name, "sell");
  EXPECT_EQ(got_sell.invoke_policy_json, "");
  EXPECT_EQ(got_sell.contract_json, "");
  EXPECT_LT((*list)[0].id, (*list)[1].id) << "by id";
}

TEST_P(ComputeStoreConformanceTest, EventTriggersAreKeyedByEventAndName) {
  ModuleRecord m = MakeModule("m");
  TriggerRecord season = MakeTrigger(m.id, TriggerType::kEvent);
  season.event_name = "season-changed";
  season.debounce_ms = 250;
  TriggerRecord any = MakeTrigger(m.id, TriggerType::kEvent);  // event_name ""
  TriggerRecord data = season;
  data.on_event = "data_changed";
  Result<TriggerRecord> t1 = store_->UpsertTrigger(season);
  Result<TriggerRecord> t2 = store_->UpsertTrigger(any);
  Result<TriggerRecord> t3 = store_->UpsertTrigger(data);
  ASSERT_TRUE(t1.ok() && t2.ok() && t3.ok());
  EXPECT_EQ(t1->on_event, "compute_event");
  EXPECT_NE(t1->id, t2->id);
  EXPECT_NE(t1->id, t3->id);
  EXPECT_NE(t2->id, t3->id);

  season.debounce_ms = 1000;
  Result<TriggerRecord> again = store_->UpsertTrigger(season);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->id, t1->id);
  EXPECT_EQ(again->debounce_ms, 1000);

  // An invoke trigger whose export is named like the event is another key.
  TriggerRecord invoke = MakeTrigger(m.id, TriggerType::kInvoke);
  invoke.export_name = "season-changed";
  ASSERT_TRUE(store_->UpsertTrigger(invoke).ok());

  Result<std::vector<TriggerRecord>> list = store_->ListTriggers(m.id);
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 4u);
  EXPECT_EQ((*list)[0].id, t1->id);
  EXPECT_EQ((*list)[0].debounce_ms, 1000);
  EXPECT_EQ((*list)[0].event_name, "season-changed");
  EXPECT_EQ((*list)[2].on_event, "data_changed");
}

TEST_P(ComputeStoreConformanceTest, ListAndDeleteTriggers) {
  ModuleRecord a = MakeModule("a");
  ModuleRecord b = MakeModule("b");
  Result<TriggerRecord> ta =
      store_->UpsertTrigger(MakeTrigger(a.id, TriggerType::kTick));
  Result<TriggerRecord> tb =
      store_->UpsertTrigger(MakeTrigger(b.id, TriggerType::kTick));
  ASSERT_TRUE(ta.ok() && tb.ok());
  Result<std::vector<TriggerRecord>> all = store_->ListTriggers(0);
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].id, ta->id);
  EXPECT_EQ((*all)[1].id, tb->id);

  ASSERT_TRUE(store_->DeleteTrigger(ta->id).ok());
  ExpectNotFound(store_->DeleteTrigger(ta->id));
  Result<std::vector<TriggerRecord>> of_a = store_->ListTriggers(a.id);
  ASSERT_TRUE(of_a.ok());
  EXPECT_TRUE(of_a->empty());
  // A deleted key can be added again.
  Result<TriggerRecord> ta2 =
      store_->UpsertTrigger(MakeTrigger(a.id, TriggerType::kTick));
  ASSERT_TRUE(ta2.ok());
  EXPECT_NE(ta2->id, ta->id);

  ExpectNotFound(
      store_->UpsertTrigger(MakeTrigger(a.id + b.id + 10, TriggerType::kTick)));
}

}  // namespace tessera::compute
