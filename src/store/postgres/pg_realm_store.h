// realm::RealmStore on PostgreSQL (realm/realm_store.h): the same rows and
// the same answers as store::SqliteRealmStore, in the tables of
// pg_realm_schema.h, created (idempotently, under an advisory lock) at
// Open.
//
// The fence: every write is one transaction that first reads the realm's
// row with SELECT ... FOR UPDATE, so writers of one realm queue on that row
// lock (other connections and processes included) and each checks the
// epoch and the head it then sees, the latest committed one. Append checks
// and writes all its entries in one transaction (group commit), the log
// rows of an entry in multi-row INSERTs; any error (a fence, a server
// error, a lost connection) rolls the whole group back. Create inserts
// with ON CONFLICT DO NOTHING, so two racing creators get one Ok and one
// kAlreadyExists. PutSnapshot drops, in its transaction, the older
// snapshots and the log entries with version <= snapshot.version -
// log_window.
//
// Reads: Load and ReadLog each run in one REPEATABLE READ, READ ONLY
// transaction, so the realm's row, its snapshot and its log agree while
// other connections write. Load reads the tail back checked: a log that is
// not consecutive after the snapshot up to head_version is kIo.
//
// Durability: the server's (synchronous_commit as configured; on by
// default, so an Ok has had its WAL record flushed).
//
// Threading: one connection behind `mu_`; every method may be called from
// any thread and holds it for the whole call. A connection found broken is
// reset before the next statement (pg_conn.h).
#ifndef TESSERA_STORE_POSTGRES_PG_REALM_STORE_H_
#define TESSERA_STORE_POSTGRES_PG_REALM_STORE_H_

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
#include "store/postgres/pg_conn.h"

namespace tessera::store {

class PgRealmStore final : public realm::RealmStore {
 public:
  struct Options {
    // The realms' created/updated times; null: RealWallClock. Not owned;
    // must outlive the store.
    const WallClock* wall_clock = nullptr;
  };

  // Connects to `url` (postgres:// or postgresql://) and creates the realm
  // tables if missing. Errors: kInvalidArgument (not a postgres URL, a
  // malformed one), kIo (unreachable, refused), kFailedPrecondition (a
  // newer version of the tables).
  static Result<std::unique_ptr<PgRealmStore>> Open(const std::string& url,
                                                    Options options);
  static Result<std::unique_ptr<PgRealmStore>> Open(const std::string& url) {
    return Open(url, Options());
  }
  ~PgRealmStore() override;

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

 private:
  // A realm's row.
  struct Head {
    std::string kind;
    int64_t epoch = 0;
    int64_t version = 0;
  };

  PgRealmStore(std::unique_ptr<pg::PgConn> conn, Options options);
  // "realm '<key>'", for messages.
  static std::string RealmNameOf(std::string_view key);
  int64_t NowMs() const { return options_.wall_clock->UnixNowMs(); }

  // The realm's row (locked until the transaction ends when `for_update`);
  // nullopt when there is none.
  Result<std::optional<Head>> ReadHead(std::string_view key, bool for_update)
      EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The realm's row locked for the transaction, or kNotFound naming `what`.
  Result<Head> LockHead(std::string_view key, std::string_view what)
      EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The newest snapshot's version in `epoch` (nullopt: none).
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
  // The log rows of one entry of Append, inside its transaction.
  Status InsertLog(const realm::RealmAppend& entry)
      EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // One entry of Append, inside its transaction.
  Status AppendLocked(const realm::RealmAppend& entry, int64_t now_ms)
      EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Deletes the realm's log and snapshots (every epoch).
  Status DeleteHistory(std::string_view key) EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  std::mutex mu_;
  const std::unique_ptr<pg::PgConn> conn_ GUARDED_BY(mu_);
};

}  // namespace tessera::store

#endif  // TESSERA_STORE_POSTGRES_PG_REALM_STORE_H_
