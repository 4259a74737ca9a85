// The PostgreSQL data store against a real server the test binary starts
// (pg_test_cluster.h): the DataStore conformance suite
// (data/data_store_conformance.h), each test on a database of its own,
// plus what only this backend has: reopening, the real tables and their
// column types, another store's writer lock, identifiers longer than
// PostgreSQL's, an unreadable applied schema, a connection lost in the
// middle of a transaction, and two stores writing at once.
#include "store/postgres/pg_data_store.h"

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "data/data_store_conformance.h"
#include "data/schema.h"
#include "store/data_crash_harness.h"
#include "store/postgres/pg_test_database.h"

namespace tessera::store {
namespace {

using data::DataStoreConformanceTest;
using data::TxnMode;
using nlohmann::json;
using pg::FreshDatabase;
using pg::QueryOne;

std::unique_ptr<PgDataStore> OpenOrNull(const std::string& url,
                                        PgDataStore::Options options) {
  Result<std::unique_ptr<PgDataStore>> store = PgDataStore::Open(url, options);
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  return store.ok() ? std::move(store).value() : nullptr;
}

INSTANTIATE_TEST_SUITE_P(
    Postgres, DataStoreConformanceTest,
    ::testing::Values(data::DataStoreBackend{
        "postgres",
        [](const WallClock* clock) -> std::unique_ptr<data::DataStore> {
          PgDataStore::Options options;
          options.wall_clock = clock;
          return OpenOrNull(FreshDatabase(), options);
        }}),
    data::DataStoreBackendName);

std::unique_ptr<data::DataTxn> BeginOrNull(data::DataStore& store,
                                           TxnMode mode) {
  Result<std::unique_ptr<data::DataTxn>> txn = store.Begin(mode, 1000);
  EXPECT_TRUE(txn.ok()) << txn.status().ToString();
  return txn.ok() ? std::move(txn).value() : nullptr;
}

class PgDataStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    url_ = FreshDatabase();
    ASSERT_FALSE(url_.empty());
    store_ = OpenOrNull(url_, {});
    ASSERT_NE(store_, nullptr);
    ASSERT_TRUE(
        store_->ApplySchema(DataStoreConformanceTest::TestSchema()).ok());
  }

  std::string url_;
  std::unique_ptr<PgDataStore> store_;
};

TEST_F(PgDataStoreTest, ReopeningKeepsSchemaRowsChangesAndCalls) {
  int64_t seq = 0;
  {
    std::unique_ptr<data::DataTxn> txn = BeginOrNull(*store_, TxnMode::kWrite);
    ASSERT_NE(txn, nullptr);
    ASSERT_TRUE(
        txn->Insert("Character", "c1", R"({"name":"Ann"})", "admin").ok());
    ASSERT_TRUE(
        txn->PutCall({"k1", "loot.grant", "h", true, "{}", "", 0}).ok());
    Result<std::vector<data::ChangeEvent>> events = txn->Commit();
    ASSERT_TRUE(events.ok()) << events.status().ToString();
    seq = (*events)[0].seq;
  }
  store_.reset();
  store_ = OpenOrNull(url_, {});
  ASSERT_NE(store_, nullptr);
  EXPECT_EQ(data::DataSchemaJson(store_->schema()),
            data::DataSchemaJson(DataStoreConformanceTest::TestSchema()));
  std::unique_ptr<data::DataTxn> txn = BeginOrNull(*store_, TxnMode::kWrite);
  ASSERT_NE(txn, nullptr);
  Result<std::optional<data::Row>> row = txn->Get("Character", "c1");
  ASSERT_TRUE(row.ok() && row->has_value());
  Result<std::optional<data::StoredCall>> call = txn->GetCall("k1");
  ASSERT_TRUE(call.ok() && call->has_value());
  EXPECT_EQ((*call)->function, "loot.grant");
  ASSERT_TRUE(
      txn->Insert("Character", "c2", R"({"name":"Bob"})", "admin").ok());
  Result<std::vector<data::ChangeEvent>> events = txn->Commit();
  ASSERT_TRUE(events.ok());
  EXPECT_GT((*events)[0].seq, seq);
  Result<std::vector<data::ChangeEvent>> all = store_->Changes(0, 10);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 2u);
  EXPECT_EQ(
      QueryOne(url_, "SELECT component || '=' || version FROM tessera_schema"),
      "data=1");
}

