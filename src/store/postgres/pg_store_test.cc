// The PostgreSQL store against a real server the test binary starts
// (pg_test_cluster.h): the Store and TransferJournal conformance suites
// (store_conformance.h), each test on a database of its own, plus what
// only this backend has: the schema created idempotently (twice, and by
// several connections at once, beside the realm tables), the rows as
// tables, the URL and connection errors, transactions failing on the
// server part way committing nothing, a corrupt step, and a connection
// lost and reset.
#include "store/postgres/pg_store.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "store/postgres/pg_conn.h"
#include "store/postgres/pg_realm_schema.h"
#include "store/postgres/pg_store_schema.h"
#include "store/postgres/pg_test_cluster.h"
#include "store/postgres/pg_test_database.h"
#include "store/store_conformance.h"

namespace tessera::store {
namespace {

using pg::PgConn;
using pg::PgResult;
using pg::PgTestCluster;
using shard::TransferAdvance;
using shard::TransferRecord;
using shard::TransferStep;

using pg::Cluster;
using pg::FreshDatabase;

const StoreBackend& PostgresBackend() {
  static const StoreBackend backend{
      "postgres",
      [] {
        return StorePlace{FreshDatabase(), nullptr};
      },
      [](const std::string& url, const WallClock* clock) {
        return OpenPgStore(url, PgStore::Options{clock});
      }};
  return backend;
}

INSTANTIATE_TEST_SUITE_P(Postgres, StoreConformanceTest,
                         ::testing::Values(PostgresBackend()),
                         StoreBackendName);
INSTANTIATE_TEST_SUITE_P(Postgres, TransferJournalConformanceTest,
                         ::testing::Values(JournalBackendOf(PostgresBackend())),
                         JournalBackendName);

std::unique_ptr<PgStore> OpenOrDie(const std::string& url) {
  Result<std::unique_ptr<PgStore>> store = PgStore::Open(url);
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  return store.ok() ? std::move(store).value() : nullptr;
}

std::unique_ptr<PgConn> ConnectOrDie(const std::string& url) {
  Result<std::unique_ptr<PgConn>> conn = PgConn::Connect(url);
  EXPECT_TRUE(conn.ok()) << conn.status().ToString();
  return conn.ok() ? std::move(conn).value() : nullptr;
}

// The first column of the first row of `sql` on a connection of its own
// ("<null>" for NULL, "<none>" for no rows).
std::string RawSql(const std::string& url, const std::string& sql) {
  std::unique_ptr<PgConn> conn = ConnectOrDie(url);
  if (conn == nullptr) return "";
  Result<PgResult> rows = conn->Exec(sql, {}, "raw sql");
  EXPECT_TRUE(rows.ok()) << sql << ": " << rows.status().ToString();
  if (!rows.ok()) return "";
  if (rows->rows() == 0) return "<none>";
  if (rows->IsNull(0, 0)) return "<null>";
  return std::string(rows->Text(0, 0));
}

// Runs a script (DDL: functions, triggers) on a connection of its own.
void RawScript(const std::string& url, const std::string& sql) {
  std::unique_ptr<PgConn> conn = ConnectOrDie(url);
  ASSERT_NE(conn, nullptr);
  Status done = conn->RunScript(sql, "raw script");
  ASSERT_TRUE(done.ok()) << sql << ": " << done.ToString();
}

TransferRecord Move(std::string id, std::string from, std::string subscriber) {
  TransferRecord r;
  r.id = std::move(id);
  r.from_shard = std::move(from);
  r.to_shard = "T";
  r.subscriber = std::move(subscriber);
  r.state = "state of " + r.subscriber;
  return r;
}

std::vector<std::string> IdsOf(Store& store) {
  Result<std::vector<TransferRecord>> rows = store.ListTransfers();
  EXPECT_TRUE(rows.ok()) << rows.status().ToString();
  std::vector<std::string> ids;
  if (rows.ok()) {
    for (const TransferRecord& r : *rows) ids.push_back(r.id);
  }
  return ids;
}

std::optional<std::string> LoadOf(Store& store, std::string_view id) {
  Result<std::optional<std::string>> state = store.Load(id);
  EXPECT_TRUE(state.ok()) << state.status().ToString();
  return state.ok() ? *state : std::nullopt;
}

TEST(PgStoreTest, OpeningTwiceKeepsTheTablesAndTheRows) {
  const std::string url = FreshDatabase();
  ASSERT_FALSE(url.empty());
  {
    std::unique_ptr<PgStore> store = OpenOrDie(url);
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->Save("s", "saved").ok());
    std::vector<TransferRecord> records = {Move("m1", "s", "p")};
    ASSERT_TRUE(store->BeginTransfers(records, "s", std::nullopt).ok());
  }
  std::unique_ptr<PgStore> store = OpenOrDie(url);
  ASSERT_NE(store, nullptr);
  std::unique_ptr<PgConn> conn = ConnectOrDie(url);
  ASSERT_NE(conn, nullptr);
  EXPECT_TRUE(pg::EnsureStoreSchema(*conn).ok());
  EXPECT_EQ(LoadOf(*store, "s"), "saved");
  EXPECT_EQ(IdsOf(*store), std::vector<std::string>{"m1"});
  EXPECT_EQ(RawSql(url,
                   "SELECT count(*) || ':' || max(version) FROM "
                   "tessera_schema WHERE component = 'store'"),
            "1:1");
}

// Eight connections at once on a fresh database, half creating the
// store's tables and half the realms' (both create tessera_schema).
TEST(PgStoreTest, SchemaCreatedByEightConnectionsAtOnce) {
  const std::string url = FreshDatabase();
  ASSERT_FALSE(url.empty());
  constexpr int kConnections = 8;
  std::vector<std::unique_ptr<PgConn>> conns;
  for (int i = 0; i < kConnections; ++i) {
    conns.push_back(ConnectOrDie(url));
    ASSERT_NE(conns.back(), nullptr);
  }
  std::atomic<int> ready{0};
  std::vector<Status> results(kConnections);
  std::vector<std::thread> threads;
  for (int i = 0; i < kConnections; ++i) {
    threads.emplace_back([&, i] {
      ready.fetch_add(1);
      while (ready.load() < kConnections) {
      }
      results[i] = i % 2 == 0 ? pg::EnsureStoreSchema(*conns[i])
                              : pg::EnsureRealmSchema(*conns[i]);
    });
  }
  for (std::thread& t : threads) t.join();
  for (const Status& status : results) {
    EXPECT_TRUE(status.ok()) << status.ToString();
  }
  EXPECT_EQ(RawSql(url,
                   "SELECT count(*) FROM pg_tables WHERE tablename IN "
                   "('shards', 'saves', 'transfers', 'realms', "
                   "'tessera_schema')"),
            "5");
  EXPECT_EQ(RawSql(url,
                   "SELECT string_agg(component || '=' || version, ',' "
                   "ORDER BY component) FROM tessera_schema"),
            "realms=1,store=1");
}

TEST(PgStoreTest, ANewerSchemaIsRefused) {
  const std::string url = FreshDatabase();
  ASSERT_FALSE(url.empty());
  ASSERT_NE(OpenOrDie(url), nullptr);
  RawSql(url,
         "UPDATE tessera_schema SET version = 99 WHERE component = 'store' "
         "RETURNING version");
  Result<std::unique_ptr<PgStore>> store = PgStore::Open(url);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(store.status().message().find("version 99"), std::string::npos)
      << store.status().message();
}

TEST(PgStoreTest, TheRowsAreTheTables) {
  const std::string url = FreshDatabase();
  ASSERT_FALSE(url.empty());
  FakeWallClock clock(kConformanceStartUs);
  Result<std::unique_ptr<PgStore>> opened = PgStore::Open(url, {&clock});
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  PgStore& store = **opened;
  ShardRecord record{"arena-1", "arena", "p", "running", "", 5, 0};
  ASSERT_TRUE(store.PutShard(record).ok());
  ASSERT_TRUE(store.Save("arena-1", std::string("\x00\xff", 2)).ok());
  TransferRecord move = Move("m1", "arena-1", "p1");
  move.claims_json = R"({"n":1})";
  std::vector<TransferRecord> records = {move};
  ASSERT_TRUE(store.BeginTransfers(records, "arena-1", std::nullopt).ok());
  EXPECT_EQ(RawSql(url,
                   "SELECT convert_from(id, 'UTF8') || '|' || "
                   "convert_from(kind, 'UTF8') || '|' || "
                   "convert_from(status, 'UTF8') || '|' || created_ms || "
                   "'|' || updated_ms FROM shards"),
            "arena-1|arena|running|5|" + std::to_string(kConformanceStartMs));
  EXPECT_EQ(RawSql(url, "SELECT encode(state, 'hex') FROM saves"), "00ff");
  EXPECT_EQ(RawSql(url,
                   "SELECT convert_from(subscriber, 'UTF8') || '|' || step "
                   "|| '|' || convert_from(claims, 'UTF8') FROM transfers"),
            R"(p1|1|{"n":1})");
  // The database itself holds one kOut row per (source, subscriber).
  std::unique_ptr<PgConn> conn = ConnectOrDie(url);
  ASSERT_NE(conn, nullptr);
  Status second = conn->RunScript(
      "INSERT INTO transfers(id, from_shard, to_shard, subscriber, claims, "
      "state, step, created_ms, updated_ms) SELECT 'm2', from_shard, "
      "to_shard, subscriber, claims, state, 1, 0, 0 FROM transfers",
      "a second out row");
  EXPECT_EQ(second.code(), StatusCode::kAlreadyExists) << second.ToString();
}

TEST(PgStoreTest, BadUrlsAndUnreachableServersAreClearErrors) {
  Result<std::unique_ptr<Store>> store = OpenPgStore("sqlite:/tmp/x.db");
  EXPECT_EQ(store.status().code(), StatusCode::kInvalidArgument);
  store = OpenPgStore("postgresql://test@127.0.0.1:5432/db?bogus=1");
  EXPECT_EQ(store.status().code(), StatusCode::kInvalidArgument)
      << store.status().ToString();
  // Port 1 on loopback: nothing listens there.
  store = OpenPgStore("postgresql://test:secret@127.0.0.1:1/postgres");
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kIo);
  EXPECT_NE(store.status().message().find("cannot connect"), std::string::npos)
      << store.status().message();
  EXPECT_EQ(store.status().message().find("secret"), std::string::npos)
      << store.status().message();
  PgTestCluster* cluster = Cluster();
  ASSERT_NE(cluster, nullptr);
  store = OpenPgStore(cluster->UrlOf("no_such_db"));
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kIo);
  EXPECT_NE(store.status().message().find("no_such_db"), std::string::npos)
      << store.status().message();
}

