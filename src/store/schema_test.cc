#include "store/schema.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <string>

#include "store/sqlite_store.h"
#include "store/test_util.h"

namespace tessera::store {
namespace {

using testing::ScratchDir;

// Runs `sql` on its own connection; returns the first column of the last
// row as text ("" when none).
std::string RawSql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  std::string result;
  char* error = nullptr;
  int rc = sqlite3_exec(
      db, sql.c_str(),
      [](void* out, int columns, char** values, char**) {
        if (columns > 0 && values[0] != nullptr) {
          *static_cast<std::string*>(out) = values[0];
        }
        return 0;
      },
      &result, &error);
  EXPECT_EQ(rc, SQLITE_OK) << sql << ": " << (error ? error : "");
  sqlite3_free(error);
  sqlite3_close(db);
  return result;
}

TEST(SchemaTest, NewStoreIsAtTheCurrentVersionInWalMode) {
  ScratchDir dir;
  std::string path = dir.File("s.db");
  ASSERT_TRUE(SqliteStore::Open(path).ok());
  EXPECT_EQ(RawSql(path, "SELECT max(version) FROM schema_version"),
            std::to_string(kSchemaVersion));
  EXPECT_EQ(RawSql(path, "PRAGMA journal_mode"), "wal");
  // Reopening applies nothing twice.
  ASSERT_TRUE(SqliteStore::Open(path).ok());
  EXPECT_EQ(RawSql(path, "SELECT count(*) FROM schema_version"),
            std::to_string(kSchemaVersion));
}

TEST(SchemaTest, NewerSchemaIsRefused) {
  ScratchDir dir;
  std::string path = dir.File("s.db");
  ASSERT_TRUE(SqliteStore::Open(path).ok());
  RawSql(path, "INSERT INTO schema_version VALUES(99, 0)");

  Result<std::unique_ptr<SqliteStore>> store = SqliteStore::Open(path);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kFailedPrecondition);
  const std::string& msg = store.status().message();
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
  EXPECT_NE(msg.find("schema version 99"), std::string::npos) << msg;
  EXPECT_NE(msg.find("newer"), std::string::npos) << msg;
  // Nothing was changed.
  EXPECT_EQ(RawSql(path, "SELECT max(version) FROM schema_version"), "99");
}

TEST(SchemaTest, ForeignDatabaseIsRefusedAndLeftAlone) {
  ScratchDir dir;
  std::string path = dir.File("other.db");
  RawSql(path, "CREATE TABLE accounts(id INTEGER)");

  Result<std::unique_ptr<SqliteStore>> store = SqliteStore::Open(path);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(store.status().message().find("not a tessera store"),
            std::string::npos)
      << store.status().message();
  EXPECT_EQ(
      RawSql(path, "SELECT count(*) FROM sqlite_master WHERE type = 'table'"),
      "1");
}

