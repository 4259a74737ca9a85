#include "compute/memory_compute_store.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <utility>

#include "compute/compute_store_rules.h"

namespace tessera::compute {

MemoryComputeStore::MemoryComputeStore(const WallClock* wall_clock)
    : wall_clock_(wall_clock != nullptr ? wall_clock : RealWallClock::Get()) {}

// --- modules

Result<ModuleRecord> MemoryComputeStore::UpsertModule(
    std::string_view name, std::string_view description, bool always_on) {
  const int64_t now = NowMs();
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [id, m] : modules_) {
    if (m.name != name) continue;
    m.description = std::string(description);
    m.always_on = always_on;
    m.updated_ms = now;
    return m;
  }
  ModuleRecord m;
  m.id = next_module_id_++;
  m.name = std::string(name);
  m.description = std::string(description);
  m.always_on = always_on;
  m.created_ms = now;
  m.updated_ms = now;
  modules_[m.id] = m;
  return m;
}

Result<ModuleRecord> MemoryComputeStore::GetModule(std::string_view name) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [id, m] : modules_) {
    if (m.name == name) return m;
  }
  return NoComputeModuleNamed(std::string(name));
}

Result<std::vector<ModuleRecord>> MemoryComputeStore::ListModules() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<ModuleRecord> out;
  out.reserve(modules_.size());
  for (const auto& [id, m] : modules_) out.push_back(m);
  std::sort(out.begin(), out.end(),
            [](const ModuleRecord& a, const ModuleRecord& b) {
              return a.name < b.name;
            });
  return out;
}

Status MemoryComputeStore::UpdateModuleState(const ModuleRecord& record) {
  const int64_t now = NowMs();
  std::lock_guard<std::mutex> lock(mu_);
  auto it = modules_.find(record.id);
  if (it == modules_.end()) return NoComputeModule(record.id);
  ModuleRecord& m = it->second;
  m.enabled = record.enabled;
  m.active_version = record.active_version;
  m.circuit = record.circuit;
  m.consecutive_failures = record.consecutive_failures;
  m.circuit_opened_ms = record.circuit_opened_ms;
  m.last_error = record.last_error;
  m.updated_ms = now;
  return Status::Ok();
}

Status MemoryComputeStore::DeleteModule(int64_t module_id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (modules_.erase(module_id) == 0) return NoComputeModule(module_id);
  versions_.erase(versions_.lower_bound({module_id, INT64_MIN}),
                  versions_.upper_bound({module_id, INT64_MAX}));
  std::erase_if(triggers_,
                [&](const auto& t) { return t.second.module_id == module_id; });
  std::erase_if(runs_,
                [&](const RunRecord& r) { return r.module_id == module_id; });
  std::erase_if(usage_,
                [&](const auto& u) { return u.first.first == module_id; });
  std::erase_if(logs_,
                [&](const LogRecord& l) { return l.module_id == module_id; });
  states_.erase(module_id);
  return Status::Ok();
}

// --- versions

Result<int64_t> MemoryComputeStore::AddVersion(const VersionRecord& version) {
  const int64_t now = NowMs();
  std::lock_guard<std::mutex> lock(mu_);
  if (!HasModuleLocked(version.module_id)) {
    return NoComputeModule(version.module_id);
  }
  int64_t version_no = 1;
  auto next = versions_.upper_bound({version.module_id, INT64_MAX});
  if (next != versions_.begin()) {
    auto last = std::prev(next);
    if (last->first.first == version.module_id) {
      version_no = last->first.second + 1;
    }
  }
  StoredVersion stored;
  stored.record = version;
  stored.record.version_no = version_no;
  if (stored.record.created_ms == 0) stored.record.created_ms = now;
  stored.seq = next_version_seq_++;
  versions_[{version.module_id, version_no}] = std::move(stored);
  return version_no;
}

Result<VersionRecord> MemoryComputeStore::GetVersion(int64_t module_id,
                                                     int64_t version_no) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = versions_.find({module_id, version_no});
  if (it == versions_.end()) return NoComputeVersion(module_id, version_no);
  return it->second.record;
}

Result<std::vector<VersionRecord>> MemoryComputeStore::ListVersions(
    int64_t module_id, int64_t limit, bool with_files) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<VersionRecord> out;
  auto first = versions_.lower_bound({module_id, INT64_MIN});
  auto it = versions_.upper_bound({module_id, INT64_MAX});
  while (it != first && static_cast<int64_t>(out.size()) < limit) {
    --it;
    out.push_back(it->second.record);
    if (!with_files) out.back().files.clear();
  }
  return out;
}

