// The store's schema and its migrations.
//
// Version history lives in the table `schema_version(version, applied_ms)`,
// one row per applied migration; the schema's version is the largest.
//   1: shards(id, kind, params, status, error, created_ms, updated_ms) and
//      saves(shard_id, state, saved_ms).
//   2: transfers(id, from_shard, to_shard, subscriber, claims, state, step,
//      created_ms, updated_ms), the transfer journal (shard/
//      transfer_journal.h; `step` is TransferStep's value), with the index
//      transfers_by_source(from_shard, subscriber, step) for the
//      one-kOut-row check and a restoring source's lookup.
//
// `saves` has no foreign key to `shards`: a state may be saved for a shard
// that has no directory record (`tessera run`, tests, a server racing a
// DeleteShard), and inventing a record for it would make a restart try to
// start a shard nobody created. DeleteShard removes both rows in one
// transaction instead.
#ifndef TESSERA_STORE_SCHEMA_H_
#define TESSERA_STORE_SCHEMA_H_

#include <cstdint>

#include "common/status.h"
#include "store/sqlite_db.h"

namespace tessera::store {

// The schema version this build writes.
inline constexpr int64_t kSchemaVersion = 2;

// Brings the database to kSchemaVersion inside one write transaction, so two
// processes opening the same new file cannot both migrate it.
// Errors: kFailedPrecondition when the file was written by a newer schema
// version, or is an SQLite database that is not a tessera store; kIo.
Status MigrateSchema(SqliteDb& db, int64_t now_unix_ms);

}  // namespace tessera::store

#endif  // TESSERA_STORE_SCHEMA_H_