// A file as the schema-1 release wrote it (its migration, byte for byte,
// with a directory record and a save) gains the transfer journal and the
// compute tables and keeps its data.
TEST(SchemaTest, Version1StoreMigratesToTheJournal) {
  ScratchDir dir;
  std::string path = dir.File("v1.db");
  RawSql(path,
         "PRAGMA journal_mode = WAL;"
         "BEGIN IMMEDIATE;"
         "CREATE TABLE schema_version(version INTEGER PRIMARY KEY NOT NULL, "
         "applied_ms INTEGER NOT NULL);"
         "CREATE TABLE shards(id TEXT PRIMARY KEY NOT NULL, kind TEXT NOT "
         "NULL, params BLOB NOT NULL, status TEXT NOT NULL, error TEXT NOT "
         "NULL, created_ms INTEGER NOT NULL, updated_ms INTEGER NOT NULL);"
         "CREATE TABLE saves(shard_id TEXT PRIMARY KEY NOT NULL, state BLOB "
         "NOT NULL, saved_ms INTEGER NOT NULL);"
         "INSERT INTO schema_version VALUES(1, 1000);"
         "INSERT INTO shards VALUES('a', 'arena', x'81a16e01', 'running', '', "
         "10, 20);"
         "INSERT INTO saves VALUES('a', x'00ff00', 30);"
         "COMMIT;");
  ASSERT_EQ(RawSql(path, "SELECT max(version) FROM schema_version"), "1");

  {
    Result<std::unique_ptr<SqliteStore>> store = SqliteStore::Open(path);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    Result<std::vector<ShardRecord>> list = (*store)->ListShards();
    ASSERT_TRUE(list.ok());
    ASSERT_EQ(list->size(), 1u);
    EXPECT_EQ((*list)[0].kind, "arena");
    EXPECT_EQ((*list)[0].params, std::string("\x81\xa1n\x01", 4));
    Result<std::optional<std::string>> state = (*store)->Load("a");
    ASSERT_TRUE(state.ok());
    EXPECT_EQ(*state, std::optional<std::string>(std::string("\0\xff\0", 3)));

    shard::TransferRecord r;
    r.id = "m1";
    r.from_shard = "a";
    r.to_shard = "b";
    r.subscriber = "p";
    std::vector<shard::TransferRecord> records = {r};
    ASSERT_TRUE((*store)->BeginTransfers(records, "a", "a without p").ok());
    Result<std::vector<shard::TransferRecord>> rows = (*store)->ListTransfers();
    ASSERT_TRUE(rows.ok()) << rows.status().ToString();
    ASSERT_EQ(rows->size(), 1u);
    EXPECT_EQ((*rows)[0].step, shard::TransferStep::kOut);
  }
  EXPECT_EQ(RawSql(path, "SELECT group_concat(version) FROM schema_version"),
            "1,2,3,4,5,6");
  EXPECT_EQ(RawSql(path,
                   "SELECT count(*) FROM sqlite_master WHERE type = 'table' "
                   "AND name LIKE 'compute\\_%' ESCAPE '\\'"),
            "9");
  EXPECT_EQ(RawSql(path,
                   "SELECT count(*) FROM sqlite_master WHERE type = 'table' "
                   "AND name LIKE 'data\\_%' ESCAPE '\\'"),
            "3");
  EXPECT_EQ(RawSql(path,
                   "SELECT count(*) FROM sqlite_master WHERE type = 'index' "
                   "AND name = 'transfers_by_source' AND sql LIKE "
                   "'%(from_shard, subscriber, step)%'"),
            "1");
  EXPECT_EQ(RawSql(path, "SELECT count(*) FROM transfers"), "1");
  EXPECT_EQ(RawSql(path, "SELECT state FROM saves WHERE shard_id = 'a'"),
            "a without p");
}

// A version-3 file (made by turning a fresh one back: the tables and
// columns of migrations 4 and 5 dropped, their version rows deleted) with
// a module and a trigger gains the data tables and the trigger filter
// columns, the trigger reading '' in each.
TEST(SchemaTest, Version3StoreMigratesToTheDataTables) {
  ScratchDir dir;
  std::string path = dir.File("v3.db");
  ASSERT_TRUE(SqliteStore::Open(path).ok());
  RawSql(path,
         "BEGIN IMMEDIATE;"
         "DROP TABLE data_schema; DROP TABLE data_changes; "
         "DROP TABLE data_calls;"
         "ALTER TABLE compute_triggers DROP COLUMN entity_type;"
         "ALTER TABLE compute_triggers DROP COLUMN field_name;"
         "ALTER TABLE compute_triggers DROP COLUMN function_name;"
         "DROP TABLE realms; DROP TABLE realm_log; DROP TABLE realm_snapshots;"
         "DROP TABLE realm_alarms;"
         "DELETE FROM schema_version WHERE version >= 4;"
         "INSERT INTO compute_modules VALUES(1, 'shop', '', 1, 0, 1, "
         "'closed', 0, 0, '', 10, 10);"
         "INSERT INTO compute_triggers VALUES(1, 1, 'invoke:buy', 'invoke', "
         "0, '', '', 0, 'buy', 'public', '', 10, 10);"
         "COMMIT;");
  ASSERT_EQ(RawSql(path, "SELECT max(version) FROM schema_version"), "3");
  ASSERT_TRUE(SqliteStore::Open(path).ok());
  EXPECT_EQ(RawSql(path, "SELECT group_concat(version) FROM schema_version"),
            "1,2,3,4,5,6");
  EXPECT_EQ(RawSql(path,
                   "SELECT trigger_key || '|' || entity_type || '|' || "
                   "field_name || '|' || function_name FROM compute_triggers"),
            "invoke:buy|||");
  // The new tables take rows; data_changes' seq never goes back.
  RawSql(path,
         "INSERT INTO data_changes(ts_ms, op, type, row_id, row_json, "
         "fields_json, origin) VALUES(1, 'created', 'T', 'a', '{}', '[]', "
         "'admin');"
         "DELETE FROM data_changes;"
         "INSERT INTO data_changes(ts_ms, op, type, row_id, row_json, "
         "fields_json, origin) VALUES(2, 'created', 'T', 'b', '{}', '[]', "
         "'admin');"
         "INSERT INTO data_calls VALUES('k', 'm.f', 'h', 1, 'null', '', 3);"
         "INSERT INTO data_schema VALUES(1, '{\"types\":[]}', 4);");
  EXPECT_EQ(RawSql(path, "SELECT seq FROM data_changes"), "2");
  EXPECT_EQ(RawSql(path,
                   "SELECT count(*) FROM sqlite_master WHERE type = 'index' "
                   "AND name IN ('data_changes_by_time', "
                   "'data_calls_by_time')"),
            "2");
}

