// The second half of the ComputeStore conformance suite: policy, runs,
// usage, logs, retention and the state blob.
#include <atomic>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "compute/compute_store_conformance.h"
#include "compute/compute_store_rules.h"

namespace tessera::compute {

using namespace conformance;  // NOLINT: the suite's own helpers

// --- policy

TEST_P(ComputeStoreConformanceTest, DataEventTriggersAreKeyedByTheirFilters) {
  ModuleRecord m = MakeModule("m");
  TriggerRecord items = MakeTrigger(m.id, TriggerType::kEvent);
  items.on_event = "field_changed";
  items.entity_type = "Item";
  items.field_name = "qty";
  TriggerRecord names = items;
  names.field_name = "name";
  TriggerRecord invoked = MakeTrigger(m.id, TriggerType::kEvent);
  invoked.on_event = "function_invoked";
  invoked.function_name = "shop.buy";
  Result<TriggerRecord> t1 = store_->UpsertTrigger(items);
  Result<TriggerRecord> t2 = store_->UpsertTrigger(names);
  Result<TriggerRecord> t3 = store_->UpsertTrigger(invoked);
  ASSERT_TRUE(t1.ok() && t2.ok() && t3.ok());
  EXPECT_NE(t1->id, t2->id);
  EXPECT_EQ(t1->entity_type, "Item");
  EXPECT_EQ(t1->field_name, "qty");
  EXPECT_EQ(t3->function_name, "shop.buy");

  items.debounce_ms = 40;
  Result<TriggerRecord> again = store_->UpsertTrigger(items);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->id, t1->id);
  Result<std::vector<TriggerRecord>> list = store_->ListTriggers(m.id);
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 3u);
  EXPECT_EQ((*list)[0].debounce_ms, 40);
  EXPECT_EQ((*list)[0].field_name, "qty");
  EXPECT_EQ((*list)[1].field_name, "name");
  EXPECT_EQ((*list)[1].entity_type, "Item");
  EXPECT_EQ((*list)[2].on_event, "function_invoked");
  EXPECT_EQ((*list)[2].function_name, "shop.buy");
  EXPECT_EQ((*list)[2].entity_type, "");
}

TEST_P(ComputeStoreConformanceTest, PolicyRoundTrip) {
  Result<std::optional<Policy>> unset = store_->GetPolicy();
  ASSERT_TRUE(unset.ok());
  EXPECT_FALSE(unset->has_value());

  Policy p;
  p.enabled = false;
  p.max_modules = 3;
  p.max_tick_hz = 2.5;
  p.fuel_per_tick = 11;
  p.fuel_per_invoke = 12;
  p.max_memory_mb = 13;
  p.max_run_ms = 14;
  p.max_db_ops_per_tick = 15;
  p.max_egress_msgs_per_min = 16;
  p.max_egress_bytes_per_min = 17;
  p.failure_threshold = 18;
  p.cooldown_ms = 19;
  p.idle_unload_ms = 20;
  ASSERT_TRUE(store_->SetPolicy(p).ok());
  Result<std::optional<Policy>> got = store_->GetPolicy();
  ASSERT_TRUE(got.ok());
  ASSERT_TRUE(got->has_value());
  const Policy& g = **got;
  EXPECT_FALSE(g.enabled);
  EXPECT_EQ(g.max_modules, 3);
  EXPECT_EQ(g.max_tick_hz, 2.5);
  EXPECT_EQ(g.fuel_per_tick, 11);
  EXPECT_EQ(g.fuel_per_invoke, 12);
  EXPECT_EQ(g.max_memory_mb, 13);
  EXPECT_EQ(g.max_run_ms, 14);
  EXPECT_EQ(g.max_db_ops_per_tick, 15);
  EXPECT_EQ(g.max_egress_msgs_per_min, 16);
  EXPECT_EQ(g.max_egress_bytes_per_min, 17);
  EXPECT_EQ(g.failure_threshold, 18);
  EXPECT_EQ(g.cooldown_ms, 19);
  EXPECT_EQ(g.idle_unload_ms, 20);

  Policy defaults;
  ASSERT_TRUE(store_->SetPolicy(defaults).ok());
  got = store_->GetPolicy();
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_TRUE((*got)->enabled);
  EXPECT_EQ((*got)->fuel_per_invoke, defaults.fuel_per_invoke);
  EXPECT_EQ((*got)->max_tick_hz, defaults.max_tick_hz);
}

// --- runs

