// compute::ComputeStore on PostgreSQL (compute/compute_store.h): the
// compute modules' records with store::SqliteComputeStore's semantics and
// errors (the conformance suite compute_store_conformance.h runs against
// both), in the tables of pg_compute_schema.h, created (idempotently,
// under the shared advisory lock) at Open.
//
// Transactions: every method that writes more than one row, or reads
// before it writes, is one transaction (READ COMMITTED): UpsertModule and
// UpsertTrigger are one upsert ... RETURNING each (the trigger's after a
// check of its module), DeleteModule the deletes of every table, AddRuns /
// AddUsage / AddLogs / Prune all their rows or none, AddVersion the
// version with its files. AddVersion, UpsertTrigger and SetState first
// lock the module's row (SELECT ... FOR UPDATE), so the next version_no
// and the state's revision guard are read and written by one transaction
// at a time across every connection and process, as SQLite's BEGIN
// IMMEDIATE makes them, and a module deleted meanwhile is kNotFound, not
// a foreign key error. DeleteModule takes the same lock first, so it and
// those never deadlock on each other's rows. Any error (a refusal, a
// server error, a lost connection) rolls the transaction back whole.
//
// Durability: the server's (synchronous_commit as configured; on by
// default). The state blob has no size limit of its own (bytea's is 1 GB).
//
// Threading: one connection behind `mu_`; every method may be called from
// any thread and holds it for the whole call. A connection found broken is
// reset before the next statement (pg_conn.h): the call that finds out
// fails with kIo, the next one runs on a new session.
#ifndef TESSERA_STORE_POSTGRES_PG_COMPUTE_STORE_H_
#define TESSERA_STORE_POSTGRES_PG_COMPUTE_STORE_H_

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
#include "store/postgres/pg_conn.h"

namespace tessera::store {

class PgComputeStore final : public compute::ComputeStore {
 public:
  struct Options {
    // Unix time of created/updated timestamps; null: RealWallClock. Not
    // owned; must outlive the store.
    const WallClock* wall_clock = nullptr;
  };

  // Connects to `url` (postgres:// or postgresql://) and creates the
  // compute tables if missing. Errors: kInvalidArgument (not a postgres
  // URL, a malformed one), kIo (unreachable, refused, with the server's
  // message), kFailedPrecondition (a newer version of the tables).
  static Result<std::unique_ptr<PgComputeStore>> Open(const std::string& url,
                                                      Options options);
  static Result<std::unique_ptr<PgComputeStore>> Open(const std::string& url) {
    return Open(url, Options());
  }
  ~PgComputeStore() override;

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

 private:
  PgComputeStore(std::unique_ptr<pg::PgConn> conn, Options options);
  int64_t NowMs() const { return options_.wall_clock->UnixNowMs(); }

  // Inside a transaction: locks module `module_id`'s row until it ends, or
  // kNotFound.
  Status LockModuleLocked(int64_t module_id, std::string_view what)
      EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The versions `sql` (a SELECT of pg::kVersionColumns) returns, with
  // their files when `with_files`.
  Result<std::vector<compute::VersionRecord>> ReadVersionsLocked(
      const std::string& sql, std::span<const pg::PgParam> params,
      std::string_view what, bool with_files) EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  std::mutex mu_;
  const std::unique_ptr<pg::PgConn> conn_ GUARDED_BY(mu_);
};

// PgComputeStore::Open as a compute::ComputeStore (as OpenComputeStore
// opens it for postgres:// URLs).
Result<std::unique_ptr<compute::ComputeStore>> OpenPgComputeStore(
    const std::string& url, PgComputeStore::Options options = {});

}  // namespace tessera::store

#endif  // TESSERA_STORE_POSTGRES_PG_COMPUTE_STORE_H_