// A version-5 file (migration 6's table dropped) with a realm gains the
// realm alarms table and keeps the realm; an alarm is keyed by (key, name).
TEST(SchemaTest, Version5StoreMigratesToTheRealmAlarms) {
  ScratchDir dir;
  std::string path = dir.File("v5.db");
  ASSERT_TRUE(SqliteStore::Open(path).ok());
  RawSql(path,
         "BEGIN IMMEDIATE;"
         "DROP TABLE realm_alarms;"
         "DELETE FROM schema_version WHERE version = 6;"
         "INSERT INTO realms VALUES('match/m1', 'match', 1, 0, 1, 1);"
         "COMMIT;");
  ASSERT_EQ(RawSql(path, "SELECT max(version) FROM schema_version"), "5");
  ASSERT_TRUE(SqliteStore::Open(path).ok());
  EXPECT_EQ(RawSql(path, "SELECT max(version) FROM schema_version"), "6");
  EXPECT_EQ(RawSql(path, "SELECT key FROM realms"), "match/m1");
  RawSql(
      path,
      "INSERT INTO realm_alarms VALUES('match/m1', 'turn', 5, 0);"
      "INSERT OR IGNORE INTO realm_alarms VALUES('match/m1', 'turn', 9, 1);");
  EXPECT_EQ(RawSql(path, "SELECT due_ms FROM realm_alarms"), "5");
}

// A version-4 file (a fresh one turned back: migration 5's tables
// dropped, its version row deleted) with a shard's save gains the realm
// tables and keeps the save; the realm log's key is (key, epoch, version).
TEST(SchemaTest, Version4StoreMigratesToTheRealmTables) {
  ScratchDir dir;
  std::string path = dir.File("v4.db");
  ASSERT_TRUE(SqliteStore::Open(path).ok());
  RawSql(path,
         "BEGIN IMMEDIATE;"
         "DROP TABLE realms; DROP TABLE realm_log; DROP TABLE realm_snapshots;"
         "DROP TABLE realm_alarms;"
         "DELETE FROM schema_version WHERE version >= 5;"
         "INSERT INTO saves VALUES('a', 'kept', 1);"
         "COMMIT;");
  ASSERT_EQ(RawSql(path, "SELECT max(version) FROM schema_version"), "4");
  ASSERT_TRUE(SqliteStore::Open(path).ok());
  EXPECT_EQ(RawSql(path, "SELECT max(version) FROM schema_version"), "6");
  EXPECT_EQ(RawSql(path, "SELECT state FROM saves WHERE shard_id = 'a'"),
            "kept");
  EXPECT_EQ(RawSql(path,
                   "SELECT group_concat(name, ',') FROM (SELECT name FROM "
                   "sqlite_master WHERE type = 'table' AND name LIKE "
                   "'realm%' ORDER BY name)"),
            "realm_alarms,realm_log,realm_snapshots,realms");
  EXPECT_EQ(RawSql(path,
                   "SELECT group_concat(name, ',') FROM (SELECT name FROM "
                   "pragma_table_info('realm_log') WHERE pk > 0 ORDER BY pk)"),
            "key,epoch,version");
  RawSql(path,
         "INSERT INTO realm_log VALUES('r', 1, 1, x'00');"
         "INSERT OR IGNORE INTO realm_log VALUES('r', 1, 1, x'01');");
  EXPECT_EQ(RawSql(path, "SELECT hex(patch) FROM realm_log"), "00");
}

TEST(SchemaTest, EmptyExistingFileIsInitialised) {
  ScratchDir dir;
  std::string path = dir.File("empty.db");
  RawSql(path, "PRAGMA user_version");  // creates an empty database
  Result<std::unique_ptr<SqliteStore>> store = SqliteStore::Open(path);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ASSERT_TRUE((*store)->Save("s", "v").ok());
}

}  // namespace
}  // namespace tessera::store