Result<std::vector<VersionRecord>>
MemoryComputeStore::ListUnfinishedVersions() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<const StoredVersion*> found;
  for (const auto& [key, v] : versions_) {
    if (v.record.status == CompileStatus::kPending ||
        v.record.status == CompileStatus::kCompiling) {
      found.push_back(&v);
    }
  }
  std::sort(found.begin(), found.end(),
            [](const StoredVersion* a, const StoredVersion* b) {
              return a->seq < b->seq;
            });
  std::vector<VersionRecord> out;
  out.reserve(found.size());
  for (const StoredVersion* v : found) out.push_back(v->record);
  return out;
}

Status MemoryComputeStore::UpdateVersionCompile(const VersionRecord& version) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = versions_.find({version.module_id, version.version_no});
  if (it == versions_.end()) {
    return NoComputeVersion(version.module_id, version.version_no);
  }
  VersionRecord& v = it->second.record;
  v.status = version.status;
  v.compile_log = version.compile_log;
  v.compiled_size_bytes = version.compiled_size_bytes;
  v.artifact_path = version.artifact_path;
  v.cache_hit = version.cache_hit;
  v.compiled_ms = version.compiled_ms;
  return Status::Ok();
}

Result<std::optional<VersionRecord>> MemoryComputeStore::FindCompiled(
    std::string_view source_hash) {
  std::lock_guard<std::mutex> lock(mu_);
  const StoredVersion* best = nullptr;
  for (const auto& [key, v] : versions_) {
    if (v.record.status != CompileStatus::kSucceeded ||
        v.record.source_hash != source_hash) {
      continue;
    }
    if (best == nullptr || v.seq > best->seq) best = &v;
  }
  if (best == nullptr) return std::optional<VersionRecord>();
  return std::optional<VersionRecord>(best->record);
}

// --- triggers

Result<TriggerRecord> MemoryComputeStore::UpsertTrigger(
    const TriggerRecord& trigger) {
  const int64_t now = NowMs();
  std::lock_guard<std::mutex> lock(mu_);
  if (!HasModuleLocked(trigger.module_id)) {
    return NoComputeModule(trigger.module_id);
  }
  const std::string key = TriggerKey(trigger);
  for (auto& [id, t] : triggers_) {
    if (t.module_id != trigger.module_id || TriggerKey(t) != key) continue;
    const int64_t created = t.created_ms;
    t = trigger;
    t.id = id;
    t.created_ms = created;
    t.updated_ms = now;
    return t;
  }
  TriggerRecord t = trigger;
  t.id = next_trigger_id_++;
  t.created_ms = now;
  t.updated_ms = now;
  triggers_[t.id] = t;
  return t;
}

Result<std::vector<TriggerRecord>> MemoryComputeStore::ListTriggers(
    int64_t module_id) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<TriggerRecord> out;
  for (const auto& [id, t] : triggers_) {
    if (module_id > 0 && t.module_id != module_id) continue;
    out.push_back(t);
  }
  return out;
}

Status MemoryComputeStore::DeleteTrigger(int64_t trigger_id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (triggers_.erase(trigger_id) == 0) return NoComputeTrigger(trigger_id);
  return Status::Ok();
}

// --- policy

Result<std::optional<Policy>> MemoryComputeStore::GetPolicy() {
  std::lock_guard<std::mutex> lock(mu_);
  return policy_;
}

Status MemoryComputeStore::SetPolicy(const Policy& policy) {
  std::lock_guard<std::mutex> lock(mu_);
  policy_ = policy;
  return Status::Ok();
}

// --- runs, usage, logs

Status MemoryComputeStore::AddRuns(std::span<const RunRecord> runs) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const RunRecord& r : runs) {
    runs_.push_back(r);
    runs_.back().id = next_run_id_++;
  }
  return Status::Ok();
}

