// DataStore on SQLite (data/data_store.h): the app's data in the store
// file, beside the shard directory and the compute records. The system
// tables data_schema, data_changes and data_calls come from schema
// migration 4 (schema.h); each entity type is a real table "data_<Type>"
// (id TEXT PRIMARY KEY, created_ms, updated_ms, version, then "f_<field>"
// per field: string TEXT, int INTEGER, float REAL, bool INTEGER 0/1, json
// TEXT holding compact JSON) with one SQLite index per declared index
// (UNIQUE for unique ones; the owner field's is non-unique), made by
// ApplySchema.
//
// Connections: one writer connection behind a timed mutex; a write DataTxn
// holds that mutex from Begin to Commit / rollback (BEGIN IMMEDIATE, so
// another process writing the file is waited for up to busy_timeout_ms
// too). Read transactions take a reader connection of a small pool (a new
// one is opened when all are busy) and run in a deferred transaction whose
// snapshot is taken at Begin: they never wait for the writer and never see
// its uncommitted work (WAL). Nested scopes are SAVEPOINTs.
//
// Durability: WAL with synchronous=FULL (like SqliteStore): a Commit that
// returned OK survives kill -9 and power loss; a transaction cut short by a
// crash is rolled back on the next open (sqlite_data_crash_test). Every
// row change writes its data_changes row in the same transaction, and
// keyed calls' outcomes (data_calls) commit with the writes they describe.
//
// ":memory:" (store URL "sqlite::memory:") is a private temporary database
// file (in the system temp directory, removed when the store is
// destroyed), because SQLite memory databases cannot be shared between the
// writer and reader connections.
//
// Values are compiled into SQL as bound parameters only; identifiers come
// from the applied schema (names ParseDataSchema checked, quoted).
//
// Threading: every method may be called from any thread. A DataTxn is used
// by one thread at a time and must be destroyed before the store.
#ifndef TESSERA_STORE_SQLITE_DATA_STORE_H_
#define TESSERA_STORE_SQLITE_DATA_STORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "common/thread_annotations.h"
#include "data/data_store.h"
#include "store/data_connections.h"

namespace tessera::store {

struct DataConn;  // sqlite_data_sql.h

class SqliteDataStore final : public data::DataStore {
 public:
  struct Options {
    // Timestamps of rows, changes and calls; null: RealWallClock. Not
    // owned; must outlive the store.
    const WallClock* wall_clock = nullptr;
    // How long a connection waits for another process's lock.
    int busy_timeout_ms = 5000;
    // Idle reader connections kept open (more are opened on demand and
    // closed when returned beyond this number).
    int idle_readers = 4;
  };

  // Opens (creating it and its parent directories if needed) the database
  // at `path`, migrating the store schema and reading the applied data
  // schema. Errors: kInvalidArgument (empty path), kFailedPrecondition (a
  // newer schema, a foreign database, an unreadable applied data schema),
  // kIo.
  static Result<std::unique_ptr<SqliteDataStore>> Open(const std::string& path,
                                                       Options options);
  static Result<std::unique_ptr<SqliteDataStore>> Open(
      const std::string& path) {
    return Open(path, Options());
  }
  ~SqliteDataStore() override;

  Status ApplySchema(const data::DataSchema& schema) override;
  data::DataSchema schema() const override;
  Result<std::unique_ptr<data::DataTxn>> Begin(data::TxnMode mode,
                                               int64_t wait_ms) override;
  Result<std::vector<data::ChangeEvent>> Changes(int64_t after_seq,
                                                 int64_t limit) override;
  Status Prune(int64_t now_ms) override;

  // The database file (for ":memory:", the temporary one).
  const std::string& path() const { return path_; }

 private:
  SqliteDataStore(std::string path, bool temporary, Options options,
                  std::unique_ptr<DataConn> writer,
                  std::shared_ptr<const data::DataSchema> schema);
  int64_t NowMs() const { return options_.wall_clock->UnixNowMs(); }
  std::shared_ptr<const data::DataSchema> CurrentSchema() const;
  // ApplySchema's body, in the writer's open transaction.
  Status ApplyLocked(const data::DataSchema& next);  // the writer held

  const Options options_;
  const std::string path_;
  const bool temporary_;  // ":memory:": remove the file when destroyed

  // The writer: held by a write transaction from Begin to its end (and by
  // ApplySchema and Prune); `writer_` is used only by its holder.
  WriterGate gate_;
  std::unique_ptr<DataConn> writer_;

  mutable std::mutex mu_;
  std::shared_ptr<const data::DataSchema> schema_ GUARDED_BY(mu_);
  ReaderPool<DataConn> readers_;  // closed before the writer
};

}  // namespace tessera::store

#endif  // TESSERA_STORE_SQLITE_DATA_STORE_H_
