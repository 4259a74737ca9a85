// The SQLite data store: the conformance suite, plus what only a durable,
// file-backed adapter has (reopening, the real tables, URL forms, another
// process's lock, sharing the file with the other stores).
#include "store/sqlite_data_store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "data/data_store_conformance.h"
#include "data/schema.h"
#include "store/sqlite_store.h"
#include "store/store.h"
#include "store/test_util.h"

namespace tessera::store {
namespace {

using data::DataStoreConformanceTest;
using data::TxnMode;
using testing::ScratchDir;

INSTANTIATE_TEST_SUITE_P(
    Sqlite, DataStoreConformanceTest,
    ::testing::Values(data::DataStoreBackend{
        "sqlite",
        [](const WallClock* clock) -> std::unique_ptr<data::DataStore> {
          SqliteDataStore::Options options;
          options.wall_clock = clock;
          Result<std::unique_ptr<SqliteDataStore>> store =
              SqliteDataStore::Open(":memory:", options);
          EXPECT_TRUE(store.ok()) << store.status().ToString();
          if (!store.ok()) return nullptr;
          return std::move(store).value();
        }}),
    data::DataStoreBackendName);

// The first column of the last row of `sql` on a connection of its own.
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

std::unique_ptr<SqliteDataStore> OpenOrDie(const std::string& path,
                                           SqliteDataStore::Options options) {
  Result<std::unique_ptr<SqliteDataStore>> store =
      SqliteDataStore::Open(path, options);
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  return store.ok() ? std::move(store).value() : nullptr;
}

TEST(SqliteDataStoreTest, ReopeningKeepsSchemaRowsChangesAndCalls) {
  ScratchDir dir;
  const std::string path = dir.File("app/data.db");
  const data::DataSchema schema = DataStoreConformanceTest::TestSchema();
  int64_t seq = 0;
  {
    std::unique_ptr<SqliteDataStore> store = OpenOrDie(path, {});
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->ApplySchema(schema).ok());
    Result<std::unique_ptr<data::DataTxn>> txn =
        store->Begin(TxnMode::kWrite, 1000);
    ASSERT_TRUE(txn.ok());
    ASSERT_TRUE(
        (*txn)->Insert("Character", "c1", R"({"name":"Ann"})", "admin").ok());
    ASSERT_TRUE(
        (*txn)->PutCall({"k1", "loot.grant", "h", true, "{}", "", 0}).ok());
    Result<std::vector<data::ChangeEvent>> events = (*txn)->Commit();
    ASSERT_TRUE(events.ok());
    seq = (*events)[0].seq;
  }
  std::unique_ptr<SqliteDataStore> store = OpenOrDie(path, {});
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(data::DataSchemaJson(store->schema()),
            data::DataSchemaJson(schema));
  Result<std::unique_ptr<data::DataTxn>> txn =
      store->Begin(TxnMode::kWrite, 1000);
  ASSERT_TRUE(txn.ok());
  Result<std::optional<data::Row>> row = (*txn)->Get("Character", "c1");
  ASSERT_TRUE(row.ok() && row->has_value());
  Result<std::optional<data::StoredCall>> call = (*txn)->GetCall("k1");
  ASSERT_TRUE(call.ok() && call->has_value());
  ASSERT_TRUE(
      (*txn)->Insert("Character", "c2", R"({"name":"Bob"})", "admin").ok());
  Result<std::vector<data::ChangeEvent>> events = (*txn)->Commit();
  ASSERT_TRUE(events.ok());
  EXPECT_GT((*events)[0].seq, seq);
  Result<std::vector<data::ChangeEvent>> all = store->Changes(0, 10);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 2u);
}

