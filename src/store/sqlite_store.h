// The embedded Store: one SQLite database file in WAL mode.
//
// Transfer journal: the table `transfers` (schema.h, migration 2). Each
// journal method is one BEGIN IMMEDIATE ... COMMIT holding its row writes
// and the `saves` write of the shard that changed, so a crash leaves either
// both or neither; any error rolls the whole transaction back.
//
// Durability: synchronous=FULL, so every write (Save, PutShard, ...) that
// returned OK has had its write-ahead log record fsynced and survives
// kill -9 and power loss; a write interrupted by a crash is rolled back as a
// whole on the next open (never a torn state). Checkpoints are SQLite's
// automatic ones; the log is truncated to 64 MiB after each.
//
// Threading: one connection, guarded by `mu_`; every method takes it for
// the whole operation, so calls from any number of threads are serialised
// (writes are serialised by SQLite anyway). Statements are prepared once at
// Open and reused. Other processes may open the same file: they wait up to
// Options::busy_timeout_ms for the write lock, then fail with kIo.
#ifndef TESSERA_STORE_SQLITE_STORE_H_
#define TESSERA_STORE_SQLITE_STORE_H_

#include <cstdint>
#include <functional>
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
#include "store/sqlite_db.h"
#include "store/store.h"

namespace tessera::store {

class SqliteStore final : public Store {
 public:
  struct Options {
    // Unix time of the created/updated/saved timestamps (milliseconds);
    // null: RealWallClock. Read from any thread, outside the store's lock.
    // Not owned; must outlive the store.
    const WallClock* wall_clock = nullptr;
    // How long a write waits for another process's write lock.
    int busy_timeout_ms = 5000;
  };

  // Opens (creating it and its parent directories if needed) the database
  // at `path`, switches it to WAL and migrates its schema. ":memory:" gives
  // a private in-memory database (no durability; for tests).
  // Errors: kInvalidArgument for an empty path; kFailedPrecondition for a
  // file written by a newer schema version or a foreign SQLite database;
  // kIo (SQLite's message and the path) for everything else.
  static Result<std::unique_ptr<SqliteStore>> Open(const std::string& path,
                                                   Options options);
  static Result<std::unique_ptr<SqliteStore>> Open(const std::string& path) {
    return Open(path, Options());
  }

  // Closes the database (checkpointing the log when no other connection
  // has it open). Must not race with calls on other threads.
  ~SqliteStore() override;

  // shard::StateStore. A state may be saved for an id with no ShardRecord.
  Status Save(std::string_view shard_id, std::string_view bytes) override;
  Result<std::optional<std::string>> Load(std::string_view shard_id) override;
  Status Forget(std::string_view shard_id) override;

  // Store. PutShard fills in zero timestamps from the clock.
  Status PutShard(const ShardRecord& record) override;
  Status SetShardStatus(std::string_view id, std::string_view status,
                        std::string_view error) override;
  Status DeleteShard(std::string_view id) override;
  // Ordered by creation time, then id.
  Result<std::vector<ShardRecord>> ListShards() override;

  // shard::TransferJournal. ListTransfers: by creation time, then insertion
  // order; a row whose step is not a TransferStep fails it with kIo.
  Status BeginTransfers(std::span<const shard::TransferRecord> records,
                        std::string_view source_shard,
                        std::optional<std::string_view> source_state) override;
  Status AdvanceTransfers(std::span<const shard::TransferAdvance> steps,
                          std::string_view shard_id,
                          std::optional<std::string_view> state) override;
  Result<std::vector<shard::TransferRecord>> ListTransfers() override;
  Status DeleteTransfers(std::span<const std::string> ids) override;

  const std::string& path() const { return path_; }

 private:
  struct Statements;

  SqliteStore(std::unique_ptr<SqliteDb> db,
              std::unique_ptr<Statements> statements, Options options);
  int64_t NowUnixMs() const;
  // Runs `body` inside BEGIN IMMEDIATE ... COMMIT; rolls back when `body`
  // or the commit fails. `what` names the operation in error messages.
  Status InTransaction(std::string_view what,
                       const std::function<Status()>& body)
      EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Status SaveLocked(std::string_view shard_id, std::string_view bytes,
                    int64_t now_ms) EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Status DeleteShardLocked(std::string_view id) EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Status BeginTransferLocked(const shard::TransferRecord& record,
                             int64_t now_ms) EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Status AdvanceTransferLocked(const shard::TransferAdvance& advance,
                               int64_t now_ms) EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  const std::string path_;
  std::mutex mu_;
  // Declared before the statements, hence destroyed after them.
  const std::unique_ptr<SqliteDb> db_ GUARDED_BY(mu_);
  const std::unique_ptr<Statements> stmts_ GUARDED_BY(mu_);
};

}  // namespace tessera::store

#endif  // TESSERA_STORE_SQLITE_STORE_H_
