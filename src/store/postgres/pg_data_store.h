// data::DataStore on PostgreSQL (data/data_store.h): the app's data with
// store::SqliteDataStore's semantics and errors (the conformance suite
// data/data_store_conformance.h runs against both), in the tables of
// pg_data_sql.h: the system tables created (idempotently, under the shared
// advisory lock) at Open, one real table per entity type by ApplySchema.
//
// Connections: one writer connection behind an in-process gate (a flag, as
// in SqliteDataStore: a transaction may end on another thread, and a
// thread asking again while it holds the writer times out). A write
// DataTxn holds the gate from Begin to its end and, in the database, the
// transaction-scoped advisory lock kDataWriterLock, taken by BEGIN (READ
// COMMITTED) with lock_timeout = busy_timeout_ms: write transactions of
// every connection and process run one at a time, as SQLite's BEGIN
// IMMEDIATE makes them, so each one reads everything committed before it
// and checks made before a write (a row id or a unique value taken) stay
// true until its commit; another process holding the lock past the
// timeout makes Begin UNAVAILABLE. Read transactions take a reader
// connection of a small pool (a new one is opened when all are busy) and
// run REPEATABLE READ, READ ONLY, with the snapshot taken at Begin: they
// never wait for the writer and never see its uncommitted work. Nested
// scopes are SAVEPOINTs.
//
// Errors inside a transaction: PostgreSQL aborts a transaction at any
// failed statement, SQLite only the statement. So the transaction checks
// before it writes what SQLite lets a statement refuse (an existing id: an
// INSERT ... ON CONFLICT DO NOTHING that inserted nothing; a unique value
// taken: looked up before an UPDATE; a stored call key), and gives ids,
// cursors and strings no bytes PostgreSQL's text refuses (data_sql.h,
// pg_data_sql.h): the refusals of the contract leave the transaction
// usable on both backends. A statement that still fails (the server's
// error, a lost connection) breaks the transaction, or only its innermost
// scope when one is open (RollbackTo recovers it, as ROLLBACK TO
// SAVEPOINT does in PostgreSQL).
//
// Durability: the server's (synchronous_commit as configured; on by
// default, so a Commit that returned OK survives kill -9 of this process
// and of the server); a transaction cut short by a crash of this process
// is rolled back by the server when the connection drops. Every row
// change writes its data_changes row in the same transaction (seq from an
// identity column, in commit order since writers are serialised), and
// keyed calls' outcomes commit with the writes they describe.
//
// Threading: every method may be called from any thread. A DataTxn is
// used by one thread at a time and must be destroyed before the store.
#ifndef TESSERA_STORE_POSTGRES_PG_DATA_STORE_H_
#define TESSERA_STORE_POSTGRES_PG_DATA_STORE_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "common/thread_annotations.h"
#include "data/data_store.h"
#include "store/data_connections.h"
#include "store/postgres/pg_conn.h"

namespace tessera::store {

class PgDataStore final : public data::DataStore {
 public:
  struct Options {
    // Timestamps of rows, changes and calls; null: RealWallClock. Not
    // owned; must outlive the store.
    const WallClock* wall_clock = nullptr;
    // How long a write transaction waits for another connection's (or
    // process's) writer lock.
    int busy_timeout_ms = 5000;
    // Idle reader connections kept open.
    int idle_readers = 4;
  };

  // Connects to `url` (postgres:// or postgresql://), creates the system
  // tables if missing and reads the applied data schema. Errors:
  // kInvalidArgument (not a postgres URL, a malformed one), kIo
  // (unreachable, refused), kFailedPrecondition (a newer version of the
  // tables, an unreadable applied data schema).
  static Result<std::unique_ptr<PgDataStore>> Open(const std::string& url,
                                                   Options options);
  static Result<std::unique_ptr<PgDataStore>> Open(const std::string& url) {
    return Open(url, Options());
  }
  ~PgDataStore() override;

  Status ApplySchema(const data::DataSchema& schema) override;
  data::DataSchema schema() const override;
  Result<std::unique_ptr<data::DataTxn>> Begin(data::TxnMode mode,
                                               int64_t wait_ms) override;
  Result<std::vector<data::ChangeEvent>> Changes(int64_t after_seq,
                                                 int64_t limit) override;
  Status Prune(int64_t now_ms) override;

 private:
  PgDataStore(std::string url, Options options,
              std::unique_ptr<pg::PgConn> writer,
              std::shared_ptr<const data::DataSchema> schema);
  // BEGIN on the writer with the writer lock. Errors: kUnavailable when
  // another connection holds it past busy_timeout_ms; kIo.
  Status BeginWriterTxn(std::string_view what);
  int64_t NowMs() const { return options_.wall_clock->UnixNowMs(); }
  std::shared_ptr<const data::DataSchema> CurrentSchema() const;
  // ApplySchema's body, in the writer's open transaction.
  Status ApplyLocked(const data::DataSchema& next);

  const Options options_;
  const std::string url_;

  WriterGate gate_;
  std::unique_ptr<pg::PgConn> writer_;  // used only by the gate's holder

  mutable std::mutex mu_;
  std::shared_ptr<const data::DataSchema> schema_ GUARDED_BY(mu_);
  ReaderPool<pg::PgConn> readers_;
};

// PgDataStore::Open as a data::DataStore (what OpenDataStore answers for
// postgres:// URLs).
Result<std::unique_ptr<data::DataStore>> OpenPgDataStore(
    const std::string& url, PgDataStore::Options options = {});

}  // namespace tessera::store

#endif  // TESSERA_STORE_POSTGRES_PG_DATA_STORE_H_
