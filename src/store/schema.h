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
//   3: compute modules (compute/compute_store.h, store/
//      sqlite_compute_store.h): compute_modules (name unique; ids never
//      reused: AUTOINCREMENT), compute_versions (module_id, version_no) with
//      compute_version_files (module_id, version_no, path, contents),
//      compute_triggers (UNIQUE(module_id, trigger_key), the key of
//      compute_store_rules.h), compute_policy (one row, id 1), compute_runs,
//      compute_usage (PRIMARY KEY(module_id, minute_ms)), compute_logs and
//      compute_state (module_id, bytes, revision). Versions, files,
//      triggers and state reference their module (ON DELETE CASCADE);
//      runs, usage and logs do not (a run may be recorded while its module
//      is deleted) and DeleteModule removes them in the same transaction.
//      Enums are stored by name ("rust", "pending", "half_open", "tick",
//      "probe"); indexes serve the newest-first lists by time, module and
//      flow id, the retention prunes and the artifact cache lookup.
//   4: the app's data (data/data_store.h, store/sqlite_data_store.h):
//      data_schema (one row, id 1: the applied DataSchemaJson),
//      data_changes (seq AUTOINCREMENT so a pruned seq is never reused; op
//      "created" | "updated" | "deleted", row_json, fields_json the
//      changed fields as [{"field","old","new"}], origin; indexed by ts_ms
//      for the retention prune), data_calls (key primary key: keyed
//      calls' stored outcomes; indexed by created_ms for the prune); and
//      compute_triggers gains the data event filters entity_type,
//      field_name and function_name (TEXT NOT NULL DEFAULT ''). The
//      entity types' own tables (data_<Type>) are not migrations: the data
//      store's ApplySchema makes them from the app's manifest.
//   5: realms (realm/realm_store.h, store/sqlite_realm_store.h): realms
//      (key primary key, kind, the current epoch, head_version, created /
//      updated ms; realms_by_kind(kind, key) for List), realm_log (key,
//      epoch, version, patch: one row per commit, PRIMARY KEY(key, epoch,
//      version), WITHOUT ROWID so a replay is one range scan of the key)
//      and realm_snapshots (key, epoch, version, schema_hash, state the
//      canonical JSON text; same primary key). No foreign keys: Drop and
//      StartEpoch delete a realm's rows in one transaction.
//
// `saves` has no foreign key to `shards`: a state may be saved for a shard
// that has no directory record (`tessera run`, tests, a server racing a
// DeleteShard), and inventing a record for it would make a restart try to
// start a shard nobody created. DeleteShard removes both rows in one
// transaction instead.
#ifndef TESSERA_STORE_SCHEMA_H_
#define TESSERA_STORE_SCHEMA_H_

#include <cstdint>
#include <memory>
#include <string>

#include "common/status.h"
#include "store/sqlite_db.h"

namespace tessera::store {

// The schema version this build writes.
inline constexpr int64_t kSchemaVersion = 6;

// Brings the database to kSchemaVersion inside one write transaction, so two
// processes opening the same new file cannot both migrate it.
// Errors: kFailedPrecondition when the file was written by a newer schema
// version, or is an SQLite database that is not a tessera store; kIo.
Status MigrateSchema(SqliteDb& db, int64_t now_unix_ms);

// Opens (creating it and its parent directories if needed) the database at
// `path` as every connection of a tessera store does: busy timeout, WAL
// (":memory:" keeps SQLite's memory journal), synchronous=FULL, foreign
// keys on, the log truncated to 64 MiB after a checkpoint, and the schema
// migrated. Errors: as MigrateSchema; kIo when WAL cannot be used.
Result<std::unique_ptr<SqliteDb>> OpenStoreDatabase(const std::string& path,
                                                    int busy_timeout_ms,
                                                    int64_t now_unix_ms);

}  // namespace tessera::store

#endif  // TESSERA_STORE_SCHEMA_H_
