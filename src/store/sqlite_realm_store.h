// realm::RealmStore on SQLite (realm/realm_store.h): realms' patch logs and
// snapshots in a file of their own beside the store's (store.h
// RealmFilePath), so a burst of realm commits never queues behind the
// shard saves or a function's data transaction on one write lock. The
// tables come from schema migration 5 (schema.h): realms (key, kind, the
// current epoch, head_version), realm_log (one row per commit) and
// realm_snapshots.
//
// The fence: every write is one BEGIN IMMEDIATE transaction that reads the
// realm's row (epoch, head_version) and writes only if the offered epoch
// and versions follow it; so a second writer (another process on the same
// file included) or a writer of an old epoch changes nothing. Append
// checks and writes all its entries in one transaction (group commit: one
// fsync however many commits), with statements prepared once at Open.
// PutSnapshot drops, in its transaction, the older snapshots (only the
// newest is read) and the log entries with version <= snapshot.version -
// log_window.
//
// Durability: WAL with synchronous=FULL, as every store connection
// (OpenStoreDatabase): a call that returned Ok has had its log record
// fsynced and survives kill -9 and power loss, which the port promises
// (synchronous=NORMAL in WAL would survive kill -9 but could lose the last
// commits on power loss). A write cut short by a crash is rolled back
// whole on the next open (sqlite_realm_crash_test).
//
// Load reads the tail back checked: a log that is not consecutive after
// the snapshot up to head_version (a file edited by hand) is kIo, never a
// guess.
//
// Threading: one connection behind `mu_`; every method may be called from
// any thread and holds it for the whole call. ":memory:" is a private
// in-memory database (tests).
#ifndef TESSERA_STORE_SQLITE_REALM_STORE_H_
#define TESSERA_STORE_SQLITE_REALM_STORE_H_

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
#include "realm/realm_store.h"
#include "store/sqlite_db.h"

namespace tessera::store {

struct RealmStatements;  // sqlite_realm_sql.h

class SqliteRealmStore final : public realm::RealmStore {
 public:
  struct Options {
    // The realms' created/updated times; null: RealWallClock. Not owned;
    // must outlive the store.
    const WallClock* wall_clock = nullptr;
    // How long a write waits for another process's write lock (then kIo).
    int busy_timeout_ms = 5000;
  };

  // Opens (creating it and its parent directories if needed) the database
  // at `path`, in WAL mode, migrating the store schema. Errors:
  // kInvalidArgument (empty path), kFailedPrecondition (a newer schema, a
  // foreign database), kIo.
  static Result<std::unique_ptr<SqliteRealmStore>> Open(const std::string& path,
                                                        Options options);
  static Result<std::unique_ptr<SqliteRealmStore>> Open(
      const std::string& path) {
    return Open(path, Options());
  }
  ~SqliteRealmStore() override;

  Status Create(std::string_view key, std::string_view kind,
                const realm::RealmSnapshot& genesis) override;
  Status Append(std::span<const realm::RealmAppend> entries) override;
  Status PutSnapshot(std::string_view key, const realm::RealmSnapshot& snapshot,
                     int64_t log_window) override;
  Result<std::optional<realm::LoadedRealm>> Load(std::string_view key) override;
  Result<std::vector<realm::LoggedCommit>> ReadLog(std::string_view key,
                                                   int64_t epoch, int64_t after,
                                                   size_t limit) override;
  Status StartEpoch(std::string_view key,
                    const realm::RealmSnapshot& first) override;
  Status Drop(std::string_view key) override;
  Result<std::vector<std::string>> List(std::string_view kind) override;
  Result<std::vector<realm::StoredAlarm>> ListAlarms() override;

  const std::string& path() const { return path_; }

 private:
  // A realm's row.
  struct Head {
    std::string kind;
    int64_t epoch = 0;
    int64_t version = 0;
  };

  SqliteRealmStore(std::unique_ptr<SqliteDb> db,
                   std::unique_ptr<RealmStatements> statements,
                   Options options);
  int64_t NowMs() const { return options_.wall_clock->UnixNowMs(); }

  // The realm's row; nullopt when there is none. Errors: kIo.
  Result<std::optional<Head>> ReadHead(std::string_view key)
      EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The realm's row, or kNotFound naming `what`.
  Result<Head> RequireHead(std::string_view key, std::string_view what)
      EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The newest snapshot's version in `epoch` (nullopt: none). Errors: kIo.
  Result<std::optional<int64_t>> NewestSnapshotVersion(std::string_view key,
                                                       int64_t epoch)
      EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Status InsertSnapshot(std::string_view key,
                        const realm::RealmSnapshot& snapshot)
      EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Status SetHead(std::string_view key, int64_t epoch, int64_t version,
                 int64_t now_ms) EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The alarm changes of one entry of Append, inside its transaction.
  Status WriteAlarms(const realm::RealmAppend& entry)
      EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // One entry of Append, inside its transaction.
  Status AppendLocked(const realm::RealmAppend& entry, int64_t now_ms)
      EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Deletes the realm's log and snapshots (every epoch).
  Status DeleteHistory(std::string_view key) EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  const std::string path_;
  std::mutex mu_;
  // Declared before the statements, hence destroyed after them.
  const std::unique_ptr<SqliteDb> db_ GUARDED_BY(mu_);
  const std::unique_ptr<RealmStatements> stmts_ GUARDED_BY(mu_);
};

}  // namespace tessera::store

#endif  // TESSERA_STORE_SQLITE_REALM_STORE_H_