TEST_F(PgDataStoreTest, EntityTypesAreRealTablesWithIndexes) {
  EXPECT_EQ(
      QueryOne(url_,
               "SELECT string_agg(column_name || ':' || data_type, ',' "
               "ORDER BY ordinal_position) FROM information_schema.columns "
               "WHERE table_name = 'data_Character'"),
      "id:text,created_ms:bigint,updated_ms:bigint,version:bigint,"
      "f_name:text,f_hp:bigint,f_speed:double precision,"
      "f_alive:boolean,f_bag:text,f_tag:text,f_level:bigint,"
      "f_owner:text");
  EXPECT_EQ(QueryOne(url_,
                     "SELECT string_agg(indexname || ':' || "
                     "(indexdef LIKE 'CREATE UNIQUE%')::text, ',' ORDER BY "
                     "indexname) FROM pg_indexes WHERE tablename = "
                     "'data_Character' AND indexname LIKE 'data_Character.%'"),
            "data_Character.level:false,data_Character.name:true,"
            "data_Character.owner:false,data_Character.tag:true");
  std::unique_ptr<data::DataTxn> txn = BeginOrNull(*store_, TxnMode::kWrite);
  ASSERT_NE(txn, nullptr);
  ASSERT_TRUE(txn->Insert("Character", "c1",
                          R"({"name":"Ann","alive":false,"bag":{"b":1,"a":2}})",
                          "admin")
                  .ok());
  ASSERT_TRUE(txn->Commit().ok());
  EXPECT_EQ(QueryOne(url_,
                     "SELECT f_name || '|' || f_hp || '|' || f_alive || '|' || "
                     "f_bag || '|' || version FROM \"data_Character\""),
            "Ann|100|false|{\"a\":2,\"b\":1}|1");
  EXPECT_EQ(QueryOne(url_, "SELECT op || ' ' || row_id FROM data_changes"),
            "created c1");
}

// Another store on the database (another process, in effect) holding the
// writer lock makes Begin(kWrite) UNAVAILABLE after the busy timeout;
// readers go on, and the writer is free again after the commit.
TEST_F(PgDataStoreTest, AnotherStoresWriterLockIsUnavailable) {
  PgDataStore::Options options;
  options.busy_timeout_ms = 50;
  std::unique_ptr<PgDataStore> other = OpenOrNull(url_, options);
  ASSERT_NE(other, nullptr);
  std::unique_ptr<data::DataTxn> held = BeginOrNull(*store_, TxnMode::kWrite);
  ASSERT_NE(held, nullptr);
  Result<std::unique_ptr<data::DataTxn>> busy =
      other->Begin(TxnMode::kWrite, 1000);
  ASSERT_FALSE(busy.ok());
  EXPECT_EQ(busy.status().code(), StatusCode::kUnavailable)
      << busy.status().ToString();
  EXPECT_EQ(data::ErrorCodeOf(busy.status().message()), "UNAVAILABLE");
  EXPECT_EQ(other->ApplySchema(DataStoreConformanceTest::TestSchema()).code(),
            StatusCode::kUnavailable);
  Result<std::unique_ptr<data::DataTxn>> read = other->Begin(TxnMode::kRead, 0);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  ASSERT_TRUE(held->Commit().ok());
  EXPECT_TRUE(other->Begin(TxnMode::kWrite, 1000).ok());
}

