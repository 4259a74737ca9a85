#include "store/sqlite_compute_store.h"

#include <optional>
#include <utility>

#include "compute/compute_store_rules.h"
#include "store/schema.h"
#include "store/sqlite_compute_sql.h"

namespace tessera::store {

using compute::LogRecord;
using compute::ModuleRecord;
using compute::Policy;
using compute::RunRecord;
using compute::StateBlob;
using compute::TriggerRecord;
using compute::UsageRow;
using compute::VersionRecord;

Result<std::unique_ptr<SqliteComputeStore>> SqliteComputeStore::Open(
    const std::string& path, Options options) {
  if (path.empty()) {
    return InvalidArgument("sqlite store: the database path is empty");
  }
  if (options.wall_clock == nullptr) options.wall_clock = RealWallClock::Get();
  Result<std::unique_ptr<SqliteDb>> db = OpenStoreDatabase(
      path, options.busy_timeout_ms, options.wall_clock->UnixNowMs());
  if (!db.ok()) return db.status();
  auto statements = std::make_unique<ComputeStatements>();
  TESSERA_RETURN_IF_ERROR(PrepareComputeStatements(**db, *statements));
  return std::unique_ptr<SqliteComputeStore>(new SqliteComputeStore(
      std::move(db).value(), std::move(statements), options));
}

SqliteComputeStore::SqliteComputeStore(
    std::unique_ptr<SqliteDb> db, std::unique_ptr<ComputeStatements> statements,
    Options options)
    : options_(options),
      path_(db->path()),
      db_(std::move(db)),
      stmts_(std::move(statements)) {}

SqliteComputeStore::~SqliteComputeStore() = default;

Status SqliteComputeStore::CheckModuleLocked(int64_t module_id) {
  SqliteStatement& st = *stmts_->module_exists;
  ScopedReset reset(st);
  TESSERA_RETURN_IF_ERROR(st.BindInt64(1, module_id));
  Result<bool> row = st.Step("read compute module");
  if (!row.ok()) return row.status();
  return *row ? Status::Ok() : compute::NoComputeModule(module_id);
}

// --- modules

Result<ModuleRecord> SqliteComputeStore::ModuleByNameLocked(
    std::string_view name) {
  SqliteStatement& st = *stmts_->module_by_name;
  ScopedReset reset(st);
  TESSERA_RETURN_IF_ERROR(st.BindText(1, name));
  Result<bool> row = st.Step("read compute module");
  if (!row.ok()) return row.status();
  if (!*row) return compute::NoComputeModuleNamed(std::string(name));
  return ReadModule(st, path_);
}

Result<ModuleRecord> SqliteComputeStore::UpsertModule(
    std::string_view name, std::string_view description, bool always_on) {
  const int64_t now = NowMs();
  std::lock_guard<std::mutex> lock(mu_);
  std::optional<ModuleRecord> out;
  Status st = db_->InTransaction("upsert compute module", [&]() -> Status {
    SqliteStatement& up = *stmts_->upsert_module;
    ScopedReset reset(up);
    TESSERA_RETURN_IF_ERROR(up.BindText(1, name));
    TESSERA_RETURN_IF_ERROR(up.BindText(2, description));
    TESSERA_RETURN_IF_ERROR(up.BindInt64(3, always_on ? 1 : 0));
    TESSERA_RETURN_IF_ERROR(up.BindInt64(4, now));
    TESSERA_RETURN_IF_ERROR(up.Run("upsert compute module"));
    Result<ModuleRecord> m = ModuleByNameLocked(name);
    if (!m.ok()) return m.status();
    out = std::move(m).value();
    return Status::Ok();
  });
  if (!st.ok()) return st;
  return *std::move(out);
}

Result<ModuleRecord> SqliteComputeStore::GetModule(std::string_view name) {
  std::lock_guard<std::mutex> lock(mu_);
  return ModuleByNameLocked(name);
}

Result<std::vector<ModuleRecord>> SqliteComputeStore::ListModules() {
  std::lock_guard<std::mutex> lock(mu_);
  SqliteStatement& st = *stmts_->list_modules;
  ScopedReset reset(st);
  std::vector<ModuleRecord> out;
  while (true) {
    Result<bool> row = st.Step("list compute modules");
    if (!row.ok()) return row.status();
    if (!*row) return out;
    Result<ModuleRecord> m = ReadModule(st, path_);
    if (!m.ok()) return m.status();
    out.push_back(std::move(m).value());
  }
}

Status SqliteComputeStore::UpdateModuleState(const ModuleRecord& record) {
  const int64_t now = NowMs();
  std::lock_guard<std::mutex> lock(mu_);
  SqliteStatement& st = *stmts_->update_module_state;
  ScopedReset reset(st);
  TESSERA_RETURN_IF_ERROR(st.BindInt64(1, record.id));
  TESSERA_RETURN_IF_ERROR(st.BindInt64(2, record.enabled ? 1 : 0));
  TESSERA_RETURN_IF_ERROR(st.BindInt64(3, record.active_version));
  TESSERA_RETURN_IF_ERROR(
      st.BindText(4, compute::CircuitStateName(record.circuit)));
  TESSERA_RETURN_IF_ERROR(st.BindInt64(5, record.consecutive_failures));
  TESSERA_RETURN_IF_ERROR(st.BindInt64(6, record.circuit_opened_ms));
  TESSERA_RETURN_IF_ERROR(st.BindText(7, record.last_error));
  TESSERA_RETURN_IF_ERROR(st.BindInt64(8, now));
  TESSERA_RETURN_IF_ERROR(st.Run("update compute module state"));
  if (db_->changes() == 0) return compute::NoComputeModule(record.id);
  return Status::Ok();
}

Status SqliteComputeStore::DeleteModule(int64_t module_id) {
  std::lock_guard<std::mutex> lock(mu_);
  return db_->InTransaction("delete compute module", [&]() -> Status {
    ComputeStatements& s = *stmts_;
    for (SqliteStatement* st :
         {s.delete_module_state.get(), s.delete_module_files.get(),
          s.delete_module_versions.get(), s.delete_module_triggers.get(),
          s.delete_module_runs.get(), s.delete_module_usage.get(),
          s.delete_module_logs.get(), s.delete_module.get()}) {
      ScopedReset reset(*st);
      TESSERA_RETURN_IF_ERROR(st->BindInt64(1, module_id));
      TESSERA_RETURN_IF_ERROR(st->Run("delete compute module"));
    }
    // The last statement removed the module row (or found none: roll back).
    if (db_->changes() == 0) return compute::NoComputeModule(module_id);
    return Status::Ok();
  });
}

// --- versions

Result<int64_t> SqliteComputeStore::AddVersion(const VersionRecord& version) {
  const int64_t now = NowMs();
  std::lock_guard<std::mutex> lock(mu_);
  int64_t version_no = 0;
  Status st = db_->InTransaction("add compute version", [&]() -> Status {
    TESSERA_RETURN_IF_ERROR(CheckModuleLocked(version.module_id));
    {
      SqliteStatement& next = *stmts_->next_version_no;
      ScopedReset reset(next);
      TESSERA_RETURN_IF_ERROR(next.BindInt64(1, version.module_id));
      Result<bool> row = next.Step("number compute version");
      if (!row.ok()) return row.status();
      version_no = *row ? next.ColumnInt64(0) : 1;
    }
    SqliteStatement& ins = *stmts_->insert_version;
    ScopedReset reset(ins);
    TESSERA_RETURN_IF_ERROR(ins.BindInt64(1, version.module_id));
    TESSERA_RETURN_IF_ERROR(ins.BindInt64(2, version_no));
    TESSERA_RETURN_IF_ERROR(
        ins.BindText(3, compute::LanguageName(version.language)));
    TESSERA_RETURN_IF_ERROR(ins.BindText(4, version.sdk_version));
    TESSERA_RETURN_IF_ERROR(ins.BindInt64(5, version.abi_version));
    TESSERA_RETURN_IF_ERROR(ins.BindText(6, version.source_hash));
    TESSERA_RETURN_IF_ERROR(ins.BindText(7, version.template_name));
    TESSERA_RETURN_IF_ERROR(
        ins.BindText(8, compute::CompileStatusName(version.status)));
    TESSERA_RETURN_IF_ERROR(ins.BindBlob(9, version.compile_log));
    TESSERA_RETURN_IF_ERROR(ins.BindInt64(10, version.compiled_size_bytes));
    TESSERA_RETURN_IF_ERROR(ins.BindText(11, version.artifact_path));
    TESSERA_RETURN_IF_ERROR(ins.BindInt64(12, version.cache_hit ? 1 : 0));
    TESSERA_RETURN_IF_ERROR(
        ins.BindInt64(13, version.created_ms != 0 ? version.created_ms : now));
    TESSERA_RETURN_IF_ERROR(ins.BindInt64(14, version.compiled_ms));
    TESSERA_RETURN_IF_ERROR(ins.Run("add compute version"));
    for (const auto& [file_path, contents] : version.files) {
      SqliteStatement& f = *stmts_->insert_file;
      ScopedReset file_reset(f);
      TESSERA_RETURN_IF_ERROR(f.BindInt64(1, version.module_id));
      TESSERA_RETURN_IF_ERROR(f.BindInt64(2, version_no));
      TESSERA_RETURN_IF_ERROR(f.BindText(3, file_path));
      TESSERA_RETURN_IF_ERROR(f.BindBlob(4, contents));
      TESSERA_RETURN_IF_ERROR(f.Run("add compute version file"));
    }
    return Status::Ok();
  });
  if (!st.ok()) return st;
  return version_no;
}

Status SqliteComputeStore::ReadFilesLocked(VersionRecord& version) {
  SqliteStatement& st = *stmts_->files_of;
  ScopedReset reset(st);
  TESSERA_RETURN_IF_ERROR(st.BindInt64(1, version.module_id));
  TESSERA_RETURN_IF_ERROR(st.BindInt64(2, version.version_no));
  version.files.clear();
  while (true) {
    Result<bool> row = st.Step("read compute version files");
    if (!row.ok()) return row.status();
    if (!*row) return Status::Ok();
    version.files.emplace(st.ColumnBytes(0), st.ColumnBytes(1));
  }
}

Result<std::vector<VersionRecord>> SqliteComputeStore::ReadVersionsLocked(
    SqliteStatement& stmt, std::string_view what, bool with_files) {
  std::vector<VersionRecord> out;
  while (true) {
    Result<bool> row = stmt.Step(what);
    if (!row.ok()) return row.status();
    if (!*row) break;
    Result<VersionRecord> v = ReadVersion(stmt, path_);
    if (!v.ok()) return v.status();
    out.push_back(std::move(v).value());
  }
  stmt.Reset();
  if (with_files) {
    for (VersionRecord& v : out) TESSERA_RETURN_IF_ERROR(ReadFilesLocked(v));
  }
  return out;
}

Result<VersionRecord> SqliteComputeStore::GetVersion(int64_t module_id,
                                                     int64_t version_no) {
  std::lock_guard<std::mutex> lock(mu_);
  SqliteStatement& st = *stmts_->get_version;
  ScopedReset reset(st);
  TESSERA_RETURN_IF_ERROR(st.BindInt64(1, module_id));
  TESSERA_RETURN_IF_ERROR(st.BindInt64(2, version_no));
  Result<std::vector<VersionRecord>> found =
      ReadVersionsLocked(st, "read compute version", true);
  if (!found.ok()) return found.status();
  if (found->empty()) return compute::NoComputeVersion(module_id, version_no);
  return std::move(found->front());
}

Result<std::vector<VersionRecord>> SqliteComputeStore::ListVersions(
    int64_t module_id, int64_t limit, bool with_files) {
  std::lock_guard<std::mutex> lock(mu_);
  SqliteStatement& st = *stmts_->list_versions;
  ScopedReset reset(st);
  TESSERA_RETURN_IF_ERROR(st.BindInt64(1, module_id));
  TESSERA_RETURN_IF_ERROR(st.BindInt64(2, limit < 0 ? 0 : limit));
  return ReadVersionsLocked(st, "list compute versions", with_files);
}

Result<std::vector<VersionRecord>>
SqliteComputeStore::ListUnfinishedVersions() {
  std::lock_guard<std::mutex> lock(mu_);
  SqliteStatement& st = *stmts_->unfinished_versions;
  ScopedReset reset(st);
  return ReadVersionsLocked(st, "list unfinished compute versions", true);
}

Status SqliteComputeStore::UpdateVersionCompile(const VersionRecord& version) {
  std::lock_guard<std::mutex> lock(mu_);
  SqliteStatement& st = *stmts_->update_compile;
  ScopedReset reset(st);
  TESSERA_RETURN_IF_ERROR(st.BindInt64(1, version.module_id));
  TESSERA_RETURN_IF_ERROR(st.BindInt64(2, version.version_no));
  TESSERA_RETURN_IF_ERROR(
      st.BindText(3, compute::CompileStatusName(version.status)));
  TESSERA_RETURN_IF_ERROR(st.BindBlob(4, version.compile_log));
  TESSERA_RETURN_IF_ERROR(st.BindInt64(5, version.compiled_size_bytes));
  TESSERA_RETURN_IF_ERROR(st.BindText(6, version.artifact_path));
  TESSERA_RETURN_IF_ERROR(st.BindInt64(7, version.cache_hit ? 1 : 0));
  TESSERA_RETURN_IF_ERROR(st.BindInt64(8, version.compiled_ms));
  TESSERA_RETURN_IF_ERROR(st.Run("update compute version"));
  if (db_->changes() == 0) {
    return compute::NoComputeVersion(version.module_id, version.version_no);
  }
  return Status::Ok();
}

Result<std::optional<VersionRecord>> SqliteComputeStore::FindCompiled(
    std::string_view source_hash) {
  std::lock_guard<std::mutex> lock(mu_);
  SqliteStatement& st = *stmts_->find_compiled;
  ScopedReset reset(st);
  TESSERA_RETURN_IF_ERROR(st.BindText(1, source_hash));
  Result<std::vector<VersionRecord>> found =
      ReadVersionsLocked(st, "find compiled compute version", true);
  if (!found.ok()) return found.status();
  if (found->empty()) return std::optional<VersionRecord>();
  return std::optional<VersionRecord>(std::move(found->front()));
}

// --- triggers

Result<TriggerRecord> SqliteComputeStore::UpsertTrigger(
    const TriggerRecord& trigger) {
  const int64_t now = NowMs();
  const std::string key = compute::TriggerKey(trigger);
  std::lock_guard<std::mutex> lock(mu_);
  std::optional<TriggerRecord> out;
  Status status = db_->InTransaction("upsert compute trigger", [&]() -> Status {
    TESSERA_RETURN_IF_ERROR(CheckModuleLocked(trigger.module_id));
    {
      SqliteStatement& st = *stmts_->upsert_trigger;
      ScopedReset reset(st);
      TESSERA_RETURN_IF_ERROR(st.BindInt64(1, trigger.module_id));
      TESSERA_RETURN_IF_ERROR(st.BindText(2, key));
      TESSERA_RETURN_IF_ERROR(
          st.BindText(3, compute::TriggerTypeName(trigger.type)));
      TESSERA_RETURN_IF_ERROR(st.BindDouble(4, trigger.tick_hz));
      TESSERA_RETURN_IF_ERROR(st.BindText(5, trigger.on_event));
      TESSERA_RETURN_IF_ERROR(st.BindText(6, trigger.event_name));
      TESSERA_RETURN_IF_ERROR(st.BindInt64(7, trigger.debounce_ms));
      TESSERA_RETURN_IF_ERROR(st.BindText(8, trigger.export_name));
      TESSERA_RETURN_IF_ERROR(st.BindText(9, trigger.invoke_policy_json));
      TESSERA_RETURN_IF_ERROR(st.BindText(10, trigger.contract_json));
      TESSERA_RETURN_IF_ERROR(st.BindInt64(11, now));
      TESSERA_RETURN_IF_ERROR(st.BindText(12, trigger.entity_type));
      TESSERA_RETURN_IF_ERROR(st.BindText(13, trigger.field_name));
      TESSERA_RETURN_IF_ERROR(st.BindText(14, trigger.function_name));
      TESSERA_RETURN_IF_ERROR(st.Run("upsert compute trigger"));
    }
    SqliteStatement& get = *stmts_->trigger_by_key;
    ScopedReset reset(get);
    TESSERA_RETURN_IF_ERROR(get.BindInt64(1, trigger.module_id));
    TESSERA_RETURN_IF_ERROR(get.BindText(2, key));
    Result<bool> row = get.Step("read compute trigger");
    if (!row.ok()) return row.status();
    if (!*row) {
      return Internal("sqlite store " + path_ +
                      ": the upserted compute trigger is missing");
    }
    Result<TriggerRecord> t = ReadTrigger(get, path_);
    if (!t.ok()) return t.status();
    out = std::move(t).value();
    return Status::Ok();
  });
  if (!status.ok()) return status;
  return *std::move(out);
}

Result<std::vector<TriggerRecord>> SqliteComputeStore::ListTriggers(
    int64_t module_id) {
  std::lock_guard<std::mutex> lock(mu_);
  SqliteStatement& st =
      module_id > 0 ? *stmts_->list_triggers : *stmts_->list_all_triggers;
  ScopedReset reset(st);
  if (module_id > 0) TESSERA_RETURN_IF_ERROR(st.BindInt64(1, module_id));
  std::vector<TriggerRecord> out;
  while (true) {
    Result<bool> row = st.Step("list compute triggers");
    if (!row.ok()) return row.status();
    if (!*row) return out;
    Result<TriggerRecord> t = ReadTrigger(st, path_);
    if (!t.ok()) return t.status();
    out.push_back(std::move(t).value());
  }
}

Status SqliteComputeStore::DeleteTrigger(int64_t trigger_id) {
  std::lock_guard<std::mutex> lock(mu_);
  SqliteStatement& st = *stmts_->delete_trigger;
  ScopedReset reset(st);
  TESSERA_RETURN_IF_ERROR(st.BindInt64(1, trigger_id));
  TESSERA_RETURN_IF_ERROR(st.Run("delete compute trigger"));
  if (db_->changes() == 0) return compute::NoComputeTrigger(trigger_id);
  return Status::Ok();
}

// --- policy

Result<std::optional<Policy>> SqliteComputeStore::GetPolicy() {
  std::lock_guard<std::mutex> lock(mu_);
  SqliteStatement& st = *stmts_->get_policy;
  ScopedReset reset(st);
  Result<bool> row = st.Step("read compute policy");
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<Policy>();
  return std::optional<Policy>(ReadPolicy(st));
}

Status SqliteComputeStore::SetPolicy(const Policy& p) {
  const int64_t now = NowMs();
  std::lock_guard<std::mutex> lock(mu_);
  SqliteStatement& st = *stmts_->set_policy;
  ScopedReset reset(st);
  TESSERA_RETURN_IF_ERROR(st.BindInt64(1, p.enabled ? 1 : 0));
  TESSERA_RETURN_IF_ERROR(st.BindInt64(2, p.max_modules));
  TESSERA_RETURN_IF_ERROR(st.BindDouble(3, p.max_tick_hz));
  TESSERA_RETURN_IF_ERROR(st.BindInt64(4, p.fuel_per_tick));
  TESSERA_RETURN_IF_ERROR(st.BindInt64(5, p.fuel_per_invoke));
  TESSERA_RETURN_IF_ERROR(st.BindInt64(6, p.max_memory_mb));
  TESSERA_RETURN_IF_ERROR(st.BindInt64(7, p.max_run_ms));
  TESSERA_RETURN_IF_ERROR(st.BindInt64(8, p.max_db_ops_per_tick));
  TESSERA_RETURN_IF_ERROR(st.BindInt64(9, p.max_egress_msgs_per_min));
  TESSERA_RETURN_IF_ERROR(st.BindInt64(10, p.max_egress_bytes_per_min));
  TESSERA_RETURN_IF_ERROR(st.BindInt64(11, p.failure_threshold));
  TESSERA_RETURN_IF_ERROR(st.BindInt64(12, p.cooldown_ms));
  TESSERA_RETURN_IF_ERROR(st.BindInt64(13, p.idle_unload_ms));
  TESSERA_RETURN_IF_ERROR(st.BindInt64(14, now));
  return st.Run("set compute policy");
}

// --- the state blob

Result<StateBlob> SqliteComputeStore::GetState(int64_t module_id) {
  std::lock_guard<std::mutex> lock(mu_);
  SqliteStatement& st = *stmts_->get_state;
  ScopedReset reset(st);
  TESSERA_RETURN_IF_ERROR(st.BindInt64(1, module_id));
  Result<bool> row = st.Step("read compute state");
  if (!row.ok()) return row.status();
  StateBlob blob;
  if (*row) {
    blob.bytes = st.ColumnBytes(0);
    blob.revision = st.ColumnInt64(1);
  }
  return blob;
}

Result<int64_t> SqliteComputeStore::SetState(int64_t module_id,
                                             std::string_view bytes,
                                             int64_t expected_revision,
                                             bool lease_holder) {
  const int64_t now = NowMs();
  std::lock_guard<std::mutex> lock(mu_);
  int64_t revision = 0;
  Status status = db_->InTransaction("write compute state", [&]() -> Status {
    TESSERA_RETURN_IF_ERROR(CheckModuleLocked(module_id));
    {
      SqliteStatement& get = *stmts_->get_state;
      ScopedReset reset(get);
      TESSERA_RETURN_IF_ERROR(get.BindInt64(1, module_id));
      Result<bool> row = get.Step("read compute state");
      if (!row.ok()) return row.status();
      revision = *row ? get.ColumnInt64(1) : 0;
    }
    if (!lease_holder && revision != expected_revision) {
      return compute::StaleComputeState(module_id, revision, expected_revision);
    }
    ++revision;
    SqliteStatement& put = *stmts_->put_state;
    ScopedReset reset(put);
    TESSERA_RETURN_IF_ERROR(put.BindInt64(1, module_id));
    TESSERA_RETURN_IF_ERROR(put.BindBlob(2, bytes));
    TESSERA_RETURN_IF_ERROR(put.BindInt64(3, revision));
    TESSERA_RETURN_IF_ERROR(put.BindInt64(4, now));
    return put.Run("write compute state");
  });
  if (!status.ok()) return status;
  return revision;
}

}  // namespace tessera::store
