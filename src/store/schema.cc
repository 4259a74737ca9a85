#include "store/schema.h"

#include <string>

namespace tessera::store {
namespace {

struct Migration {
  int64_t version;
  const char* sql;
};

// Append only: a released migration is never edited.
constexpr Migration kMigrations[] = {
    {1, R"sql(
      CREATE TABLE shards(
        id TEXT PRIMARY KEY NOT NULL,
        kind TEXT NOT NULL,
        params BLOB NOT NULL,
        status TEXT NOT NULL,
        error TEXT NOT NULL,
        created_ms INTEGER NOT NULL,
        updated_ms INTEGER NOT NULL);
      CREATE TABLE saves(
        shard_id TEXT PRIMARY KEY NOT NULL,
        state BLOB NOT NULL,
        saved_ms INTEGER NOT NULL);
    )sql"},
    {2, R"sql(
      CREATE TABLE transfers(
        id TEXT PRIMARY KEY NOT NULL,
        from_shard TEXT NOT NULL,
        to_shard TEXT NOT NULL,
        subscriber TEXT NOT NULL,
        claims TEXT NOT NULL,
        state BLOB NOT NULL,
        step INTEGER NOT NULL,
        created_ms INTEGER NOT NULL,
        updated_ms INTEGER NOT NULL);
      CREATE INDEX transfers_by_source
        ON transfers(from_shard, subscriber, step);
    )sql"},
};
static_assert(sizeof(kMigrations) / sizeof(kMigrations[0]) == kSchemaVersion,
              "one migration per schema version");

Status FailedPrecondition(std::string message) {
  return Status(StatusCode::kFailedPrecondition, std::move(message));
}

Result<int64_t> QueryInt(SqliteDb& db, const char* sql, const char* what) {
  Result<std::unique_ptr<SqliteStatement>> stmt = db.Prepare(sql);
  if (!stmt.ok()) return stmt.status();
  ScopedReset reset(**stmt);
  Result<bool> row = (*stmt)->Step(what);
  if (!row.ok()) return row.status();
  return *row ? (*stmt)->ColumnInt64(0) : 0;
}

Status MigrateLocked(SqliteDb& db, int64_t now_unix_ms) {
  Result<int64_t> has_version_table =
      QueryInt(db,
               "SELECT count(*) FROM sqlite_master "
               "WHERE type = 'table' AND name = 'schema_version'",
               "read schema");
  if (!has_version_table.ok()) return has_version_table.status();
  if (*has_version_table == 0) {
    Result<int64_t> other_tables = QueryInt(
        db,
        "SELECT count(*) FROM sqlite_master "
        "WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'",
        "read schema");
    if (!other_tables.ok()) return other_tables.status();
    if (*other_tables > 0) {
      return FailedPrecondition(
          "sqlite store " + db.path() +
          ": this SQLite database is not a tessera store (it has tables but "
          "no schema_version); refusing to modify it");
    }
    TESSERA_RETURN_IF_ERROR(
        db.Exec("CREATE TABLE schema_version("
                "version INTEGER PRIMARY KEY NOT NULL, "
                "applied_ms INTEGER NOT NULL)",
                "create schema_version"));
  }

  Result<int64_t> current =
      QueryInt(db, "SELECT coalesce(max(version), 0) FROM schema_version",
               "read schema version");
  if (!current.ok()) return current.status();
  if (*current > kSchemaVersion) {
    return FailedPrecondition(
        "sqlite store " + db.path() + " has schema version " +
        std::to_string(*current) + ", newer than this tessera supports (" +
        std::to_string(kSchemaVersion) +
        "): it was written by a newer release; upgrade tessera or use "
        "another store");
  }

  Result<std::unique_ptr<SqliteStatement>> record = db.Prepare(
      "INSERT INTO schema_version(version, applied_ms) VALUES(?1, ?2)");
  if (!record.ok()) return record.status();
  for (const Migration& m : kMigrations) {
    if (m.version <= *current) continue;
    std::string what = "migrate to schema version " + std::to_string(m.version);
    TESSERA_RETURN_IF_ERROR(db.Exec(m.sql, what));
    ScopedReset reset(**record);
    TESSERA_RETURN_IF_ERROR((*record)->BindInt64(1, m.version));
    TESSERA_RETURN_IF_ERROR((*record)->BindInt64(2, now_unix_ms));
    TESSERA_RETURN_IF_ERROR((*record)->Run(what));
  }
  return Status::Ok();
}

}  // namespace

Status MigrateSchema(SqliteDb& db, int64_t now_unix_ms) {
  // IMMEDIATE takes the write lock up front (waiting up to busy_timeout), so
  // the version read below cannot go stale before the migration commits.
  TESSERA_RETURN_IF_ERROR(db.Exec("BEGIN IMMEDIATE", "begin migration"));
  Status st = MigrateLocked(db, now_unix_ms);
  if (st.ok()) st = db.Exec("COMMIT", "commit migration");
  if (!st.ok() && !db.autocommit()) {
    (void)db.Exec("ROLLBACK", "roll back migration");
  }
  return st;
}

}  // namespace tessera::store
