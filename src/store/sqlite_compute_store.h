// ComputeStore on SQLite: the compute tables of schema migration 3
// (schema.h) in the app's store file, through a connection of its own
// (the same file SqliteStore opens, so shard saves and compute writes do
// not wait on each other's mutex; SQLite serialises the writes).
//
// Durability and atomicity: WAL with synchronous=FULL, like SqliteStore:
// every method that writes is one BEGIN IMMEDIATE ... COMMIT, so a write
// that returned OK survives kill -9 and power loss, and one interrupted by
// a crash is rolled back whole on the next open (sqlite_compute_crash_test
// kills a writer mid-run and checks). SetState reads the stored revision
// and writes the new one inside one transaction, so the revision guard
// holds across threads and processes.
//
// Behaviour is compute_store.h's plus the shared rules of
// compute/compute_store_rules.h (the conformance suite runs against it).
// The state blob has no size limit here (SQLite's own is 1 GB); the ABI's
// 256 KiB is enforced by the instance.
//
// Threading: one connection, guarded by `mu_`; every method holds it for
// the whole operation. Other processes may open the same file: they wait up
// to Options::busy_timeout_ms for the write lock, then fail with kIo.
#ifndef TESSERA_STORE_SQLITE_COMPUTE_STORE_H_
#define TESSERA_STORE_SQLITE_COMPUTE_STORE_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "common/thread_annotations.h"
#include "compute/compute_store.h"
#include "store/sqlite_db.h"

namespace tessera::store {

struct ComputeStatements;  // sqlite_compute_sql.h

class SqliteComputeStore final : public compute::ComputeStore {
 public:
  struct Options {
    // Unix time of created/updated timestamps; null: RealWallClock. Not
    // owned; must outlive the store.
    const WallClock* wall_clock = nullptr;
    // How long a write waits for another connection's write lock.
    int busy_timeout_ms = 5000;
  };

  // Opens (creating it and its parent directories if needed) the database
  // at `path`, in WAL mode, migrating its schema. ":memory:" is a private
  // in-memory database (for tests). Errors: kInvalidArgument (empty path),
  // kFailedPrecondition (a newer schema or a foreign database), kIo.
  static Result<std::unique_ptr<SqliteComputeStore>> Open(
      const std::string& path, Options options);
  static Result<std::unique_ptr<SqliteComputeStore>> Open(
      const std::string& path) {
    return Open(path, Options());
  }
  ~SqliteComputeStore() override;

  Result<compute::ModuleRecord> UpsertModule(std::string_view name,
                                             std::string_view description,
                                             bool always_on) override;
  Result<compute::ModuleRecord> GetModule(std::string_view name) override;
  Result<std::vector<compute::ModuleRecord>> ListModules() override;
  Status UpdateModuleState(const compute::ModuleRecord& record) override;
  Status DeleteModule(int64_t module_id) override;

  Result<int64_t> AddVersion(const compute::VersionRecord& version) override;
  Result<compute::VersionRecord> GetVersion(int64_t module_id,
                                            int64_t version_no) override;
  Result<std::vector<compute::VersionRecord>> ListVersions(
      int64_t module_id, int64_t limit, bool with_files) override;
  Result<std::vector<compute::VersionRecord>> ListUnfinishedVersions() override;
  Status UpdateVersionCompile(const compute::VersionRecord& version) override;
  Result<std::optional<compute::VersionRecord>> FindCompiled(
      std::string_view source_hash) override;

  Result<compute::TriggerRecord> UpsertTrigger(
      const compute::TriggerRecord& trigger) override;
  Result<std::vector<compute::TriggerRecord>> ListTriggers(
      int64_t module_id) override;
  Status DeleteTrigger(int64_t trigger_id) override;

  Result<std::optional<compute::Policy>> GetPolicy() override;
  Status SetPolicy(const compute::Policy& policy) override;

  Status AddRuns(std::span<const compute::RunRecord> runs) override;
  Result<std::vector<compute::RunRecord>> ListRuns(
      const compute::RunFilter& filter) override;
  Status AddUsage(std::span<const compute::UsageRow> rows) override;
  Result<std::vector<compute::UsageRow>> ListUsage(int64_t module_id,
                                                   int64_t since_ms) override;
  Status AddLogs(std::span<const compute::LogRecord> logs) override;
  Result<std::vector<compute::LogRecord>> ListLogs(
      const compute::LogFilter& filter) override;
  Result<int64_t> Prune(int64_t before_ms, int64_t usage_before_ms) override;

  Result<compute::StateBlob> GetState(int64_t module_id) override;
  Result<int64_t> SetState(int64_t module_id, std::string_view bytes,
                           int64_t expected_revision,
                           bool lease_holder) override;

  const std::string& path() const { return path_; }

 private:
  SqliteComputeStore(std::unique_ptr<SqliteDb> db,
                     std::unique_ptr<ComputeStatements> statements,
                     Options options);
  int64_t NowMs() const { return options_.wall_clock->UnixNowMs(); }
  // kNotFound unless module `module_id` exists.
  Status CheckModuleLocked(int64_t module_id) EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Result<compute::ModuleRecord> ModuleByNameLocked(std::string_view name)
      EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Fills `version.files` from compute_version_files.
  Status ReadFilesLocked(compute::VersionRecord& version)
      EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The versions a statement (already bound) returns.
  Result<std::vector<compute::VersionRecord>> ReadVersionsLocked(
      SqliteStatement& stmt, std::string_view what, bool with_files)
      EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  const std::string path_;
  std::mutex mu_;
  // Declared before the statements, hence destroyed after them.
  const std::unique_ptr<SqliteDb> db_ GUARDED_BY(mu_);
  const std::unique_ptr<ComputeStatements> stmts_ GUARDED_BY(mu_);
};

}  // namespace tessera::store

#endif  // TESSERA_STORE_SQLITE_COMPUTE_STORE_H_