TEST_P(ComputeStoreConformanceTest, RunsRoundTripNewestFirst) {
  RunRecord r = MakeRun(1, kStartMs, false, "flow-1");
  r.version_no = 3;
  r.source = TriggerSource::kProbe;
  r.entry = "event:season-changed";
  r.duration_us = 1234;
  r.fuel_used = 99'000'000'000;
  r.data_reads = 4;
  r.data_writes = 5;
  r.egress_msgs = 6;
  r.egress_bytes = 700;
  r.error_message = "out of fuel";
  r.circuit_action = "reopened";
  std::vector<RunRecord> batch = {r, MakeRun(1, kStartMs + 10, true, "flow-2"),
                                  MakeRun(1, kStartMs + 10, true, "flow-3")};
  ASSERT_TRUE(store_->AddRuns(batch).ok());

  Result<std::vector<RunRecord>> runs = store_->ListRuns(RunFilter());
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 3u);
  // Newest first; equal start times: the later-added first.
  EXPECT_EQ((*runs)[0].flow_id, "flow-3");
  EXPECT_EQ((*runs)[1].flow_id, "flow-2");
  EXPECT_GT((*runs)[0].id, (*runs)[1].id);
  const RunRecord& g = (*runs)[2];
  EXPECT_GT(g.id, 0);
  EXPECT_EQ(g.module_id, 1);
  EXPECT_EQ(g.module_name, "m1");
  EXPECT_EQ(g.version_no, 3);
  EXPECT_EQ(g.started_ms, kStartMs);
  EXPECT_EQ(g.source, TriggerSource::kProbe);
  EXPECT_EQ(g.entry, "event:season-changed");
  EXPECT_FALSE(g.success);
  EXPECT_EQ(g.duration_us, 1234);
  EXPECT_EQ(g.fuel_used, 99'000'000'000);
  EXPECT_EQ(g.data_reads, 4);
  EXPECT_EQ(g.data_writes, 5);
  EXPECT_EQ(g.egress_msgs, 6);
  EXPECT_EQ(g.egress_bytes, 700);
  EXPECT_EQ(g.error_message, "out of fuel");
  EXPECT_EQ(g.circuit_action, "reopened");
  EXPECT_EQ(g.flow_id, "flow-1");

  ASSERT_TRUE(store_->AddRuns(std::span<const RunRecord>()).ok());
}