// Two stores on one database writing at once: every transaction commits
// (one waits for the other's lock), no change is lost or numbered twice.
TEST_F(PgDataStoreTest, TwoStoresWritingAtOnceSerialise) {
  std::unique_ptr<PgDataStore> other = OpenOrNull(url_, {});
  ASSERT_NE(other, nullptr);
  {
    std::unique_ptr<data::DataTxn> txn = BeginOrNull(*store_, TxnMode::kWrite);
    ASSERT_NE(txn, nullptr);
    ASSERT_TRUE(
        txn->Insert("Item", "n", R"({"kind":"counter","count":0})", "admin")
            .ok());
    ASSERT_TRUE(txn->Commit().ok());
  }
  constexpr int kEach = 20;
  auto run = [&](data::DataStore* store, std::vector<Status>* errors) {
    for (int i = 0; i < kEach; ++i) {
      Result<std::unique_ptr<data::DataTxn>> txn =
          store->Begin(TxnMode::kWrite, 10'000);
      if (!txn.ok()) {
        errors->push_back(txn.status());
        continue;
      }
      // Read, then write what was read plus one: lost updates would show.
      Result<std::optional<data::Row>> row = (*txn)->Get("Item", "n");
      if (!row.ok() || !row->has_value()) {
        errors->push_back(row.status());
        continue;
      }
      const int64_t n = json::parse((*row)->fields_json)["count"];
      Result<data::Row> updated =
          (*txn)->Update("Item", "n", json({{"count", n + 1}}).dump(), "admin");
      if (!updated.ok()) errors->push_back(updated.status());
      Result<std::vector<data::ChangeEvent>> done = (*txn)->Commit();
      if (!done.ok()) errors->push_back(done.status());
    }
  };
  std::vector<Status> errors_a, errors_b;
  std::thread a(run, store_.get(), &errors_a);
  std::thread b(run, other.get(), &errors_b);
  a.join();
  b.join();
  for (const Status& st : errors_a) ADD_FAILURE() << st.ToString();
  for (const Status& st : errors_b) ADD_FAILURE() << st.ToString();
  std::unique_ptr<data::DataTxn> txn = BeginOrNull(*store_, TxnMode::kRead);
  ASSERT_NE(txn, nullptr);
  Result<std::optional<data::Row>> row = txn->Get("Item", "n");
  ASSERT_TRUE(row.ok() && row->has_value());
  EXPECT_EQ(json::parse((*row)->fields_json)["count"], 2 * kEach);
  Result<std::vector<data::ChangeEvent>> all = store_->Changes(0, 1000);
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), static_cast<size_t>(1 + 2 * kEach));
  for (size_t i = 1; i < all->size(); ++i) {
    EXPECT_GT((*all)[i].seq, (*all)[i - 1].seq);
    EXPECT_EQ((*all)[i].fields.at(0).new_json, std::to_string(i));
  }
}

// PostgreSQL cuts identifiers at 63 bytes; the store's names never
// collide however long the schema's are.
TEST(PgDataStoreNamesTest, LongNamesGetTablesAndColumnsOfTheirOwn) {
  const std::string url = FreshDatabase();
  ASSERT_FALSE(url.empty());
  std::unique_ptr<PgDataStore> store = OpenOrNull(url, {});
  ASSERT_NE(store, nullptr);
  const std::string type_prefix = "T" + std::string(62, 'x');
  const std::string field_prefix = "f" + std::string(62, 'y');
  data::DataSchema schema;
  for (const char* end : {"1", "2"}) {
    data::EntityType type;
    type.name = type_prefix + end;
    type.fields = {{field_prefix + "1", data::FieldType::kInt, false, ""},
                   {field_prefix + "2", data::FieldType::kInt, false, ""}};
    type.indexes = {{field_prefix + "1", true}, {field_prefix + "2", true}};
    schema.types.push_back(type);
  }
  Status applied = store->ApplySchema(schema);
  ASSERT_TRUE(applied.ok()) << applied.ToString();
  std::unique_ptr<data::DataTxn> txn = BeginOrNull(*store, TxnMode::kWrite);
  ASSERT_NE(txn, nullptr);
  for (const data::EntityType& type : schema.types) {
    json fields = {{field_prefix + "1", 1}, {field_prefix + "2", 1}};
    Result<data::Row> row = txn->Insert(type.name, "r", fields.dump(), "admin");
    ASSERT_TRUE(row.ok()) << row.status().ToString();
    EXPECT_EQ(json::parse(row->fields_json), fields);
  }
  ASSERT_TRUE(txn->Commit().ok());
  EXPECT_EQ(QueryOne(url,
                     "SELECT count(*) FROM pg_tables WHERE tablename LIKE "
                     "'data\\_Txxx%'"),
            "2");
  EXPECT_EQ(
      QueryOne(url,
               "SELECT count(DISTINCT indexname) FROM pg_indexes WHERE "
               "indexname LIKE 'data\\_Txxx%' AND indexname NOT LIKE '%pkey'"),
      "4");
}

