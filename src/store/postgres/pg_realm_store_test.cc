// The PostgreSQL realm store against a real server the test binary starts
// (pg_test_cluster.h): the RealmStore conformance suite, each test on a
// database of its own, plus what only this backend has: the schema created
// idempotently (twice, and by several connections at once), a second store
// on the same database (seeing commits, fenced by them, racing them), the
// URL and connection errors, a group that fails on the server part way
// writing nothing, and a connection lost and reset.
#include "store/postgres/pg_realm_store.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "realm/realm_store_conformance.h"
#include "store/postgres/pg_conn.h"
#include "store/postgres/pg_realm_schema.h"
#include "store/postgres/pg_test_cluster.h"
#include "store/postgres/pg_test_database.h"

namespace tessera::store {
namespace {

using pg::PgConn;
using pg::PgResult;
using pg::PgTestCluster;
using realm::LoadedRealm;
using realm::LoggedCommit;
using realm::RealmAlarm;
using realm::RealmAppend;
using realm::RealmStore;
using realm::RealmStoreConformanceTest;

using pg::Cluster;
using pg::FreshDatabase;

std::unique_ptr<PgRealmStore> OpenOrDie(const std::string& url) {
  Result<std::unique_ptr<PgRealmStore>> store = PgRealmStore::Open(url);
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  return store.ok() ? std::move(store).value() : nullptr;
}

INSTANTIATE_TEST_SUITE_P(Postgres, RealmStoreConformanceTest,
                         ::testing::Values(realm::RealmStoreBackend{
                             "postgres",
                             []() -> std::unique_ptr<RealmStore> {
                               const std::string url = FreshDatabase();
                               if (url.empty()) return nullptr;
                               return OpenOrDie(url);
                             }}),
                         realm::RealmStoreBackendName);

// The first column of the first row of `sql` on a connection of its own
// ("<null>" for NULL, "<none>" for no rows).
std::string RawSql(const std::string& url, const std::string& sql) {
  Result<std::unique_ptr<PgConn>> conn = PgConn::Connect(url);
  EXPECT_TRUE(conn.ok()) << conn.status().ToString();
  if (!conn.ok()) return "";
  Result<PgResult> rows = (*conn)->Exec(sql, {}, "raw sql");
  EXPECT_TRUE(rows.ok()) << sql << ": " << rows.status().ToString();
  if (!rows.ok()) return "";
  if (rows->rows() == 0) return "<none>";
  if (rows->IsNull(0, 0)) return "<null>";
  return std::string(rows->Text(0, 0));
}

std::vector<RealmAppend> OneEntry(const std::string& key, int64_t epoch,
                                  int64_t from, int64_t to) {
  RealmAppend entry{key, epoch, {}, {}, {}};
  for (int64_t v = from; v <= to; ++v) {
    entry.commits.push_back({v, "patch-" + std::to_string(v)});
  }
  return {entry};
}

int64_t HeadOf(RealmStore& store, const std::string& key) {
  Result<std::optional<LoadedRealm>> loaded = store.Load(key);
  EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
  if (!loaded.ok() || !loaded->has_value()) return -1;
  return (*loaded)->head_version();
}

TEST(PgRealmStoreTest, OpeningTwiceKeepsTheTablesAndTheRows) {
  const std::string url = FreshDatabase();
  ASSERT_FALSE(url.empty());
  {
    std::unique_ptr<PgRealmStore> store = OpenOrDie(url);
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->Create("match/m-1", "match", {1, 0, "h1", "{}"}).ok());
    ASSERT_TRUE(store->Append(OneEntry("match/m-1", 1, 1, 5)).ok());
  }
  std::unique_ptr<PgRealmStore> store = OpenOrDie(url);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(HeadOf(*store, "match/m-1"), 5);
  Result<std::unique_ptr<PgConn>> conn = PgConn::Connect(url);
  ASSERT_TRUE(conn.ok()) << conn.status().ToString();
  EXPECT_TRUE(pg::EnsureRealmSchema(**conn).ok());
  EXPECT_EQ(HeadOf(*store, "match/m-1"), 5);
  EXPECT_EQ(RawSql(url,
                   "SELECT count(*) || ':' || max(version) FROM "
                   "tessera_schema WHERE component = 'realms'"),
            "1:1");
}

TEST(PgRealmStoreTest, SchemaCreatedByEightConnectionsAtOnce) {
  const std::string url = FreshDatabase();
  ASSERT_FALSE(url.empty());
  constexpr int kConnections = 8;
  std::vector<std::unique_ptr<PgConn>> conns;
  for (int i = 0; i < kConnections; ++i) {
    Result<std::unique_ptr<PgConn>> conn = PgConn::Connect(url);
    ASSERT_TRUE(conn.ok()) << conn.status().ToString();
    conns.push_back(std::move(conn).value());
  }
  std::atomic<int> ready{0};
  std::vector<Status> results(kConnections);
  std::vector<std::thread> threads;
  for (int i = 0; i < kConnections; ++i) {
    threads.emplace_back([&, i] {
      ready.fetch_add(1);
      while (ready.load() < kConnections) {
      }
      results[i] = pg::EnsureRealmSchema(*conns[i]);
    });
  }
  for (std::thread& t : threads) t.join();
  for (const Status& status : results) {
    EXPECT_TRUE(status.ok()) << status.ToString();
  }
  EXPECT_EQ(RawSql(url,
                   "SELECT count(*) FROM pg_tables WHERE tablename IN "
                   "('realms', 'realm_log', 'realm_snapshots', "
                   "'realm_alarms', 'tessera_schema')"),
            "5");
  EXPECT_EQ(RawSql(url, "SELECT count(*) FROM tessera_schema"), "1");
}

TEST(PgRealmStoreTest, ANewerSchemaIsRefused) {
  const std::string url = FreshDatabase();
  ASSERT_FALSE(url.empty());
  ASSERT_NE(OpenOrDie(url), nullptr);
  RawSql(url, "UPDATE tessera_schema SET version = 99 RETURNING version");
  Result<std::unique_ptr<PgRealmStore>> store = PgRealmStore::Open(url);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(store.status().message().find("version 99"), std::string::npos)
      << store.status().message();
}

TEST(PgRealmStoreTest, TheRowsAreTheTables) {
  const std::string url = FreshDatabase();
  ASSERT_FALSE(url.empty());
  std::unique_ptr<PgRealmStore> store = OpenOrDie(url);
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Create("r", "match", {1, 0, "h", R"({"a":1})"}).ok());
  ASSERT_TRUE(store->Append(OneEntry("r", 1, 1, 3)).ok());
  ASSERT_TRUE(store->PutSnapshot("r", {1, 2, "h", R"({"a":2})"}, 1).ok());
  EXPECT_EQ(RawSql(url,
                   "SELECT kind || '|' || epoch || '|' || head_version "
                   "FROM realms WHERE key = 'r'"),
            "match|1|3");
  // Version 1 is at the window's edge (2 - 1) and went; the older
  // snapshot went with the new one's arrival.
  EXPECT_EQ(RawSql(url,
                   "SELECT string_agg(version::text, ',' ORDER BY "
                   "version) FROM realm_log"),
            "2,3");
  EXPECT_EQ(RawSql(url,
                   "SELECT convert_from(patch, 'UTF8') FROM realm_log "
                   "WHERE version = 3"),
            "patch-3");
  EXPECT_EQ(RawSql(url,
                   "SELECT string_agg(version || ':' || state, ',') "
                   "FROM realm_snapshots"),
            R"(2:{"a":2})");
}