TEST_P(ComputeStoreConformanceTest, RunFilters) {
  std::vector<RunRecord> batch;
  for (int i = 0; i < 12; ++i) {
    batch.push_back(MakeRun(1 + i % 3, kStartMs + i * 1000, i % 4 != 0,
                            i < 6 ? "flow-a" : "flow-b"));
  }
  ASSERT_TRUE(store_->AddRuns(batch).ok());

  RunFilter by_module;
  by_module.module_id = 2;  // i = 1, 4, 7, 10
  Result<std::vector<RunRecord>> runs = store_->ListRuns(by_module);
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 4u);
  EXPECT_EQ((*runs)[0].started_ms, kStartMs + 10'000);
  EXPECT_EQ((*runs)[3].started_ms, kStartMs + 1'000);

  RunFilter failed;
  failed.success = false;  // i = 0, 4, 8
  runs = store_->ListRuns(failed);
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 3u);
  for (const RunRecord& r : *runs) EXPECT_FALSE(r.success);

  RunFilter flow;
  flow.flow_id = "flow-b";
  flow.module_id = 1;  // i = 6, 9
  runs = store_->ListRuns(flow);
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 2u);
  EXPECT_EQ((*runs)[0].started_ms, kStartMs + 9'000);
  EXPECT_EQ((*runs)[1].started_ms, kStartMs + 6'000);

  RunFilter since;
  since.since_ms = kStartMs + 9'000;  // i = 9, 10, 11 (inclusive)
  runs = store_->ListRuns(since);
  ASSERT_TRUE(runs.ok());
  EXPECT_EQ(runs->size(), 3u);

  RunFilter limited;
  limited.limit = 5;
  runs = store_->ListRuns(limited);
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 5u);
  EXPECT_EQ((*runs)[0].started_ms, kStartMs + 11'000);
  EXPECT_EQ((*runs)[4].started_ms, kStartMs + 7'000);

  RunFilter zero;
  zero.limit = 0;
  runs = store_->ListRuns(zero);
  ASSERT_TRUE(runs.ok());
  EXPECT_TRUE(runs->empty());
  zero.limit = -1;  // not "no limit"
  runs = store_->ListRuns(zero);
  ASSERT_TRUE(runs.ok());
  EXPECT_TRUE(runs->empty());
  LogFilter no_logs;
  no_logs.limit = -1;
  std::vector<LogRecord> one_log = {MakeLog(1, kStartMs, "x")};
  ASSERT_TRUE(store_->AddLogs(one_log).ok());
  Result<std::vector<LogRecord>> logs = store_->ListLogs(no_logs);
  ASSERT_TRUE(logs.ok());
  EXPECT_TRUE(logs->empty());
}

TEST_P(ComputeStoreConformanceTest, ListLimitIsCappedAt1000) {
  std::vector<RunRecord> runs(kMaxListLimit + 50,
                              MakeRun(1, kStartMs, true, "f"));
  std::vector<LogRecord> logs(kMaxListLimit + 50, MakeLog(1, kStartMs, "x"));
  ASSERT_TRUE(store_->AddRuns(runs).ok());
  ASSERT_TRUE(store_->AddLogs(logs).ok());
  RunFilter rf;
  rf.limit = 5000;
  Result<std::vector<RunRecord>> got_runs = store_->ListRuns(rf);
  ASSERT_TRUE(got_runs.ok());
  EXPECT_EQ(static_cast<int64_t>(got_runs->size()), kMaxListLimit);
  LogFilter lf;
  lf.limit = 5000;
  Result<std::vector<LogRecord>> got_logs = store_->ListLogs(lf);
  ASSERT_TRUE(got_logs.ok());
  EXPECT_EQ(static_cast<int64_t>(got_logs->size()), kMaxListLimit);
}

// --- usage

TEST_P(ComputeStoreConformanceTest, UsageSumsPerModuleAndMinute) {
  const int64_t minute = kStartMs / 60'000 * 60'000;
  UsageRow a;
  a.module_id = 1;
  a.minute_ms = minute;
  a.ticks = 10;
  a.runs = 11;
  a.failures = 1;
  a.fuel_used = 1'000'000;
  a.duration_us = 500;
  a.cpu_us = 400;
  a.compute_units = 0.4;
  a.egress_msgs = 2;
  a.egress_bytes = 64;
  UsageRow a_again = a;
  a_again.minute_ms = minute + 59'999;  // the same minute
  UsageRow a_next = a;
  a_next.minute_ms = minute + 60'000;
  UsageRow b = a;
  b.module_id = 2;
  std::vector<UsageRow> first = {a, b};
  std::vector<UsageRow> second = {a_again, a_next};
  ASSERT_TRUE(store_->AddUsage(first).ok());
  ASSERT_TRUE(store_->AddUsage(second).ok());

  Result<std::vector<UsageRow>> rows = store_->ListUsage(1, 0);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u);
  const UsageRow& s = (*rows)[0];
  EXPECT_EQ(s.module_id, 1);
  EXPECT_EQ(s.minute_ms, minute);
  EXPECT_EQ(s.ticks, 20);
  EXPECT_EQ(s.runs, 22);
  EXPECT_EQ(s.failures, 2);
  EXPECT_EQ(s.fuel_used, 2'000'000);
  EXPECT_EQ(s.duration_us, 1000);
  EXPECT_EQ(s.cpu_us, 800);
  EXPECT_DOUBLE_EQ(s.compute_units, 0.8);
  EXPECT_EQ(s.egress_msgs, 4);
  EXPECT_EQ(s.egress_bytes, 128);
  EXPECT_EQ((*rows)[1].minute_ms, minute + 60'000);
  EXPECT_EQ((*rows)[1].ticks, 10);

  // Every module, oldest first; since is inclusive.
  Result<std::vector<UsageRow>> all = store_->ListUsage(0, 0);
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].minute_ms, minute);
  EXPECT_EQ((*all)[1].minute_ms, minute);
  EXPECT_EQ((*all)[2].minute_ms, minute + 60'000);
  Result<std::vector<UsageRow>> recent = store_->ListUsage(0, minute + 60'000);
  ASSERT_TRUE(recent.ok());
  ASSERT_EQ(recent->size(), 1u);
  EXPECT_EQ((*recent)[0].module_id, 1);
}

// --- logs

TEST_P(ComputeStoreConformanceTest, LogsRoundTripAndFilter) {
  std::vector<LogRecord> logs = {
      MakeLog(1, kStartMs, "one"), MakeLog(2, kStartMs + 1, "two"),
      MakeLog(1, kStartMs + 2, "three\nlines \xe2\x9c\x93"),
      MakeLog(1, kStartMs + 2, "four")};
  logs[0].level = 3;
  logs[0].source = TriggerSource::kInit;
  ASSERT_TRUE(store_->AddLogs(logs).ok());

  LogFilter of_one;
  of_one.module_id = 1;
  Result<std::vector<LogRecord>> got = store_->ListLogs(of_one);
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->size(), 3u);
  EXPECT_EQ((*got)[0].message, "four");
  EXPECT_EQ((*got)[1].message, "three\nlines \xe2\x9c\x93");
  const LogRecord& oldest = (*got)[2];
  EXPECT_GT(oldest.id, 0);
  EXPECT_EQ(oldest.module_id, 1);
  EXPECT_EQ(oldest.ts_ms, kStartMs);
  EXPECT_EQ(oldest.level, 3);
  EXPECT_EQ(oldest.message, "one");
  EXPECT_EQ(oldest.source, TriggerSource::kInit);
  EXPECT_EQ(oldest.flow_id, "f-one");
  EXPECT_EQ((*got)[1].source, TriggerSource::kTick);

  LogFilter since;
  since.since_ms = kStartMs + 1;
  since.limit = 2;
  got = store_->ListLogs(since);
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->size(), 2u);
  EXPECT_EQ((*got)[0].message, "four");
  EXPECT_EQ((*got)[1].message, "three\nlines \xe2\x9c\x93");
}