TEST_F(PgDataStoreTest, AnUnreadableAppliedSchemaIsRefused) {
  store_.reset();
  QueryOne(
      url_,
      "UPDATE data_schema SET schema_json = '{\"types\": 3}' RETURNING id");
  Result<std::unique_ptr<PgDataStore>> store = PgDataStore::Open(url_);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(store.status().message().find("data_schema"), std::string::npos)
      << store.status().message();
}

// The writer's connection killed in the middle of a transaction: the
// transaction fails whole (nothing of it is committed) and the next one
// runs on a new connection.
TEST_F(PgDataStoreTest, ALostConnectionFailsTheTransactionOnly) {
  std::unique_ptr<data::DataTxn> txn = BeginOrNull(*store_, TxnMode::kWrite);
  ASSERT_NE(txn, nullptr);
  ASSERT_TRUE(txn->Insert("Item", "lost", R"({"kind":"a"})", "admin").ok());
  EXPECT_EQ(QueryOne(url_,
                     "SELECT count(pg_terminate_backend(pid)) FROM "
                     "pg_stat_activity WHERE datname = current_database() AND "
                     "state = 'idle in transaction'"),
            "1");
  Result<data::Row> more =
      txn->Insert("Item", "more", R"({"kind":"a"})", "admin");
  EXPECT_EQ(more.status().code(), StatusCode::kIo) << more.status().ToString();
  EXPECT_FALSE(txn->Commit().ok());
  txn.reset();
  std::unique_ptr<data::DataTxn> next = BeginOrNull(*store_, TxnMode::kWrite);
  ASSERT_NE(next, nullptr);
  Result<int64_t> count = next->Count("Item", data::Filter());
  ASSERT_TRUE(count.ok()) << count.status().ToString();
  EXPECT_EQ(*count, 0);
  ASSERT_TRUE(next->Insert("Item", "kept", R"({"kind":"a"})", "admin").ok());
  ASSERT_TRUE(next->Commit().ok());
  EXPECT_EQ(QueryOne(url_, "SELECT string_agg(id, ',') FROM \"data_Item\""),
            "kept");
}

TEST(PgDataStoreOpenTest, BadUrlsAndUnreachableServersAreClearErrors) {
  EXPECT_EQ(PgDataStore::Open("sqlite:x.db").status().code(),
            StatusCode::kInvalidArgument);
  // Nothing listens on port 1; the password is not in the message.
  Result<std::unique_ptr<PgDataStore>> store =
      PgDataStore::Open("postgres://u:s3cret@127.0.0.1:1/db");
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kIo);
  EXPECT_EQ(store.status().message().find("s3cret"), std::string::npos)
      << store.status().message();
}

// kill -9 of a process writing to the database (data_crash_harness.h):
// each committed transaction is there once, the one cut short not at all.
Result<std::unique_ptr<data::DataStore>> OpenPg(const std::string& url) {
  return OpenPgDataStore(url);
}

// The child: writes transactions until killed (a process of its own, on
// the database of the test that started it).
TEST(PgDataCrashChild, DISABLED_Writes) { testing::RunCrashWriter(OpenPg); }

testing::CrashSetup CrashSetup() {
  return {"PgDataCrashChild.DISABLED_Writes", OpenPg, [] {
            std::string url = FreshDatabase();
            EXPECT_FALSE(url.empty());
            return url;
          }};
}

TEST(PgDataCrashTest, SigkillDuringCommitsKeepsEachCommittedTxnOnce) {
  testing::ExpectSigkillDuringCommitsKeepsEachCommittedTxnOnce(CrashSetup());
}

TEST(PgDataCrashTest, KillBeforeCommitLosesTheWholeTxn) {
  testing::ExpectKillBeforeCommitLosesTheWholeTxn(CrashSetup());
}

TEST(PgDataCrashTest, KillRightAfterCommitKeepsTheTxn) {
  testing::ExpectKillRightAfterCommitKeepsTheTxn(CrashSetup());
}

}  // namespace
}  // namespace tessera::store
