// ComputeStore: the durable records of compute modules (modules, versions,
// triggers, policy, runs, usage, logs, state blobs), a port the compute
// layer declares and the store layer implements (store/
// sqlite_compute_store.h: SQLite, schema migration 3; store/postgres/
// pg_compute_store.h: PostgreSQL). MemoryComputeStore
// (memory_compute_store.h) is the same contract in memory;
// compute_store_conformance.h is the test suite all three pass.
//
// Every method may be called from any thread, concurrently. Every write
// that returned OK is durable (SQLite: synchronous=FULL; PostgreSQL: the
// server's synchronous_commit) and atomic.
#ifndef TESSERA_COMPUTE_COMPUTE_STORE_H_
#define TESSERA_COMPUTE_COMPUTE_STORE_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "compute/compute_types.h"

namespace tessera::compute {

class ComputeStore {
 public:
  virtual ~ComputeStore() = default;

  // --- modules
  // Creates the module (disabled, circuit closed) or, when one has this
  // name, updates its description and always_on only. Returns the record.
  // Errors: kIo.
  virtual Result<ModuleRecord> UpsertModule(std::string_view name,
                                            std::string_view description,
                                            bool always_on) = 0;
  // Errors: kNotFound, kIo.
  virtual Result<ModuleRecord> GetModule(std::string_view name) = 0;
  // By name. Errors: kIo.
  virtual Result<std::vector<ModuleRecord>> ListModules() = 0;
  // Writes enabled, active_version, circuit, consecutive_failures,
  // circuit_opened_ms and last_error of module `record.id` (other fields
  // are ignored). Errors: kNotFound, kIo.
  virtual Status UpdateModuleState(const ModuleRecord& record) = 0;
  // Removes the module with its versions, triggers, runs, usage, logs and
  // state, atomically. Errors: kNotFound, kIo.
  virtual Status DeleteModule(int64_t module_id) = 0;

  // --- versions
  // Stores `version` (status pending unless set) under the next version_no
  // of its module and returns that number. Errors: kNotFound (no module),
  // kIo.
  virtual Result<int64_t> AddVersion(const VersionRecord& version) = 0;
  // Errors: kNotFound, kIo.
  virtual Result<VersionRecord> GetVersion(int64_t module_id,
                                           int64_t version_no) = 0;
  // Newest first, at most `limit`; `with_files` false leaves files empty.
  // Errors: kIo.
  virtual Result<std::vector<VersionRecord>> ListVersions(int64_t module_id,
                                                          int64_t limit,
                                                          bool with_files) = 0;
  // Every version (of any module) whose status is pending or compiling,
  // oldest first, with files: what a restarted compile queue resumes.
  virtual Result<std::vector<VersionRecord>> ListUnfinishedVersions() = 0;
  // Sets status, compile_log, compiled_size_bytes, artifact_path, cache_hit
  // and compiled_ms of one version. Errors: kNotFound, kIo.
  virtual Status UpdateVersionCompile(const VersionRecord& version) = 0;
  // A succeeded version of any module with this source hash and language,
  // or nullopt: the artifact cache's index. Errors: kIo.
  virtual Result<std::optional<VersionRecord>> FindCompiled(
      std::string_view source_hash) = 0;

  // --- triggers
  // Inserts or replaces by key (tick: the module's one tick trigger;
  // invoke: (module, export_name); event: (module, on_event, event_name));
  // returns the stored record with its id. Errors: kNotFound (no module),
  // kIo.
  virtual Result<TriggerRecord> UpsertTrigger(const TriggerRecord& trigger) = 0;
  // One module's (module_id > 0) or every module's (0), by id.
  virtual Result<std::vector<TriggerRecord>> ListTriggers(
      int64_t module_id) = 0;
  // Errors: kNotFound, kIo.
  virtual Status DeleteTrigger(int64_t trigger_id) = 0;

  // --- policy (nullopt: never set; the engine uses the defaults)
  virtual Result<std::optional<Policy>> GetPolicy() = 0;
  virtual Status SetPolicy(const Policy& policy) = 0;

  // --- runs, usage, logs
  virtual Status AddRuns(std::span<const RunRecord> runs) = 0;
  virtual Result<std::vector<RunRecord>> ListRuns(const RunFilter& filter) = 0;
  // Adds each row to the stored row of its (module, minute), summing every
  // counter. Errors: kIo.
  virtual Status AddUsage(std::span<const UsageRow> rows) = 0;
  // Rows of one module (module_id > 0) or all, minute_ms >= since_ms,
  // oldest first.
  virtual Result<std::vector<UsageRow>> ListUsage(int64_t module_id,
                                                  int64_t since_ms) = 0;
  virtual Status AddLogs(std::span<const LogRecord> logs) = 0;
  virtual Result<std::vector<LogRecord>> ListLogs(const LogFilter& filter) = 0;
  // Retention: removes runs and logs older than `before_ms` and usage rows
  // older than `usage_before_ms`. Returns how many rows went.
  virtual Result<int64_t> Prune(int64_t before_ms, int64_t usage_before_ms) = 0;

  // --- the state blob
  // Errors: kIo (a module never written has revision 0 and no bytes).
  virtual Result<StateBlob> GetState(int64_t module_id) = 0;
  // Writes the blob when `lease_holder` is true (the tick-lease holder
  // always wins) or the stored revision equals `expected_revision`;
  // returns the new revision (old + 1). Errors: kAborted (stale: a newer
  // revision exists; nothing written), kNotFound (no module), kIo.
  virtual Result<int64_t> SetState(int64_t module_id, std::string_view bytes,
                                   int64_t expected_revision,
                                   bool lease_holder) = 0;
};

}  // namespace tessera::compute

#endif  // TESSERA_COMPUTE_COMPUTE_STORE_H_