TEST(PgRealmStoreTest, ASecondStoreSeesCommitsAndIsFencedByThem) {
  const std::string url = FreshDatabase();
  ASSERT_FALSE(url.empty());
  std::unique_ptr<PgRealmStore> a = OpenOrDie(url);
  std::unique_ptr<PgRealmStore> b = OpenOrDie(url);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(a->Create("r", "match", {1, 0, "h", "{}"}).ok());
  EXPECT_EQ(b->Create("r", "match", {1, 0, "h", "{}"}).code(),
            StatusCode::kAlreadyExists);
  RealmAppend entry = OneEntry("r", 1, 1, 2)[0];
  entry.alarms_set.push_back(RealmAlarm{"tick", 1234, 0});
  ASSERT_TRUE(a->Append({&entry, 1}).ok());
  EXPECT_EQ(HeadOf(*b, "r"), 2);
  Result<std::vector<realm::StoredAlarm>> alarms = b->ListAlarms();
  ASSERT_TRUE(alarms.ok()) << alarms.status().ToString();
  EXPECT_EQ(
      *alarms,
      (std::vector<realm::StoredAlarm>{{"r", RealmAlarm{"tick", 1234, 0}}}));
  ASSERT_TRUE(b->Append(OneEntry("r", 1, 3, 3)).ok());
  // a's idea of the head (2) is stale now.
  Status stale = a->Append(OneEntry("r", 1, 3, 4));
  EXPECT_EQ(stale.code(), StatusCode::kFailedPrecondition) << stale.ToString();
  EXPECT_NE(stale.message().find("expected version 4, offered 3"),
            std::string::npos)
      << stale.message();
  Result<std::vector<LoggedCommit>> log = a->ReadLog("r", 1, 0, 10);
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  EXPECT_EQ(log->size(), 3u);
  ASSERT_TRUE(b->Drop("r").ok());
  Result<std::optional<LoadedRealm>> gone = a->Load("r");
  ASSERT_TRUE(gone.ok());
  EXPECT_FALSE(gone->has_value());
}