// Statements failing on the server inside a transaction (triggers raise
// on a save of 'boom', on the journal row of subscriber 'r', on deleting
// the save of shard 'keep'): what the transaction wrote before is rolled
// back, and the store goes on.
TEST(PgStoreTest, ATransactionFailingMidwayCommitsNothing) {
  const std::string url = FreshDatabase();
  ASSERT_FALSE(url.empty());
  std::unique_ptr<PgStore> store = OpenOrDie(url);
  ASSERT_NE(store, nullptr);
  std::vector<TransferRecord> first = {Move("m1", "S", "p")};
  ASSERT_TRUE(store->BeginTransfers(first, "S", "s1").ok());
  ASSERT_TRUE(store->PutShard({"keep", "arena", "", "running", "", 1, 1}).ok());
  ASSERT_TRUE(store->Save("keep", "kept").ok());
  RawScript(url, R"sql(
    CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION '% refused', TG_ARGV[0]; END $$;
    CREATE TRIGGER no_boom BEFORE INSERT OR UPDATE ON saves FOR EACH ROW
      WHEN (NEW.state = 'boom'::bytea) EXECUTE FUNCTION refuse('boom');
    CREATE TRIGGER no_r BEFORE INSERT ON transfers FOR EACH ROW
      WHEN (NEW.subscriber = 'r'::bytea) EXECUTE FUNCTION refuse('r');
    CREATE TRIGGER no_keep BEFORE DELETE ON saves FOR EACH ROW
      WHEN (OLD.shard_id = 'keep'::bytea) EXECUTE FUNCTION refuse('keep');
  )sql");

  std::vector<TransferRecord> second = {Move("m2", "S", "q"),
                                        Move("m3", "S", "x")};
  Status st = store->BeginTransfers(second, "S", "boom");
  EXPECT_EQ(st.code(), StatusCode::kIo) << st.ToString();
  EXPECT_NE(st.message().find("boom refused"), std::string::npos)
      << st.message();
  std::vector<TransferRecord> third = {Move("m4", "S", "q"),
                                       Move("m5", "S", "r")};
  st = store->BeginTransfers(third, "S", "s2");
  EXPECT_EQ(st.code(), StatusCode::kIo) << st.ToString();
  EXPECT_NE(st.message().find("r refused"), std::string::npos) << st.message();
  std::vector<TransferAdvance> steps = {
      {"m1", TransferStep::kOut, TransferStep::kBack}};
  st = store->AdvanceTransfers(steps, "S", "boom");
  EXPECT_EQ(st.code(), StatusCode::kIo) << st.ToString();
  st = store->DeleteShard("keep");
  EXPECT_EQ(st.code(), StatusCode::kIo) << st.ToString();

  EXPECT_EQ(IdsOf(*store), std::vector<std::string>{"m1"});
  Result<std::vector<TransferRecord>> rows = store->ListTransfers();
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ((*rows)[0].step, TransferStep::kOut);
  EXPECT_EQ(LoadOf(*store, "S"), "s1");
  Result<std::vector<ShardRecord>> shards = store->ListShards();
  ASSERT_TRUE(shards.ok()) << shards.status().ToString();
  EXPECT_EQ(shards->size(), 1u) << "the record went without its save";
  EXPECT_EQ(LoadOf(*store, "keep"), "kept");
  // No transaction was left open.
  ASSERT_TRUE(store->BeginTransfers(second, "S", "s2").ok());
  ASSERT_TRUE(store->AdvanceTransfers(steps, "S", "s3").ok());
  EXPECT_EQ(LoadOf(*store, "S"), "s3");
  EXPECT_EQ(IdsOf(*store), (std::vector<std::string>{"m1", "m2", "m3"}));
}

