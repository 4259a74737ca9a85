// Private to SqliteComputeStore: its prepared statements (the SQL over the
// compute tables of schema migration 3) and the decoding of their rows.
#ifndef TESSERA_STORE_SQLITE_COMPUTE_SQL_H_
#define TESSERA_STORE_SQLITE_COMPUTE_SQL_H_

#include <cstdint>
#include <memory>

#include "common/status.h"
#include "compute/compute_types.h"
#include "store/sqlite_db.h"

namespace tessera::store {

struct ComputeStatements {
  using Stmt = std::unique_ptr<SqliteStatement>;
  // modules
  Stmt upsert_module, module_by_name, module_exists, list_modules,
      update_module_state, delete_module;
  // DeleteModule's cascade (?1: module id)
  Stmt delete_module_files, delete_module_versions, delete_module_triggers,
      delete_module_runs, delete_module_usage, delete_module_logs,
      delete_module_state;
  // versions
  Stmt next_version_no, insert_version, insert_file, get_version, files_of,
      list_versions, unfinished_versions, update_compile, find_compiled;
  // triggers
  Stmt upsert_trigger, trigger_by_key, list_triggers, list_all_triggers,
      delete_trigger;
  // policy
  Stmt get_policy, set_policy;
  // runs (one statement per filter combination, prepared on first use:
  // bit 0 module, bit 1 success, bit 2 flow id), usage, logs
  Stmt insert_run, list_runs[8];
  Stmt add_usage, list_usage, list_all_usage;
  Stmt insert_log, list_logs, list_all_logs;
  Stmt prune_runs, prune_logs, prune_usage;
  // state
  Stmt get_state, put_state;
};

// Prepares every statement except the list_runs variants. Errors: kIo.
Status PrepareComputeStatements(SqliteDb& db, ComputeStatements& s);
// The ListRuns statement for `mask` (see list_runs), prepared when first
// needed. Binds: ?1 module id, ?2 success, ?3 flow id, ?4 since, ?5 limit
// (only those the mask names, plus ?4 and ?5). Errors: kIo.
Result<SqliteStatement*> ListRunsStatement(SqliteDb& db, ComputeStatements& s,
                                           int mask);

// Row decoders for the column lists of the statements above. Errors: kIo
// naming `path` for a value that is not one of its enum's names.
Result<compute::ModuleRecord> ReadModule(SqliteStatement& row,
                                         const std::string& path);
Result<compute::VersionRecord> ReadVersion(SqliteStatement& row,
                                           const std::string& path);
Result<compute::TriggerRecord> ReadTrigger(SqliteStatement& row,
                                           const std::string& path);
compute::Policy ReadPolicy(SqliteStatement& row);
Result<compute::RunRecord> ReadRun(SqliteStatement& row,
                                   const std::string& path);
compute::UsageRow ReadUsage(SqliteStatement& row);
Result<compute::LogRecord> ReadLog(SqliteStatement& row,
                                   const std::string& path);

}  // namespace tessera::store

#endif  // TESSERA_STORE_SQLITE_COMPUTE_SQL_H_
