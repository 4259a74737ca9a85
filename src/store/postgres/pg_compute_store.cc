// PgComputeStore: Open, modules and versions (triggers, policy and the
// state blob are in pg_compute_store_state.cc; runs, usage, logs and
// retention in pg_compute_store_records.cc).
#include "store/postgres/pg_compute_store.h"

#include <utility>

#include "compute/compute_store_rules.h"
#include "store/postgres/pg_compute_rows.h"
#include "store/postgres/pg_compute_schema.h"

namespace tessera::store {

using compute::ModuleRecord;
using compute::VersionRecord;
using pg::PgParam;
using pg::PgResult;

namespace {

std::string What(std::string_view action) {
  return "postgres compute store: " + std::string(action);
}

std::string Select(const char* columns, std::string_view rest) {
  return std::string("SELECT ") + columns + " " + std::string(rest);
}

}  // namespace

Result<std::unique_ptr<PgComputeStore>> PgComputeStore::Open(
    const std::string& url, Options options) {
  if (options.wall_clock == nullptr) options.wall_clock = RealWallClock::Get();
  Result<std::unique_ptr<pg::PgConn>> conn = pg::PgConn::Connect(url);
  if (!conn.ok()) return conn.status();
  TESSERA_RETURN_IF_ERROR(pg::EnsureComputeSchema(**conn));
  return std::unique_ptr<PgComputeStore>(
      new PgComputeStore(std::move(conn).value(), options));
}

Result<std::unique_ptr<compute::ComputeStore>> OpenPgComputeStore(
    const std::string& url, PgComputeStore::Options options) {
  Result<std::unique_ptr<PgComputeStore>> store =
      PgComputeStore::Open(url, options);
  if (!store.ok()) return store.status();
  return std::unique_ptr<compute::ComputeStore>(std::move(store).value());
}

PgComputeStore::PgComputeStore(std::unique_ptr<pg::PgConn> conn,
                               Options options)
    : options_(options), conn_(std::move(conn)) {}

PgComputeStore::~PgComputeStore() = default;

Status PgComputeStore::LockModuleLocked(int64_t module_id,
                                        std::string_view what) {
  Result<PgResult> row =
      conn_->Exec("SELECT 1 FROM compute_modules WHERE id = $1 FOR UPDATE",
                  {PgParam::Int(module_id)}, what);
  if (!row.ok()) return row.status();
  return row->rows() > 0 ? Status::Ok() : compute::NoComputeModule(module_id);
}

// --- modules

Result<ModuleRecord> PgComputeStore::UpsertModule(std::string_view name,
                                                  std::string_view description,
                                                  bool always_on) {
  const int64_t now = NowMs();
  std::lock_guard<std::mutex> lock(mu_);
  Result<PgResult> row = conn_->Exec(
      "INSERT INTO compute_modules(name, description, enabled, always_on, "
      "active_version, circuit, consecutive_failures, circuit_opened_ms, "
      "last_error, created_ms, updated_ms) "
      "VALUES($1, $2, 0, $3, 0, 'closed'::bytea, 0, 0, ''::bytea, $4, $4) "
      "ON CONFLICT (name) DO UPDATE SET description = EXCLUDED.description, "
      "always_on = EXCLUDED.always_on, updated_ms = EXCLUDED.updated_ms "
      "RETURNING " +
          std::string(pg::kModuleColumns),
      {PgParam::Bytes(name), PgParam::Bytes(description),
       PgParam::Int(always_on ? 1 : 0), PgParam::Int(now)},
      What("upsert compute module"));
  if (!row.ok()) return row.status();
  return pg::ReadModuleRow(*row, 0);
}

Result<ModuleRecord> PgComputeStore::GetModule(std::string_view name) {
  std::lock_guard<std::mutex> lock(mu_);
  Result<PgResult> row = conn_->Exec(
      Select(pg::kModuleColumns, "FROM compute_modules WHERE name = $1"),
      {PgParam::Bytes(name)}, What("read compute module"));
  if (!row.ok()) return row.status();
  if (row->rows() == 0) return compute::NoComputeModuleNamed(std::string(name));
  return pg::ReadModuleRow(*row, 0);
}

Result<std::vector<ModuleRecord>> PgComputeStore::ListModules() {
  std::lock_guard<std::mutex> lock(mu_);
  Result<PgResult> rows = conn_->Exec(
      Select(pg::kModuleColumns, "FROM compute_modules ORDER BY name"), {},
      What("list compute modules"));
  if (!rows.ok()) return rows.status();
  std::vector<ModuleRecord> out;
  for (int i = 0; i < rows->rows(); ++i) {
    Result<ModuleRecord> m = pg::ReadModuleRow(*rows, i);
    if (!m.ok()) return m.status();
    out.push_back(std::move(m).value());
  }
  return out;
}

Status PgComputeStore::UpdateModuleState(const ModuleRecord& record) {
  const int64_t now = NowMs();
  std::lock_guard<std::mutex> lock(mu_);
  Result<PgResult> done = conn_->Exec(
      "UPDATE compute_modules SET enabled = $2, active_version = $3, "
      "circuit = $4, consecutive_failures = $5, circuit_opened_ms = $6, "
      "last_error = $7, updated_ms = $8 WHERE id = $1",
      {PgParam::Int(record.id), PgParam::Int(record.enabled ? 1 : 0),
       PgParam::Int(record.active_version),
       PgParam::Bytes(compute::CircuitStateName(record.circuit)),
       PgParam::Int(record.consecutive_failures),
       PgParam::Int(record.circuit_opened_ms),
       PgParam::Bytes(record.last_error), PgParam::Int(now)},
      What("update compute module state"));
  if (!done.ok()) return done.status();
  if (done->affected() == 0) return compute::NoComputeModule(record.id);
  return Status::Ok();
}

Status PgComputeStore::DeleteModule(int64_t module_id) {
  const std::string what = What("delete compute module");
  std::lock_guard<std::mutex> lock(mu_);
  return conn_->InTransaction("BEGIN", what, [&]() -> Status {
    // The module's row first, as every other transaction that writes a
    // module's rows locks it first: no two of them deadlock.
    TESSERA_RETURN_IF_ERROR(LockModuleLocked(module_id, what));
    int64_t removed = 0;
    for (const char* sql : {
             "DELETE FROM compute_state WHERE module_id = $1",
             "DELETE FROM compute_version_files WHERE module_id = $1",
             "DELETE FROM compute_versions WHERE module_id = $1",
             "DELETE FROM compute_triggers WHERE module_id = $1",
             "DELETE FROM compute_runs WHERE module_id = $1",
             "DELETE FROM compute_usage WHERE module_id = $1",
             "DELETE FROM compute_logs WHERE module_id = $1",
             "DELETE FROM compute_modules WHERE id = $1",
         }) {
      Result<PgResult> done = conn_->Exec(sql, {PgParam::Int(module_id)}, what);
      if (!done.ok()) return done.status();
      removed = done->affected();
    }
    if (removed == 0) return compute::NoComputeModule(module_id);
    return Status::Ok();
  });
}

// --- versions

Result<int64_t> PgComputeStore::AddVersion(const VersionRecord& version) {
  const int64_t now = NowMs();
  const std::string what = What("add compute version");
  std::lock_guard<std::mutex> lock(mu_);
  int64_t version_no = 0;
  Status status = conn_->InTransaction("BEGIN", what, [&]() -> Status {
    TESSERA_RETURN_IF_ERROR(LockModuleLocked(version.module_id, what));
    Result<PgResult> added = conn_->Exec(
        "INSERT INTO compute_versions(module_id, version_no, language, "
        "sdk_version, abi_version, source_hash, template_name, status, "
        "compile_log, compiled_size_bytes, artifact_path, cache_hit, "
        "created_ms, compiled_ms) "
        "SELECT $1::bigint, coalesce(max(version_no), 0) + 1, $2::bytea, "
        "$3::bytea, $4::bigint, $5::bytea, $6::bytea, $7::bytea, $8::bytea, "
        "$9::bigint, $10::bytea, $11::bigint, $12::bigint, $13::bigint "
        "FROM compute_versions WHERE module_id = $1 RETURNING version_no",
        {PgParam::Int(version.module_id),
         PgParam::Bytes(compute::LanguageName(version.language)),
         PgParam::Bytes(version.sdk_version), PgParam::Int(version.abi_version),
         PgParam::Bytes(version.source_hash),
         PgParam::Bytes(version.template_name),
         PgParam::Bytes(compute::CompileStatusName(version.status)),
         PgParam::Bytes(version.compile_log),
         PgParam::Int(version.compiled_size_bytes),
         PgParam::Bytes(version.artifact_path),
         PgParam::Int(version.cache_hit ? 1 : 0),
         PgParam::Int(version.created_ms != 0 ? version.created_ms : now),
         PgParam::Int(version.compiled_ms)},
        what);
    if (!added.ok()) return added.status();
    Result<int64_t> no = added->Int64(0, 0);
    if (!no.ok()) return no.status();
    version_no = *no;
    for (const auto& [file_path, contents] : version.files) {
      TESSERA_RETURN_IF_ERROR(conn_->Run(
          "INSERT INTO compute_version_files(module_id, version_no, path, "
          "contents) VALUES($1, $2, $3, $4)",
          {PgParam::Int(version.module_id), PgParam::Int(version_no),
           PgParam::Bytes(file_path), PgParam::Bytes(contents)},
          What("add compute version file")));
    }
    return Status::Ok();
  });
  if (!status.ok()) return status;
  return version_no;
}

Result<std::vector<VersionRecord>> PgComputeStore::ReadVersionsLocked(
    const std::string& sql, std::span<const PgParam> params,
    std::string_view what, bool with_files) {
  Result<PgResult> rows = conn_->Exec(sql, params, what);
  if (!rows.ok()) return rows.status();
  std::vector<VersionRecord> out;
  for (int i = 0; i < rows->rows(); ++i) {
    Result<VersionRecord> v = pg::ReadVersionRow(*rows, i);
    if (!v.ok()) return v.status();
    out.push_back(std::move(v).value());
  }
  if (!with_files) return out;
  for (VersionRecord& v : out) {
    Result<PgResult> files = conn_->Exec(
        "SELECT path, contents FROM compute_version_files "
        "WHERE module_id = $1 AND version_no = $2",
        {PgParam::Int(v.module_id), PgParam::Int(v.version_no)},
        What("read compute version files"));
    if (!files.ok()) return files.status();
    for (int i = 0; i < files->rows(); ++i) {
      Result<std::string> file_path = files->Bytes(i, 0);
      if (!file_path.ok()) return file_path.status();
      Result<std::string> contents = files->Bytes(i, 1);
      if (!contents.ok()) return contents.status();
      v.files.emplace(std::move(file_path).value(),
                      std::move(contents).value());
    }
  }
  return out;
}

Result<VersionRecord> PgComputeStore::GetVersion(int64_t module_id,
                                                 int64_t version_no) {
  std::lock_guard<std::mutex> lock(mu_);
  const PgParam params[] = {PgParam::Int(module_id), PgParam::Int(version_no)};
  Result<std::vector<VersionRecord>> found = ReadVersionsLocked(
      Select(pg::kVersionColumns,
             "FROM compute_versions WHERE module_id = $1 AND version_no = $2"),
      params, What("read compute version"), true);
  if (!found.ok()) return found.status();
  if (found->empty()) return compute::NoComputeVersion(module_id, version_no);
  return std::move(found->front());
}

Result<std::vector<VersionRecord>> PgComputeStore::ListVersions(
    int64_t module_id, int64_t limit, bool with_files) {
  std::lock_guard<std::mutex> lock(mu_);
  const PgParam params[] = {PgParam::Int(module_id),
                            PgParam::Int(limit < 0 ? 0 : limit)};
  return ReadVersionsLocked(Select(pg::kVersionColumns,
                                   "FROM compute_versions WHERE module_id = $1 "
                                   "ORDER BY version_no DESC LIMIT $2"),
                            params, What("list compute versions"), with_files);
}

Result<std::vector<VersionRecord>> PgComputeStore::ListUnfinishedVersions() {
  std::lock_guard<std::mutex> lock(mu_);
  return ReadVersionsLocked(
      Select(pg::kVersionColumns,
             "FROM compute_versions WHERE status IN ('pending'::bytea, "
             "'compiling'::bytea) ORDER BY seq"),
      {}, What("list unfinished compute versions"), true);
}

Status PgComputeStore::UpdateVersionCompile(const VersionRecord& version) {
  std::lock_guard<std::mutex> lock(mu_);
  Result<PgResult> done = conn_->Exec(
      "UPDATE compute_versions SET status = $3, compile_log = $4, "
      "compiled_size_bytes = $5, artifact_path = $6, cache_hit = $7, "
      "compiled_ms = $8 WHERE module_id = $1 AND version_no = $2",
      {PgParam::Int(version.module_id), PgParam::Int(version.version_no),
       PgParam::Bytes(compute::CompileStatusName(version.status)),
       PgParam::Bytes(version.compile_log),
       PgParam::Int(version.compiled_size_bytes),
       PgParam::Bytes(version.artifact_path),
       PgParam::Int(version.cache_hit ? 1 : 0),
       PgParam::Int(version.compiled_ms)},
      What("update compute version"));
  if (!done.ok()) return done.status();
  if (done->affected() == 0) {
    return compute::NoComputeVersion(version.module_id, version.version_no);
  }
  return Status::Ok();
}

Result<std::optional<VersionRecord>> PgComputeStore::FindCompiled(
    std::string_view source_hash) {
  std::lock_guard<std::mutex> lock(mu_);
  const PgParam params[] = {PgParam::Bytes(source_hash)};
  Result<std::vector<VersionRecord>> found = ReadVersionsLocked(
      Select(pg::kVersionColumns,
             "FROM compute_versions WHERE source_hash = $1 AND "
             "status = 'succeeded'::bytea ORDER BY seq DESC LIMIT 1"),
      params, What("find compiled compute version"), true);
  if (!found.ok()) return found.status();
  if (found->empty()) return std::optional<VersionRecord>();
  return std::optional<VersionRecord>(std::move(found->front()));
}

}  // namespace tessera::store