Result<std::vector<RunRecord>> MemoryComputeStore::ListRuns(
    const RunFilter& filter) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<const RunRecord*> found;
  for (const RunRecord& r : runs_) {
    if (filter.module_id.has_value() && r.module_id != *filter.module_id) {
      continue;
    }
    if (filter.success.has_value() && r.success != *filter.success) continue;
    if (filter.flow_id.has_value() && r.flow_id != *filter.flow_id) continue;
    if (r.started_ms < filter.since_ms) continue;
    found.push_back(&r);
  }
  std::sort(found.begin(), found.end(),
            [](const RunRecord* a, const RunRecord* b) {
              if (a->started_ms != b->started_ms) {
                return a->started_ms > b->started_ms;
              }
              return a->id > b->id;
            });
  const size_t limit = static_cast<size_t>(ClampListLimit(filter.limit));
  if (found.size() > limit) found.resize(limit);
  std::vector<RunRecord> out;
  out.reserve(found.size());
  for (const RunRecord* r : found) out.push_back(*r);
  return out;
}

Status MemoryComputeStore::AddUsage(std::span<const UsageRow> rows) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const UsageRow& row : rows) {
    const int64_t minute = UsageMinute(row.minute_ms);
    auto [it, inserted] = usage_.try_emplace({row.module_id, minute});
    UsageRow& u = it->second;
    if (inserted) {
      u.module_id = row.module_id;
      u.minute_ms = minute;
    }
    u.ticks += row.ticks;
    u.runs += row.runs;
    u.failures += row.failures;
    u.fuel_used += row.fuel_used;
    u.duration_us += row.duration_us;
    u.cpu_us += row.cpu_us;
    u.compute_units += row.compute_units;
    u.egress_msgs += row.egress_msgs;
    u.egress_bytes += row.egress_bytes;
  }
  return Status::Ok();
}

Result<std::vector<UsageRow>> MemoryComputeStore::ListUsage(int64_t module_id,
                                                            int64_t since_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<UsageRow> out;
  for (const auto& [key, u] : usage_) {
    if (module_id > 0 && u.module_id != module_id) continue;
    if (u.minute_ms < since_ms) continue;
    out.push_back(u);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const UsageRow& a, const UsageRow& b) {
                     if (a.minute_ms != b.minute_ms) {
                       return a.minute_ms < b.minute_ms;
                     }
                     return a.module_id < b.module_id;
                   });
  return out;
}

Status MemoryComputeStore::AddLogs(std::span<const LogRecord> logs) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const LogRecord& l : logs) {
    logs_.push_back(l);
    logs_.back().id = next_log_id_++;
  }
  return Status::Ok();
}

Result<std::vector<LogRecord>> MemoryComputeStore::ListLogs(
    const LogFilter& filter) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<const LogRecord*> found;
  for (const LogRecord& l : logs_) {
    if (filter.module_id.has_value() && l.module_id != *filter.module_id) {
      continue;
    }
    if (l.ts_ms < filter.since_ms) continue;
    found.push_back(&l);
  }
  std::sort(found.begin(), found.end(),
            [](const LogRecord* a, const LogRecord* b) {
              if (a->ts_ms != b->ts_ms) return a->ts_ms > b->ts_ms;
              return a->id > b->id;
            });
  const size_t limit = static_cast<size_t>(ClampListLimit(filter.limit));
  if (found.size() > limit) found.resize(limit);
  std::vector<LogRecord> out;
  out.reserve(found.size());
  for (const LogRecord* l : found) out.push_back(*l);
  return out;
}

Result<int64_t> MemoryComputeStore::Prune(int64_t before_ms,
                                          int64_t usage_before_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  int64_t removed = 0;
  removed += static_cast<int64_t>(std::erase_if(
      runs_, [&](const RunRecord& r) { return r.started_ms < before_ms; }));
  removed += static_cast<int64_t>(std::erase_if(
      logs_, [&](const LogRecord& l) { return l.ts_ms < before_ms; }));
  removed += static_cast<int64_t>(std::erase_if(usage_, [&](const auto& u) {
    return u.second.minute_ms < usage_before_ms;
  }));
  return removed;
}

// --- the state blob

Result<StateBlob> MemoryComputeStore::GetState(int64_t module_id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = states_.find(module_id);
  if (it == states_.end()) return StateBlob();
  return it->second;
}

Result<int64_t> MemoryComputeStore::SetState(int64_t module_id,
                                             std::string_view bytes,
                                             int64_t expected_revision,
                                             bool lease_holder) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!HasModuleLocked(module_id)) return NoComputeModule(module_id);
  StateBlob& blob = states_[module_id];
  if (!lease_holder && blob.revision != expected_revision) {
    return StaleComputeState(module_id, blob.revision, expected_revision);
  }
  blob.bytes = std::string(bytes);
  blob.revision += 1;
  return blob.revision;
}

}  // namespace tessera::compute