// --- retention

TEST_P(ComputeStoreConformanceTest, PruneRemovesOldRunsLogsAndUsage) {
  const int64_t day = 86'400'000;
  const int64_t now = kStartMs;
  std::vector<RunRecord> runs = {MakeRun(1, now - 8 * day, true, "old"),
                                 MakeRun(1, now - 7 * day, true, "edge"),
                                 MakeRun(1, now, true, "new")};
  std::vector<LogRecord> logs = {MakeLog(1, now - 8 * day, "old"),
                                 MakeLog(1, now, "new")};
  std::vector<UsageRow> usage(3);
  usage[0].minute_ms = UsageMinute(now - 31 * day);
  usage[1].minute_ms = UsageMinute(now - 8 * day);
  usage[2].minute_ms = UsageMinute(now);
  for (UsageRow& u : usage) {
    u.module_id = 1;
    u.ticks = 1;
  }
  ASSERT_TRUE(store_->AddRuns(runs).ok());
  ASSERT_TRUE(store_->AddLogs(logs).ok());
  ASSERT_TRUE(store_->AddUsage(usage).ok());

  Result<int64_t> removed =
      store_->Prune(now - 7 * day, UsageMinute(now - 30 * day));
  ASSERT_TRUE(removed.ok()) << removed.status().ToString();
  EXPECT_EQ(*removed, 3);  // one run, one log, one usage row

  Result<std::vector<RunRecord>> left = store_->ListRuns(RunFilter());
  ASSERT_TRUE(left.ok());
  ASSERT_EQ(left->size(), 2u);
  EXPECT_EQ((*left)[0].flow_id, "new");
  EXPECT_EQ((*left)[1].flow_id, "edge");  // at the cutoff: kept
  Result<std::vector<LogRecord>> left_logs = store_->ListLogs(LogFilter());
  ASSERT_TRUE(left_logs.ok());
  ASSERT_EQ(left_logs->size(), 1u);
  EXPECT_EQ((*left_logs)[0].message, "new");
  Result<std::vector<UsageRow>> left_usage = store_->ListUsage(0, 0);
  ASSERT_TRUE(left_usage.ok());
  ASSERT_EQ(left_usage->size(), 2u);
  EXPECT_EQ((*left_usage)[0].minute_ms, usage[1].minute_ms);

  removed = store_->Prune(now - 7 * day, UsageMinute(now - 30 * day));
  ASSERT_TRUE(removed.ok());
  EXPECT_EQ(*removed, 0);
}

// --- the state blob

TEST_P(ComputeStoreConformanceTest, StateStartsAtRevisionZero) {
  ModuleRecord m = MakeModule("m");
  Result<StateBlob> empty = store_->GetState(m.id);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->revision, 0);
  EXPECT_EQ(empty->bytes, "");
  // An unknown module reads the same (GetState does not check).
  Result<StateBlob> unknown = store_->GetState(m.id + 50);
  ASSERT_TRUE(unknown.ok());
  EXPECT_EQ(unknown->revision, 0);

  ExpectNotFound(store_->SetState(m.id + 50, "x", 0, true));
  ExpectNotFound(store_->SetState(m.id + 50, "x", 0, false));
}