TEST(SqliteDataStoreTest, EntityTypesAreRealTablesWithIndexes) {
  ScratchDir dir;
  const std::string path = dir.File("data.db");
  std::unique_ptr<SqliteDataStore> store = OpenOrDie(path, {});
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->ApplySchema(DataStoreConformanceTest::TestSchema()).ok());
  EXPECT_EQ(RawSql(path,
                   "SELECT group_concat(name || ':' || type, ',') FROM "
                   "pragma_table_info('data_Character')"),
            "id:TEXT,created_ms:INTEGER,updated_ms:INTEGER,version:INTEGER,"
            "f_name:TEXT,f_hp:INTEGER,f_speed:REAL,f_alive:INTEGER,"
            "f_bag:TEXT,f_tag:TEXT,f_level:INTEGER,f_owner:TEXT");
  EXPECT_EQ(RawSql(path,
                   "SELECT group_concat(name || ':' || \"unique\", ',') FROM "
                   "(SELECT * FROM pragma_index_list('data_Character') WHERE "
                   "origin = 'c' ORDER BY name)"),
            "data_Character.level:0,data_Character.name:1,"
            "data_Character.owner:0,data_Character.tag:1");
  Result<std::unique_ptr<data::DataTxn>> txn =
      store->Begin(TxnMode::kWrite, 1000);
  ASSERT_TRUE(txn.ok());
  ASSERT_TRUE(
      (*txn)
          ->Insert("Character", "c1",
                   R"({"name":"Ann","alive":false,"bag":{"b":1,"a":2}})",
                   "admin")
          .ok());
  ASSERT_TRUE((*txn)->Commit().ok());
  EXPECT_EQ(RawSql(path,
                   "SELECT f_name || '|' || f_hp || '|' || f_alive || '|' || "
                   "f_bag || '|' || version FROM data_Character"),
            "Ann|100|0|{\"a\":2,\"b\":1}|1");
  EXPECT_EQ(RawSql(path, "SELECT op || ' ' || row_id FROM data_changes"),
            "created c1");
}