TEST(PgStoreTest, AnUnknownStepInTheDatabaseIsAnIoError) {
  const std::string url = FreshDatabase();
  ASSERT_FALSE(url.empty());
  std::unique_ptr<PgStore> store = OpenOrDie(url);
  ASSERT_NE(store, nullptr);
  std::vector<TransferRecord> records = {Move("m1", "S", "p")};
  ASSERT_TRUE(store->BeginTransfers(records, "S", std::nullopt).ok());
  RawSql(url, "UPDATE transfers SET step = 7 RETURNING step");
  Result<std::vector<TransferRecord>> rows = store->ListTransfers();
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(rows.status().code(), StatusCode::kIo);
  EXPECT_NE(rows.status().message().find("unknown step 7"), std::string::npos)
      << rows.status().message();
  std::vector<TransferAdvance> steps = {
      {"m1", TransferStep::kOut, TransferStep::kIn}};
  Status st = store->AdvanceTransfers(steps, "T", std::nullopt);
  EXPECT_EQ(st.code(), StatusCode::kIo) << st.ToString();
  EXPECT_NE(st.message().find("unknown step 7"), std::string::npos)
      << st.message();
}

// The server ends the store's session (a restart, a failover, an admin):
// the call that finds out fails, the next one runs on a new connection;
// a journal transaction cut off that way, before it or inside it, wrote
// nothing.
TEST(PgStoreTest, ALostConnectionIsResetForTheNextCall) {
  const std::string url = FreshDatabase();
  ASSERT_FALSE(url.empty());
  std::unique_ptr<PgStore> store = OpenOrDie(url);
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Save("s", "before").ok());
  const std::string database = url.substr(url.rfind('/') + 1);
  const std::string kill_others =
      "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE "
      "datname = '" +
      database + "' AND pid <> pg_backend_pid()";
  // (The store's one session is among them; others may be sessions of
  // RawSql that are still closing.)
  for (int round = 0; round < 2; ++round) {
    EXPECT_NE(RawSql(url, kill_others), "0");
    std::vector<TransferRecord> records = {
        Move("m" + std::to_string(round), "s", "p" + std::to_string(round))};
    Status first = store->BeginTransfers(records, "s", "after");
    if (!first.ok()) {
      EXPECT_EQ(first.code(), StatusCode::kIo) << first.ToString();
      EXPECT_EQ(LoadOf(*store, "s"), round == 0 ? "before" : "after");
      EXPECT_EQ(IdsOf(*store).size(), static_cast<size_t>(round));
      ASSERT_TRUE(store->BeginTransfers(records, "s", "after").ok());
    }
    EXPECT_EQ(LoadOf(*store, "s"), "after");
    EXPECT_EQ(IdsOf(*store).size(), static_cast<size_t>(round + 1));
  }
  // The session dies inside the transaction, after the rows and before
  // the save (a trigger ends its own backend): nothing of it committed.
  RawScript(url, R"sql(
    CREATE FUNCTION die() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN PERFORM pg_terminate_backend(pg_backend_pid());
      PERFORM pg_sleep(5); RETURN NEW; END $$;
    CREATE TRIGGER die BEFORE UPDATE ON saves FOR EACH ROW
      WHEN (NEW.state = 'die'::bytea) EXECUTE FUNCTION die();
  )sql");
  std::vector<TransferRecord> doomed = {Move("d1", "s", "q1"),
                                        Move("d2", "s", "q2")};
  Status cut = store->BeginTransfers(doomed, "s", "die");
  EXPECT_EQ(cut.code(), StatusCode::kIo) << cut.ToString();
  EXPECT_EQ(LoadOf(*store, "s"), "after");
  EXPECT_EQ(IdsOf(*store), (std::vector<std::string>{"m0", "m1"}));
  // A single statement, too.
  EXPECT_NE(RawSql(url, kill_others), "0");
  Result<std::optional<std::string>> loaded = store->Load("s");
  if (!loaded.ok()) {
    EXPECT_EQ(loaded.status().code(), StatusCode::kIo);
    loaded = store->Load("s");
  }
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(*loaded, "after");
}

}  // namespace
}  // namespace tessera::store
