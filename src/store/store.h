// Durable storage of the shard directory, saved states and the transfer
// journal. Two backends with the same semantics and errors (the suites of
// store_conformance.h): SQLite (WAL, sqlite_store.h), the embedded default,
// and PostgreSQL (postgres/pg_store.h); OpenStore opens either by URL, and
// so do OpenComputeStore, OpenDataStore and OpenRealmStore for the other
// stores.
//
// Thread-safety: every method may be called from any thread, concurrently.
#ifndef TESSERA_STORE_STORE_H_
#define TESSERA_STORE_STORE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/epoch_source.h"
#include "cluster/machine_store.h"
#include "common/status.h"
#include "compute/compute_store.h"
#include "data/data_store.h"
#include "realm/realm_store.h"
#include "shard/state_store.h"
#include "shard/transfer_journal.h"

namespace tessera::store {

// One shard of the directory: what it takes to start it again.
struct ShardRecord {
  std::string id;
  std::string kind;
  std::string params;  // bytes in the kind's codec, as created
  std::string status;  // "running", "failed" (refused its state, see error)
  std::string error;   // why it is not running, if it is not
  int64_t created_unix_ms = 0;
  int64_t updated_unix_ms = 0;
};

// The shard directory plus, through shard::StateStore, saved states. Save,
// Load and Forget work for any id, whether or not it has a record. Through
// shard::TransferJournal, the journal of moves between shards, whose
// transactions replace saved states in the same commit.
class Store : public shard::StateStore, public shard::TransferJournal {
 public:
  // Inserts or replaces the record with this id. Zero timestamps are
  // filled in with the current time. Errors: kIo.
  virtual Status PutShard(const ShardRecord& record) = 0;
  // Updates status and error (and the updated time) of an existing record.
  // Errors: kNotFound, kIo.
  virtual Status SetShardStatus(std::string_view id, std::string_view status,
                                std::string_view error) = 0;
  // Removes the record and its saved state, atomically (a no-op when
  // absent). Errors: kIo.
  virtual Status DeleteShard(std::string_view id) = 0;
  // Every record, oldest first. Errors: kIo.
  virtual Result<std::vector<ShardRecord>> ListShards() = 0;

  // From now on every save (Save, and the saves of the journal's
  // transactions) is made only while `source`'s machine holds its current
  // epoch in the database (docs/cluster.md): not 0, still on the machine's
  // row, not left, heard from within `dead_after_ms`; the row is read with
  // a shared lock, so a takeover of the id waits for a save in flight.
  // Otherwise the save is refused with kFailedPrecondition and nothing is
  // written. `source` must outlive the store. A no-op for SQLite (one
  // machine, no cluster); PostgreSQL only, once the machine has joined.
  virtual void GuardSaves(const cluster::EpochSource* source,
                          int64_t dead_after_ms) {
    (void)source;
    (void)dead_after_ms;
  }
};

// Opens (creating it and its parent directories if needed) the store named
// by `url`; the caller owns the result:
//   "sqlite:PATH", "sqlite://PATH" or a plain file path -> SQLite in WAL
//   mode with synchronous=FULL: every write that returned OK survives
//   kill -9 and power loss (see sqlite_store.h). "sqlite::memory:" is a
//   private in-memory store for tests.
//   "postgres://..." / "postgresql://..." (libpq's URI form) -> PostgreSQL
//   (postgres/pg_store.h), its tables created if missing. Each store opens
//   a connection of its own (the data store a writer and a pool of
//   readers); they share the database, every tessera table in it.
// Errors: kIo with SQLite's message and the path, or with the server's (an
// unreachable or refusing database: "database postgres://u:***@host/db:
// postgres: cannot connect: ...", never the password);
// kFailedPrecondition for a file or database written by a newer tessera
// (schema version) or a foreign SQLite database; kInvalidArgument for an
// unknown scheme, an empty path or a malformed postgres URL.
Result<std::unique_ptr<Store>> OpenStore(const std::string& url);

// Opens the compute modules' records (compute/compute_store.h) in the store
// named by `url`, with the same URL forms and errors as OpenStore: for
// SQLite, a connection of its own to the same file (sqlite_compute_store.h;
// open it beside OpenStore's, both migrate the one schema). Note that
// "sqlite::memory:" is a private database per connection, so there the two
// stores share nothing.
Result<std::unique_ptr<compute::ComputeStore>> OpenComputeStore(
    const std::string& url);

// Opens the app's data (data/data_store.h) for the store named by `url`,
// with the same URL forms and errors as OpenStore (PostgreSQL:
// postgres/pg_data_store.h, tables "data_<Type>" beside the others). For
// SQLite the data has
// a file of its own beside the store's, DataFilePath(path) (one writer,
// readers; sqlite_data_store.h): a function's data transaction holds that
// file's write lock for the whole call, and must not block what the call
// itself does to the shard directory, the saves or the compute records
// (shards.create records the shard while the call's transaction is open).
// The data's system tables come from the one schema (migration 4), one
// table per entity type ("data_<Type>") from ApplySchema.
Result<std::unique_ptr<data::DataStore>> OpenDataStore(const std::string& url);

// The app data's SQLite file for a store file: "<stem>-data<ext>" in the
// same directory (".tessera/tessera.db" -> ".tessera/tessera-data.db");
// ":memory:" stays ":memory:".
std::string DataFilePath(const std::string& store_path);

// Opens the realms' patch logs and snapshots (realm/realm_store.h) for the
// store named by `url`, with the same URL forms and errors as OpenStore.
// For SQLite the realms have a file of their own beside the store's,
// RealmFilePath(path) (sqlite_realm_store.h), so a realm's commit burst
// (one fsync per group commit) never waits behind shard saves or a
// function's data transaction. Tables from the one schema (migration 5).
// "sqlite::memory:" is a private in-memory database.
Result<std::unique_ptr<realm::RealmStore>> OpenRealmStore(
    const std::string& url);

// Opens the cluster's machines table (cluster/machine_store.h,
// postgres/pg_machine_store.h) in the postgres:// database `url`, on a
// connection of its own, judging a machine dead after `dead_after_ms` of
// silence. Errors: kFailedPrecondition for a SQLite URL (a cluster needs
// PostgreSQL); otherwise as OpenStore.
Result<std::unique_ptr<cluster::MachineStore>> OpenMachineStore(
    const std::string& url, int64_t dead_after_ms = 10'000);

// The realms' SQLite file for a store file: "<stem>-realms<ext>" in the
// same directory (".tessera/tessera.db" -> ".tessera/tessera-realms.db");
// ":memory:" stays ":memory:".
std::string RealmFilePath(const std::string& store_path);

}  // namespace tessera::store

#endif  // TESSERA_STORE_STORE_H_
