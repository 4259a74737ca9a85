// store::Store on PostgreSQL (store.h): the shard directory, saved states
// and the transfer journal with store::SqliteStore's semantics and errors,
// in the tables of pg_store_schema.h, created (idempotently, under an
// advisory lock) at Open. Every string is kept as bytes (bytea), so ids
// with any bytes work and order as on SQLite.
//
// Transactions: PutShard, SetShardStatus, Save and Forget are one
// statement each (an upsert, an update, a delete), atomic on their own;
// DeleteShard is one transaction (the record and its save). Each journal
// method is one transaction that first takes LOCK TABLE transfers IN SHARE
// ROW EXCLUSIVE MODE, a lock that conflicts with itself, so journal
// transactions of every connection and process run one at a time, as
// SQLite's BEGIN IMMEDIATE makes them: the checks (an existing id, a kOut
// row of the subscriber) see every committed row and no other writer can
// slip in between check and insert, and two Advances never deadlock on
// each other's rows. The transaction holds the rows and the `saves` write
// of the shard that changed, so it commits both or neither; any error (a
// refusal, a server error, a lost connection) rolls it back whole.
//
// Durability: the server's (synchronous_commit as configured; on by
// default, so an Ok has had its WAL record flushed).
//
// Threading: one connection behind `mu_`; every method may be called from
// any thread and holds it for the whole call. A connection found broken is
// reset before the next statement (pg_conn.h): the call that finds out
// fails with kIo, the next one runs on a new session.
#ifndef TESSERA_STORE_POSTGRES_PG_STORE_H_
#define TESSERA_STORE_POSTGRES_PG_STORE_H_

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
#include "store/postgres/pg_conn.h"
#include "store/store.h"

namespace tessera::store {

class PgStore final : public Store {
 public:
  struct Options {
    // Unix time of the created/updated/saved timestamps; null:
    // RealWallClock. Not owned; must outlive the store.
    const WallClock* wall_clock = nullptr;
  };

  // Connects to `url` (postgres:// or postgresql://) and creates the
  // store's tables if missing. Errors: kInvalidArgument (not a postgres
  // URL, a malformed one), kIo (unreachable, refused, with the server's
  // message), kFailedPrecondition (a newer version of the tables).
  static Result<std::unique_ptr<PgStore>> Open(const std::string& url,
                                               Options options);
  static Result<std::unique_ptr<PgStore>> Open(const std::string& url) {
    return Open(url, Options());
  }
  ~PgStore() override;

  // shard::StateStore. A state may be saved for an id with no ShardRecord.
  Status Save(std::string_view shard_id, std::string_view bytes) override;
  Result<std::optional<std::string>> Load(std::string_view shard_id) override;
  Status Forget(std::string_view shard_id) override;

  // Store. PutShard fills in zero timestamps from the clock.
  Status PutShard(const ShardRecord& record) override;
  Status SetShardStatus(std::string_view id, std::string_view status,
                        std::string_view error) override;
  Status DeleteShard(std::string_view id) override;
  // Ordered by creation time, then id (bytewise).
  Result<std::vector<ShardRecord>> ListShards() override;
  void GuardSaves(const cluster::EpochSource* source,
                  int64_t dead_after_ms) override;

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

 private:
  PgStore(std::unique_ptr<pg::PgConn> conn, Options options);
  int64_t NowMs() const { return options_.wall_clock->UnixNowMs(); }

  Status SaveLocked(std::string_view shard_id, std::string_view bytes,
                    int64_t now_ms) EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Runs `body` in a transaction holding the journal's table lock.
  Status InJournalTransaction(std::string_view what,
                              const std::function<Status()>& body)
      EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Checks then inserts one row, inside BeginTransfers' transaction.
  Status BeginTransferLocked(const shard::TransferRecord& record,
                             int64_t now_ms) EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // One compare-and-set, inside AdvanceTransfers' transaction.
  Status AdvanceTransferLocked(const shard::TransferAdvance& advance,
                               int64_t now_ms) EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  std::mutex mu_;
  const std::unique_ptr<pg::PgConn> conn_ GUARDED_BY(mu_);
  const cluster::EpochSource* guard_ GUARDED_BY(mu_) = nullptr;
  int64_t dead_after_ms_ GUARDED_BY(mu_) = 0;
};

// PgStore::Open as a store::Store (as OpenStore opens it for postgres://
// URLs).
Result<std::unique_ptr<Store>> OpenPgStore(const std::string& url,
                                           PgStore::Options options = {});

}  // namespace tessera::store

#endif  // TESSERA_STORE_POSTGRES_PG_STORE_H_