TEST(SqliteDataStoreTest, OpenDataStoreTakesTheStoreUrlForms) {
  ScratchDir dir;
  for (const std::string& url :
       {"sqlite:" + dir.File("a.db"), "sqlite://" + dir.File("b.db"),
        dir.File("c/d.db")}) {
    Result<std::unique_ptr<data::DataStore>> store = OpenDataStore(url);
    ASSERT_TRUE(store.ok()) << url << ": " << store.status().ToString();
    EXPECT_TRUE((*store)->schema().empty());
  }
  // The data has its own file beside the store's (DataFilePath).
  EXPECT_TRUE(std::filesystem::exists(dir.File("c/d-data.db")));
  EXPECT_FALSE(std::filesystem::exists(dir.File("c/d.db")));
  std::string temporary;
  {
    Result<std::unique_ptr<data::DataStore>> memory =
        OpenDataStore("sqlite::memory:");
    ASSERT_TRUE(memory.ok()) << memory.status().ToString();
    temporary = static_cast<SqliteDataStore&>(**memory).path();
    EXPECT_TRUE(std::filesystem::exists(temporary));
    ASSERT_TRUE(
        (*memory)->ApplySchema(DataStoreConformanceTest::TestSchema()).ok());
  }
  EXPECT_FALSE(std::filesystem::exists(temporary)) << temporary;
  EXPECT_EQ(OpenDataStore("").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(OpenDataStore("mysql://x").status().code(),
            StatusCode::kInvalidArgument);
}

// The data store shares the file with the shard store: both migrate the
// one schema, and each sees only its own tables.
TEST(SqliteDataStoreTest, SharesTheFileWithTheShardStore) {
  ScratchDir dir;
  const std::string path = dir.File("tessera.db");
  Result<std::unique_ptr<SqliteStore>> shards = SqliteStore::Open(path);
  ASSERT_TRUE(shards.ok()) << shards.status().ToString();
  std::unique_ptr<SqliteDataStore> data = OpenOrDie(path, {});
  ASSERT_NE(data, nullptr);
  ASSERT_TRUE(data->ApplySchema(DataStoreConformanceTest::TestSchema()).ok());
  ASSERT_TRUE((*shards)->Save("s1", "state").ok());
  Result<std::unique_ptr<data::DataTxn>> txn =
      data->Begin(TxnMode::kWrite, 1000);
  ASSERT_TRUE(txn.ok());
  ASSERT_TRUE((*txn)->Insert("Item", "i", R"({"kind":"a"})", "admin").ok());
  // The shard store writes while the data writer is open: it waits for
  // the file's lock (busy timeout) and gets it after the commit.
  ASSERT_TRUE((*txn)->Commit().ok());
  ASSERT_TRUE((*shards)->Save("s1", "state2").ok());
  EXPECT_EQ(RawSql(path, "SELECT count(*) FROM data_Item"), "1");
  EXPECT_EQ(RawSql(path, "SELECT state FROM saves"), "state2");
}

// Another connection to the file holding the write lock (another process,
// say) makes Begin(kWrite) UNAVAILABLE after the busy timeout; readers go
// on.
TEST(SqliteDataStoreTest, AnotherConnectionsWriteLockIsUnavailable) {
  ScratchDir dir;
  const std::string path = dir.File("data.db");
  SqliteDataStore::Options options;
  options.busy_timeout_ms = 50;
  std::unique_ptr<SqliteDataStore> a = OpenOrDie(path, options);
  std::unique_ptr<SqliteDataStore> b = OpenOrDie(path, options);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(a->ApplySchema(DataStoreConformanceTest::TestSchema()).ok());
  Result<std::unique_ptr<data::DataTxn>> held = a->Begin(TxnMode::kWrite, 1000);
  ASSERT_TRUE(held.ok());
  Result<std::unique_ptr<data::DataTxn>> busy = b->Begin(TxnMode::kWrite, 1000);
  ASSERT_FALSE(busy.ok());
  EXPECT_EQ(busy.status().code(), StatusCode::kUnavailable)
      << busy.status().ToString();
  EXPECT_EQ(data::ErrorCodeOf(busy.status().message()), "UNAVAILABLE");
  Result<std::unique_ptr<data::DataTxn>> read = b->Begin(TxnMode::kRead, 0);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  ASSERT_TRUE((*held)->Commit().ok());
  EXPECT_TRUE(b->Begin(TxnMode::kWrite, 1000).ok());
}

TEST(SqliteDataStoreTest, AnUnreadableAppliedSchemaIsRefused) {
  ScratchDir dir;
  const std::string path = dir.File("data.db");
  ASSERT_NE(OpenOrDie(path, {}), nullptr);
  RawSql(path, "INSERT INTO data_schema VALUES(1, '{\"types\": 3}', 0)");
  Result<std::unique_ptr<SqliteDataStore>> store = SqliteDataStore::Open(path);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(store.status().message().find("data_schema"), std::string::npos)
      << store.status().message();
}

TEST(SqliteDataStoreTest, ManyReadersAtOnce) {
  std::unique_ptr<SqliteDataStore> store = OpenOrDie(":memory:", {});
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->ApplySchema(DataStoreConformanceTest::TestSchema()).ok());
  std::vector<std::unique_ptr<data::DataTxn>> readers;
  for (int i = 0; i < 10; ++i) {  // more than the idle pool keeps
    Result<std::unique_ptr<data::DataTxn>> r = store->Begin(TxnMode::kRead, 0);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    readers.push_back(std::move(r).value());
  }
  for (auto& r : readers) {
    Result<int64_t> n = r->Count("Item", data::Filter());
    ASSERT_TRUE(n.ok()) << n.status().ToString();
    EXPECT_EQ(*n, 0);
  }
  readers.clear();
  Result<std::unique_ptr<data::DataTxn>> again =
      store->Begin(TxnMode::kRead, 0);
  ASSERT_TRUE(again.ok());
}

}  // namespace
}  // namespace tessera::store