TEST_P(ComputeStoreConformanceTest, StateRevisionGuard) {
  ModuleRecord m = MakeModule("m");
  const std::string binary("\0\x01\xff\0tail", 8);
  Result<int64_t> r1 = store_->SetState(m.id, binary, 0, false);
  ASSERT_TRUE(r1.ok()) << r1.status().ToString();
  EXPECT_EQ(*r1, 1);
  Result<StateBlob> got = store_->GetState(m.id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->bytes, binary);
  EXPECT_EQ(got->revision, 1);

  // A non-holder that read revision 1 may write.
  Result<int64_t> r2 = store_->SetState(m.id, "two", 1, false);
  ASSERT_TRUE(r2.ok());
  EXPECT_EQ(*r2, 2);

  // A non-holder still at revision 1 is stale: kAborted, nothing written.
  Result<int64_t> stale = store_->SetState(m.id, "stale", 1, false);
  ASSERT_FALSE(stale.ok());
  EXPECT_EQ(stale.status().code(), StatusCode::kAborted)
      << stale.status().ToString();
  EXPECT_NE(stale.status().message().find("revision 2"), std::string::npos)
      << stale.status().message();
  got = store_->GetState(m.id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->bytes, "two");
  EXPECT_EQ(got->revision, 2);
  // Ahead of the store is stale too.
  EXPECT_EQ(store_->SetState(m.id, "ahead", 5, false).status().code(),
            StatusCode::kAborted);

  // The lease holder always wins, whatever revision it expected.
  Result<int64_t> r3 = store_->SetState(m.id, "holder", 0, true);
  ASSERT_TRUE(r3.ok());
  EXPECT_EQ(*r3, 3);
  Result<int64_t> r4 = store_->SetState(m.id, "", 99, true);
  ASSERT_TRUE(r4.ok());
  EXPECT_EQ(*r4, 4);
  got = store_->GetState(m.id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->bytes, "");
  EXPECT_EQ(got->revision, 4);
}

// The store takes any size; the 256 KiB ABI limit is the instance's.
TEST_P(ComputeStoreConformanceTest, StateOfAnySizeRoundTrips) {
  ModuleRecord m = MakeModule("m");
  std::string big(1024 * 1024 + 3, '\0');
  for (size_t i = 0; i < big.size(); ++i) {
    big[i] = static_cast<char>((i * 131) ^ (i >> 9));
  }
  Result<int64_t> rev = store_->SetState(m.id, big, 0, true);
  ASSERT_TRUE(rev.ok()) << rev.status().ToString();
  Result<StateBlob> got = store_->GetState(m.id);
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(got->bytes == big);
}

// Writers racing on one module through the revision guard: each success
// gets its own revision, and the revisions are exactly 1..successes.
TEST_P(ComputeStoreConformanceTest, ConcurrentGuardedWritersNeverLoseAWrite) {
  ModuleRecord m = MakeModule("m");
  constexpr int kThreads = 4;
  constexpr int kWritesEach = 50;
  std::vector<std::vector<int64_t>> revisions(kThreads);
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      int done = 0;
      while (done < kWritesEach) {
        Result<StateBlob> cur = store_->GetState(m.id);
        if (!cur.ok()) {
          ++errors;
          return;
        }
        const bool holder = t == 0;
        Result<int64_t> rev = store_->SetState(m.id, "t" + std::to_string(t),
                                               cur->revision, holder);
        if (rev.ok()) {
          revisions[t].push_back(*rev);
          ++done;
        } else if (rev.status().code() != StatusCode::kAborted) {
          ++errors;
          return;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  ASSERT_EQ(errors.load(), 0);
  std::set<int64_t> all;
  for (const std::vector<int64_t>& rs : revisions) {
    for (size_t i = 1; i < rs.size(); ++i) EXPECT_LT(rs[i - 1], rs[i]);
    all.insert(rs.begin(), rs.end());
  }
  ASSERT_EQ(all.size(), static_cast<size_t>(kThreads * kWritesEach));
  EXPECT_EQ(*all.begin(), 1);
  EXPECT_EQ(*all.rbegin(), kThreads * kWritesEach);
  Result<StateBlob> final_state = store_->GetState(m.id);
  ASSERT_TRUE(final_state.ok());
  EXPECT_EQ(final_state->revision, kThreads * kWritesEach);
}

}  // namespace tessera::compute
