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
