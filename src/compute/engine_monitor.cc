// Monitoring: the buffered records (run rows, per-minute usage, log lines;
// written every flush_ms by the housekeeping task, before every monitoring
// read and at Shutdown), retention, and the monitoring reads (modules,
// versions, triggers, runs, logs, stats, diagnostics, usage).
#include <algorithm>
#include <utility>

#include "compute/engine_internal.h"

namespace tessera::compute {
namespace engine_internal {
namespace {

// Log lines buffered between flushes at most; beyond it the oldest go.
constexpr size_t kMaxBufferedLogs = 20'000;
constexpr int64_t kUsageRetentionMs = 30LL * 24 * 3600 * 1000;
constexpr int64_t kMinuteMs = 60'000;

int64_t MinuteOf(int64_t ms) {
  int64_t m = ms / kMinuteMs;
  if (ms < 0 && ms % kMinuteMs != 0) --m;
  return m * kMinuteMs;
}

}  // namespace

void Recorder::AddRun(RunRecord run) {
  std::lock_guard<std::mutex> lock(mu);
  runs_.push_back(std::move(run));
}

void Recorder::AddLogs(std::vector<LogRecord> logs) {
  std::lock_guard<std::mutex> lock(mu);
  for (LogRecord& log : logs) logs_.push_back(std::move(log));
  if (logs_.size() > kMaxBufferedLogs) {
    const size_t drop = logs_.size() - kMaxBufferedLogs;
    logs_.erase(logs_.begin(), logs_.begin() + static_cast<ptrdiff_t>(drop));
  }
}

void Recorder::AddUsage(int64_t module_id, int64_t started_ms, bool tick,
                        bool ok, const CallOutcome& outcome,
                        int64_t egress_msgs, int64_t egress_bytes) {
  const int64_t minute = MinuteOf(started_ms);
  std::lock_guard<std::mutex> lock(mu);
  UsageRow& row = usage_[{module_id, minute}];
  row.module_id = module_id;
  row.minute_ms = minute;
  row.ticks += tick ? 1 : 0;
  row.runs += 1;
  row.failures += ok ? 0 : 1;
  row.fuel_used += outcome.fuel_used;
  row.duration_us += outcome.duration_us;
  row.cpu_us += outcome.cpu_us;
  row.compute_units += static_cast<double>(outcome.cpu_us) / 1000.0;
  row.egress_msgs += egress_msgs;
  row.egress_bytes += egress_bytes;
}

void Recorder::Forget(int64_t module_id) {
  std::lock_guard<std::mutex> lock(mu);
  std::erase_if(runs_,
                [&](const RunRecord& r) { return r.module_id == module_id; });
  std::erase_if(logs_,
                [&](const LogRecord& l) { return l.module_id == module_id; });
  std::erase_if(usage_,
                [&](const auto& kv) { return kv.first.first == module_id; });
}

Status Recorder::Flush(ComputeStore& store) {
  std::vector<RunRecord> runs;
  std::vector<LogRecord> logs;
  std::vector<UsageRow> usage;
  {
    std::lock_guard<std::mutex> lock(mu);
    runs.swap(runs_);
    logs.swap(logs_);
    usage.reserve(usage_.size());
    for (auto& [key, row] : usage_) usage.push_back(row);
    usage_.clear();
  }
  Status status;
  if (!runs.empty()) status = store.AddRuns(runs);
  if (!usage.empty()) {
    Status st = store.AddUsage(usage);
    if (status.ok()) status = st;
  }
  if (!logs.empty()) {
    Status st = store.AddLogs(logs);
    if (status.ok()) status = st;
  }
  return status;
}

Status Core::Flush() {
  std::lock_guard<std::mutex> lock(flush_mu);
  return recorder.Flush(*store);
}

void Core::Prune() {
  const int64_t now = wall->UnixNowMs();
  (void)store->Prune(now - options.retention_ms, now - kUsageRetentionMs);
}

namespace {

ModuleStats StatsOf(const ModuleSlot& slot) {
  ModuleStats s;
  s.module = slot.name;
  std::lock_guard<std::mutex> lock(slot.mu);
  s.circuit = slot.circuit.state();
  return s;
}

void AddRow(ModuleStats& s, const UsageRow& row) {
  s.runs += row.runs;
  s.failures += row.failures;
  s.fuel_used += row.fuel_used;
  s.egress_msgs += row.egress_msgs;
  s.egress_bytes += row.egress_bytes;
  s.duration_us += row.duration_us;
  s.compute_units += row.compute_units;
}

// Per-module totals of the usage since `since_ms`, by module name.
Result<std::vector<ModuleStats>> Totals(Core& e, int64_t since_ms) {
  Result<std::vector<UsageRow>> rows = e.store->ListUsage(0, since_ms);
  if (!rows.ok()) return rows.status();
  std::vector<ModuleStats> out;
  std::map<int64_t, size_t> index;
  for (const auto& slot : e.AllSlots()) {
    index[slot->id] = out.size();
    out.push_back(StatsOf(*slot));
  }
  for (const UsageRow& row : *rows) {
    auto it = index.find(row.module_id);
    if (it != index.end()) AddRow(out[it->second], row);
  }
  return out;
}

}  // namespace
}  // namespace engine_internal

using engine_internal::Core;
using engine_internal::ModuleSlot;

Result<std::vector<ModuleView>> ComputeEngine::Modules() {
  Core& e = *impl_;
  std::vector<ModuleView> out;
  for (const auto& slot : e.AllSlots()) {
    ModuleView view;
    {
      std::lock_guard<std::mutex> lock(slot->mu);
      view.record = slot->record;
      view.trigger_count = slot->triggers.size();
    }
    view.loaded = slot->is_loaded.load();
    Result<std::vector<VersionRecord>> latest =
        e.store->ListVersions(slot->id, 1, /*with_files=*/false);
    if (!latest.ok()) return latest.status();
    if (!latest->empty()) view.latest_version = latest->front();
    out.push_back(std::move(view));
  }
  return out;
}

Result<std::vector<VersionRecord>> ComputeEngine::Versions(
    std::string_view module, int64_t limit) {
  Result<std::shared_ptr<ModuleSlot>> required = impl_->Require(module);
  if (!required.ok()) return required.status();
  std::shared_ptr<ModuleSlot> slot = std::move(required).value();
  return impl_->store->ListVersions(slot->id, limit, /*with_files=*/false);
}

Result<std::vector<TriggerRecord>> ComputeEngine::Triggers(
    std::string_view module) {
  Result<std::shared_ptr<ModuleSlot>> required = impl_->Require(module);
  if (!required.ok()) return required.status();
  std::shared_ptr<ModuleSlot> slot = std::move(required).value();
  std::lock_guard<std::mutex> lock(slot->mu);
  return slot->triggers;
}

Result<std::vector<RunRecord>> ComputeEngine::Runs(
    std::optional<std::string> module, RunFilter filter) {
  Core& e = *impl_;
  if (module && !module->empty()) {
    Result<std::shared_ptr<ModuleSlot>> required = e.Require(*module);
    if (!required.ok()) return required.status();
    std::shared_ptr<ModuleSlot> slot = std::move(required).value();
    filter.module_id = slot->id;
  }
  TESSERA_RETURN_IF_ERROR(e.Flush());
  return e.store->ListRuns(filter);
}

Result<std::vector<LogRecord>> ComputeEngine::Logs(
    std::optional<std::string> module, LogFilter filter) {
  Core& e = *impl_;
  if (module && !module->empty()) {
    Result<std::shared_ptr<ModuleSlot>> required = e.Require(*module);
    if (!required.ok()) return required.status();
    std::shared_ptr<ModuleSlot> slot = std::move(required).value();
    filter.module_id = slot->id;
  }
  TESSERA_RETURN_IF_ERROR(e.Flush());
  return e.store->ListLogs(filter);
}

Result<std::vector<UsageRow>> ComputeEngine::Usage(
    std::optional<std::string> module, int64_t since_ms) {
  Core& e = *impl_;
  int64_t module_id = 0;
  if (module && !module->empty()) {
    Result<std::shared_ptr<ModuleSlot>> required = e.Require(*module);
    if (!required.ok()) return required.status();
    std::shared_ptr<ModuleSlot> slot = std::move(required).value();
    module_id = slot->id;
  }
  TESSERA_RETURN_IF_ERROR(e.Flush());
  return e.store->ListUsage(module_id, since_ms);
}

Result<StatsView> ComputeEngine::Stats(int64_t window_minutes) {
  Core& e = *impl_;
  if (window_minutes < 1 || window_minutes > 30LL * 24 * 60) {
    return InvalidArgument("windowMinutes must be within 1..43200");
  }
  TESSERA_RETURN_IF_ERROR(e.Flush());
  const int64_t since = engine_internal::MinuteOf(
      e.wall->UnixNowMs() - (window_minutes - 1) * 60'000);
  Result<std::vector<ModuleStats>> totals = engine_internal::Totals(e, since);
  if (!totals.ok()) return totals.status();
  StatsView view;
  view.window_minutes = window_minutes;
  int64_t duration = 0;
  for (const ModuleStats& s : *totals) {
    view.total_runs += s.runs;
    view.failed_runs += s.failures;
    view.total_fuel_used += s.fuel_used;
    view.total_egress_msgs += s.egress_msgs;
    view.total_egress_bytes += s.egress_bytes;
    view.compute_units += s.compute_units;
    duration += s.duration_us;
  }
  if (view.total_runs > 0) {
    view.failure_rate_pct = 100.0 * static_cast<double>(view.failed_runs) /
                            static_cast<double>(view.total_runs);
    view.avg_duration_us =
        static_cast<double>(duration) / static_cast<double>(view.total_runs);
  }
  view.by_module = std::move(*totals);
  return view;
}

Result<DiagnosticsView> ComputeEngine::Diagnostics() {
  Core& e = *impl_;
  TESSERA_RETURN_IF_ERROR(e.Flush());
  DiagnosticsView view;
  view.policy_enabled = e.CurrentPolicy().enabled;
  for (const auto& slot : e.AllSlots()) {
    ++view.module_count;
    {
      std::lock_guard<std::mutex> lock(slot->mu);
      view.enabled_module_count += slot->record.enabled ? 1 : 0;
      view.trigger_count += static_cast<int64_t>(slot->triggers.size());
    }
    view.loaded_module_count += slot->is_loaded.load() ? 1 : 0;
    Result<std::vector<VersionRecord>> versions =
        e.store->ListVersions(slot->id, 1'000'000, /*with_files=*/false);
    if (!versions.ok()) return versions.status();
    view.version_count += static_cast<int64_t>(versions->size());
  }
  const int64_t since =
      engine_internal::MinuteOf(e.wall->UnixNowMs() - 24LL * 3600 * 1000);
  Result<std::vector<ModuleStats>> totals = engine_internal::Totals(e, since);
  if (!totals.ok()) return totals.status();
  for (const ModuleStats& s : *totals) {
    view.runs_24h += s.runs;
    view.failed_runs_24h += s.failures;
    view.fuel_used_24h += s.fuel_used;
  }
  std::vector<ModuleStats> top = std::move(*totals);
  std::stable_sort(top.begin(), top.end(),
                   [](const ModuleStats& a, const ModuleStats& b) {
                     return a.runs > b.runs;
                   });
  if (top.size() > 5) top.resize(5);
  view.top_modules = std::move(top);
  return view;
}

}  // namespace tessera::compute