// Two stores (two connections) race to append to one realm, each reading
// the head and offering the next version: every acknowledged version is
// in the log once, and none was acknowledged twice.
TEST(PgRealmStoreTest, TwoConnectionsRacingToAppendAreFenced) {
  const std::string url = FreshDatabase();
  ASSERT_FALSE(url.empty());
  std::unique_ptr<PgRealmStore> stores[2] = {OpenOrDie(url), OpenOrDie(url)};
  ASSERT_NE(stores[0], nullptr);
  ASSERT_NE(stores[1], nullptr);
  ASSERT_TRUE(stores[0]->Create("r", "match", {1, 0, "h", "{}"}).ok());
  constexpr int kPerWriter = 40;
  std::atomic<int> fenced{0};
  std::vector<std::vector<int64_t>> won(2);
  std::vector<std::thread> threads;
  for (int w = 0; w < 2; ++w) {
    threads.emplace_back([&, w] {
      RealmStore& store = *stores[w];
      while (static_cast<int>(won[w].size()) < kPerWriter) {
        Result<std::optional<LoadedRealm>> loaded = store.Load("r");
        if (!loaded.ok() || !loaded->has_value()) return;
        const int64_t next = (*loaded)->head_version() + 1;
        RealmAppend entry{"r", 1, {{next, "w" + std::to_string(w)}}, {}, {}};
        Status status = store.Append({&entry, 1});
        if (status.ok()) {
          won[w].push_back(next);
        } else if (status.code() == StatusCode::kFailedPrecondition) {
          fenced.fetch_add(1);
        } else {
          ADD_FAILURE() << status.ToString();
          return;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  ASSERT_EQ(won[0].size() + won[1].size(), 2u * kPerWriter);
  Result<std::optional<LoadedRealm>> loaded = stores[0]->Load("r");
  ASSERT_TRUE(loaded.ok() && loaded->has_value());
  ASSERT_EQ((*loaded)->tail.size(), 2u * kPerWriter);
  for (int w = 0; w < 2; ++w) {
    for (int64_t v : won[w]) {
      EXPECT_EQ((*loaded)->tail[v - 1].patch, "w" + std::to_string(w))
          << "version " << v;
    }
  }
}

TEST(PgRealmStoreTest, BadUrlsAndUnreachableServersAreClearErrors) {
  Result<std::unique_ptr<PgRealmStore>> store =
      PgRealmStore::Open("sqlite:/tmp/x.db");
  EXPECT_EQ(store.status().code(), StatusCode::kInvalidArgument);
  store = PgRealmStore::Open("postgresql://test@127.0.0.1:5432/db?bogus=1");
  EXPECT_EQ(store.status().code(), StatusCode::kInvalidArgument)
      << store.status().ToString();
  // Port 1 on loopback: nothing listens there.
  store = PgRealmStore::Open("postgresql://test:secret@127.0.0.1:1/postgres");
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kIo);
  EXPECT_NE(store.status().message().find("cannot connect"), std::string::npos)
      << store.status().message();
  EXPECT_EQ(store.status().message().find("secret"), std::string::npos)
      << store.status().message();
  // A database the server does not have: its own message.
  PgTestCluster* cluster = Cluster();
  ASSERT_NE(cluster, nullptr);
  store = PgRealmStore::Open(cluster->UrlOf("no_such_db"));
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kIo);
  EXPECT_NE(store.status().message().find("no_such_db"), std::string::npos)
      << store.status().message();
}

// The second entry of a group fails on the server (a name that is not
// UTF-8) or before it (a NUL, which text cannot hold): the first entry's
// commits and alarms are not written either, and the store goes on.
TEST(PgRealmStoreTest, AGroupFailingPartWayWritesNothing) {
  const std::string url = FreshDatabase();
  ASSERT_FALSE(url.empty());
  std::unique_ptr<PgRealmStore> store = OpenOrDie(url);
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Create("a", "match", {1, 0, "h", "{}"}).ok());
  ASSERT_TRUE(store->Create("b", "match", {1, 0, "h", "{}"}).ok());
  for (const std::string& bad_name :
       {std::string("bad\xff\xfe"), std::string("nul\0name", 8)}) {
    std::vector<RealmAppend> group = {OneEntry("a", 1, 1, 3)[0],
                                      OneEntry("b", 1, 1, 1)[0]};
    group[0].alarms_set.push_back(RealmAlarm{"ok", 1, 0});
    group[1].alarms_set.push_back(RealmAlarm{bad_name, 2, 0});
    Status status = store->Append(group);
    ASSERT_FALSE(status.ok());
    EXPECT_TRUE(status.code() == StatusCode::kIo ||
                status.code() == StatusCode::kInvalidArgument)
        << status.ToString();
    EXPECT_EQ(HeadOf(*store, "a"), 0);
    EXPECT_EQ(HeadOf(*store, "b"), 0);
    Result<std::vector<realm::StoredAlarm>> alarms = store->ListAlarms();
    ASSERT_TRUE(alarms.ok()) << alarms.status().ToString();
    EXPECT_TRUE(alarms->empty());
  }
  EXPECT_EQ(RawSql(url, "SELECT count(*) FROM realm_log"), "0");
  ASSERT_TRUE(store->Append(OneEntry("a", 1, 1, 3)).ok());
  EXPECT_EQ(HeadOf(*store, "a"), 3);
}

// The server ends the store's session (a restart, a failover, an admin):
// the call that finds out fails, the next one runs on a new connection.
TEST(PgRealmStoreTest, ALostConnectionIsResetForTheNextCall) {
  const std::string url = FreshDatabase();
  ASSERT_FALSE(url.empty());
  std::unique_ptr<PgRealmStore> store = OpenOrDie(url);
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Create("r", "match", {1, 0, "h", "{}"}).ok());
  const std::string database = url.substr(url.rfind('/') + 1);
  EXPECT_EQ(RawSql(url,
                   "SELECT count(pg_terminate_backend(pid)) FROM "
                   "pg_stat_activity WHERE datname = '" +
                       database + "' AND pid <> pg_backend_pid()"),
            "1");
  Status first = store->Append(OneEntry("r", 1, 1, 1));
  if (!first.ok()) {
    EXPECT_EQ(first.code(), StatusCode::kIo) << first.ToString();
    ASSERT_TRUE(store->Append(OneEntry("r", 1, 1, 1)).ok());
  }
  EXPECT_EQ(HeadOf(*store, "r"), 1);
}

}  // namespace
}  // namespace tessera::store
