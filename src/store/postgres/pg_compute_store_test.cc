// The PostgreSQL compute store against a real server the test binary
// starts (pg_test_cluster.h): the ComputeStore conformance suite
// (compute/compute_store_conformance.h), each test on a database of its
// own, plus what only this backend has: the schema created idempotently
// (twice, and by several connections at once beside the store's and the
// realms'), a second store on the same database, the URL and connection
// errors, transactions failing on the server part way committing nothing,
// a corrupt enum name, and a connection lost and reset.
#include "store/postgres/pg_compute_store.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "compute/compute_store_conformance.h"
#include "store/postgres/pg_compute_schema.h"
#include "store/postgres/pg_conn.h"
#include "store/postgres/pg_realm_schema.h"
#include "store/postgres/pg_store.h"
#include "store/postgres/pg_store_schema.h"
#include "store/postgres/pg_test_cluster.h"
#include "store/postgres/pg_test_database.h"

namespace tessera::store {
namespace {

using compute::ComputeStore;
using compute::ComputeStoreBackend;
using compute::ComputeStoreConformanceTest;
using compute::LogRecord;
using compute::ModuleRecord;
using compute::RunRecord;
using compute::StateBlob;
using compute::VersionRecord;
using pg::PgConn;
using pg::PgResult;
using pg::PgTestCluster;

using pg::Cluster;
using pg::FreshDatabase;

std::unique_ptr<ComputeStore> OpenOrNull(const std::string& url,
                                         const WallClock* clock) {
  Result<std::unique_ptr<ComputeStore>> store =
      OpenPgComputeStore(url, PgComputeStore::Options{clock});
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  return store.ok() ? std::move(store).value() : nullptr;
}

INSTANTIATE_TEST_SUITE_P(Postgres, ComputeStoreConformanceTest,
                         ::testing::Values(ComputeStoreBackend{
                             "postgres",
                             [](const WallClock* clock) {
                               return OpenOrNull(FreshDatabase(), clock);
                             }}),
                         compute::ComputeStoreBackendName);

std::unique_ptr<PgConn> ConnectOrDie(const std::string& url) {
  Result<std::unique_ptr<PgConn>> conn = PgConn::Connect(url);
  EXPECT_TRUE(conn.ok()) << conn.status().ToString();
  return conn.ok() ? std::move(conn).value() : nullptr;
}

// The first column of the first row of `sql` on a connection of its own
// ("<none>" for no rows).
std::string RawSql(const std::string& url, const std::string& sql) {
  std::unique_ptr<PgConn> conn = ConnectOrDie(url);
  if (conn == nullptr) return "";
  Result<PgResult> rows = conn->Exec(sql, {}, "raw sql");
  EXPECT_TRUE(rows.ok()) << sql << ": " << rows.status().ToString();
  if (!rows.ok()) return "";
  if (rows->rows() == 0) return "<none>";
  return std::string(rows->Text(0, 0));
}

void RawScript(const std::string& url, const std::string& sql) {
  std::unique_ptr<PgConn> conn = ConnectOrDie(url);
  ASSERT_NE(conn, nullptr);
  Status done = conn->RunScript(sql, "raw script");
  ASSERT_TRUE(done.ok()) << sql << ": " << done.ToString();
}

class PgComputeStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    url_ = FreshDatabase();
    ASSERT_FALSE(url_.empty());
    store_ = OpenOrNull(url_, &clock_);
    ASSERT_NE(store_, nullptr);
  }

  ModuleRecord MakeModule(const std::string& name) {
    Result<ModuleRecord> m = store_->UpsertModule(name, "", false);
    EXPECT_TRUE(m.ok()) << m.status().ToString();
    return m.ok() ? *m : ModuleRecord();
  }

  static VersionRecord Version(int64_t module_id,
                               std::vector<std::string> paths) {
    VersionRecord v;
    v.module_id = module_id;
    v.source_hash = "h";
    for (const std::string& p : paths) v.files[p] = "contents of " + p;
    return v;
  }

  size_t Count(const std::string& table) {
    return std::stoul(RawSql(url_, "SELECT count(*) FROM " + table));
  }

  FakeWallClock clock_{1'800'000'000'000'000};
  std::string url_;
  std::unique_ptr<ComputeStore> store_;
};

TEST_F(PgComputeStoreTest, OpeningTwiceKeepsTheTablesAndTheRows) {
  ModuleRecord m = MakeModule("sim");
  ASSERT_TRUE(store_->AddVersion(Version(m.id, {"src/lib.rs"})).ok());
  ASSERT_TRUE(store_->SetState(m.id, std::string("\x00\xff", 2), 0, true).ok());
  store_.reset();
  store_ = OpenOrNull(url_, &clock_);
  ASSERT_NE(store_, nullptr);
  std::unique_ptr<PgConn> conn = ConnectOrDie(url_);
  ASSERT_NE(conn, nullptr);
  EXPECT_TRUE(pg::EnsureComputeSchema(*conn).ok());
  Result<VersionRecord> v = store_->GetVersion(m.id, 1);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->files.at("src/lib.rs"), "contents of src/lib.rs");
  Result<StateBlob> state = store_->GetState(m.id);
  ASSERT_TRUE(state.ok());
  EXPECT_EQ(state->bytes, std::string("\x00\xff", 2));
  EXPECT_EQ(state->revision, 1);
  EXPECT_EQ(RawSql(url_,
                   "SELECT count(*) || ':' || max(version) FROM "
                   "tessera_schema WHERE component = 'compute'"),
            "1:1");
  EXPECT_EQ(RawSql(url_, "SELECT encode(bytes, 'hex') FROM compute_state"),
            "00ff");
}

// Nine connections at once on a fresh database, a third each creating the
// compute tables, the store's and the realms' (all create tessera_schema).
TEST(PgComputeSchemaTest, CreatedByNineConnectionsAtOnce) {
  const std::string url = FreshDatabase();
  ASSERT_FALSE(url.empty());
  constexpr int kConnections = 9;
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
      results[i] = i % 3 == 0   ? pg::EnsureComputeSchema(*conns[i])
                   : i % 3 == 1 ? pg::EnsureStoreSchema(*conns[i])
                                : pg::EnsureRealmSchema(*conns[i]);
    });
  }
  for (std::thread& t : threads) t.join();
  for (const Status& status : results) {
    EXPECT_TRUE(status.ok()) << status.ToString();
  }
  EXPECT_EQ(RawSql(url,
                   "SELECT count(*) FROM pg_tables WHERE tablename LIKE "
                   "'compute\\_%'"),
            "9");
  EXPECT_EQ(RawSql(url,
                   "SELECT string_agg(component || '=' || version, ',' "
                   "ORDER BY component) FROM tessera_schema"),
            "compute=1,realms=1,store=1");
}

TEST_F(PgComputeStoreTest, ANewerSchemaIsRefused) {
  RawSql(url_,
         "UPDATE tessera_schema SET version = 99 WHERE component = 'compute' "
         "RETURNING version");
  Result<std::unique_ptr<PgComputeStore>> store = PgComputeStore::Open(url_);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(store.status().message().find("version 99"), std::string::npos)
      << store.status().message();
}

// A second store (another process, in effect) on the same database sees
// every commit, shares the revision guard and numbers versions with the
// first; the shard store lives beside them.
TEST_F(PgComputeStoreTest, ASecondStoreSeesCommitsAndSharesTheGuard) {
  std::unique_ptr<ComputeStore> other = OpenOrNull(url_, &clock_);
  ASSERT_NE(other, nullptr);
  Result<std::unique_ptr<PgStore>> shards = PgStore::Open(url_);
  ASSERT_TRUE(shards.ok()) << shards.status().ToString();
  ASSERT_TRUE((*shards)->Save("arena", "saved").ok());
  ModuleRecord m = MakeModule("m");
  Result<ModuleRecord> seen = other->GetModule("m");
  ASSERT_TRUE(seen.ok()) << seen.status().ToString();
  EXPECT_EQ(seen->id, m.id);

  Result<StateBlob> read_by_other = other->GetState(m.id);
  ASSERT_TRUE(read_by_other.ok());
  ASSERT_TRUE(store_->SetState(m.id, "from one", 0, true).ok());
  Result<int64_t> stale =
      other->SetState(m.id, "from other", read_by_other->revision, false);
  ASSERT_FALSE(stale.ok());
  EXPECT_EQ(stale.status().code(), StatusCode::kAborted);
  Result<StateBlob> state = other->GetState(m.id);
  ASSERT_TRUE(state.ok());
  EXPECT_EQ(state->bytes, "from one");

  // Versions added by both at once get distinct numbers 1..n.
  constexpr int kEach = 20;
  std::vector<std::thread> threads;
  std::vector<int64_t> numbers[2];
  ComputeStore* stores[2] = {store_.get(), other.get()};
  for (int s = 0; s < 2; ++s) {
    threads.emplace_back([&, s] {
      for (int i = 0; i < kEach; ++i) {
        Result<int64_t> no = stores[s]->AddVersion(Version(m.id, {"a"}));
        EXPECT_TRUE(no.ok()) << no.status().ToString();
        if (no.ok()) numbers[s].push_back(*no);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  std::set<int64_t> all(numbers[0].begin(), numbers[0].end());
  all.insert(numbers[1].begin(), numbers[1].end());
  ASSERT_EQ(all.size(), 2u * kEach);
  EXPECT_EQ(*all.begin(), 1);
  EXPECT_EQ(*all.rbegin(), 2 * kEach);
  Result<std::optional<std::string>> saved = (*shards)->Load("arena");
  ASSERT_TRUE(saved.ok());
  EXPECT_EQ(*saved, std::optional<std::string>("saved"));
}

// One store deletes modules while another writes their state, versions
// and triggers: every write either lands or finds no module (kNotFound),
// never a deadlock or a foreign key error (kIo).
TEST_F(PgComputeStoreTest, DeletingWhileAnotherStoreWritesNeverDeadlocks) {
  std::unique_ptr<ComputeStore> other = OpenOrNull(url_, &clock_);
  ASSERT_NE(other, nullptr);
  for (int round = 0; round < 10; ++round) {
    ModuleRecord m = MakeModule("m" + std::to_string(round));
    ASSERT_TRUE(store_->SetState(m.id, "s", 0, true).ok());
    std::thread writer([&] {
      for (int i = 0; i < 10; ++i) {
        Result<int64_t> state = other->SetState(m.id, "w", 0, true);
        Result<int64_t> version = other->AddVersion(Version(m.id, {"a"}));
        Result<compute::TriggerRecord> trigger =
            other->UpsertTrigger(compute::conformance::MakeTrigger(
                m.id, compute::TriggerType::kTick));
        for (const Status& st :
             {state.status(), version.status(), trigger.status()}) {
          EXPECT_TRUE(st.ok() || st.code() == StatusCode::kNotFound)
              << st.ToString();
        }
      }
    });
    Status deleted = store_->DeleteModule(m.id);
    writer.join();
    EXPECT_TRUE(deleted.ok()) << deleted.ToString();
  }
  EXPECT_EQ(Count("compute_modules"), 0u);
}

TEST(PgComputeOpenTest, BadUrlsAndUnreachableServersAreClearErrors) {
  Result<std::unique_ptr<ComputeStore>> store =
      OpenPgComputeStore("sqlite:/tmp/x.db");
  EXPECT_EQ(store.status().code(), StatusCode::kInvalidArgument);
  store = OpenPgComputeStore("postgresql://test@127.0.0.1:5432/db?bogus=1");
  EXPECT_EQ(store.status().code(), StatusCode::kInvalidArgument)
      << store.status().ToString();
  // Port 1 on loopback: nothing listens there.
  store = OpenPgComputeStore("postgresql://test:secret@127.0.0.1:1/postgres");
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kIo);
  EXPECT_NE(store.status().message().find("cannot connect"), std::string::npos)
      << store.status().message();
  EXPECT_EQ(store.status().message().find("secret"), std::string::npos)
      << store.status().message();
  PgTestCluster* cluster = Cluster();
  ASSERT_NE(cluster, nullptr);
  store = OpenPgComputeStore(cluster->UrlOf("no_such_db"));
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kIo);
  EXPECT_NE(store.status().message().find("no_such_db"), std::string::npos)
      << store.status().message();
}

// Statements failing on the server inside a transaction (triggers raise
// on a version file 'boom', a run or a log whose entry / message is
// 'boom', and on deleting the logs of a module): what the transaction
// wrote before is rolled back, and the store goes on.
TEST_F(PgComputeStoreTest, ATransactionFailingMidwayCommitsNothing) {
  ModuleRecord m = MakeModule("m");
  std::vector<LogRecord> kept(1);
  kept[0].module_id = m.id;
  kept[0].message = "kept";
  ASSERT_TRUE(store_->AddLogs(kept).ok());
  RawScript(url_, R"sql(
    CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION '% refused', TG_ARGV[0]; END $$;
    CREATE TRIGGER no_boom_file BEFORE INSERT ON compute_version_files
      FOR EACH ROW WHEN (NEW.path = 'boom'::bytea)
      EXECUTE FUNCTION refuse('file');
    CREATE TRIGGER no_boom_run BEFORE INSERT ON compute_runs
      FOR EACH ROW WHEN (NEW.entry = 'boom'::bytea)
      EXECUTE FUNCTION refuse('run');
    CREATE TRIGGER no_boom_log BEFORE INSERT ON compute_logs
      FOR EACH ROW WHEN (NEW.message = 'boom'::bytea)
      EXECUTE FUNCTION refuse('log');
    CREATE TRIGGER no_log_delete BEFORE DELETE ON compute_logs
      FOR EACH ROW EXECUTE FUNCTION refuse('delete');
  )sql");

  Result<int64_t> added = store_->AddVersion(Version(m.id, {"a", "boom"}));
  ASSERT_FALSE(added.ok());
  EXPECT_EQ(added.status().code(), StatusCode::kIo);
  EXPECT_NE(added.status().message().find("file refused"), std::string::npos)
      << added.status().message();
  EXPECT_EQ(Count("compute_versions"), 0u);
  EXPECT_EQ(Count("compute_version_files"), 0u);

  std::vector<RunRecord> runs(3);
  for (RunRecord& r : runs) r.module_id = m.id;
  runs[2].entry = "boom";
  Status st = store_->AddRuns(runs);
  EXPECT_EQ(st.code(), StatusCode::kIo) << st.ToString();
  EXPECT_EQ(Count("compute_runs"), 0u);

  std::vector<LogRecord> logs(2);
  logs[0].module_id = logs[1].module_id = m.id;
  logs[1].message = "boom";
  st = store_->AddLogs(logs);
  EXPECT_EQ(st.code(), StatusCode::kIo) << st.ToString();
  EXPECT_EQ(Count("compute_logs"), 1u);

  // DeleteModule removes the state and the versions before the logs.
  ASSERT_TRUE(store_->SetState(m.id, "s", 0, true).ok());
  ASSERT_TRUE(store_->AddVersion(Version(m.id, {"a"})).ok());
  st = store_->DeleteModule(m.id);
  EXPECT_EQ(st.code(), StatusCode::kIo) << st.ToString();
  EXPECT_NE(st.message().find("delete refused"), std::string::npos)
      << st.message();
  EXPECT_TRUE(store_->GetModule("m").ok());
  EXPECT_TRUE(store_->GetVersion(m.id, 1).ok());
  Result<StateBlob> state = store_->GetState(m.id);
  ASSERT_TRUE(state.ok());
  EXPECT_EQ(state->bytes, "s");

  // No transaction was left open.
  RawScript(url_, "DROP TRIGGER no_log_delete ON compute_logs");
  runs[2].entry = "fine";
  ASSERT_TRUE(store_->AddRuns(runs).ok());
  EXPECT_EQ(Count("compute_runs"), 3u);
  ASSERT_TRUE(store_->DeleteModule(m.id).ok());
  EXPECT_EQ(Count("compute_logs"), 0u);
  EXPECT_EQ(Count("compute_runs"), 0u);
}

TEST_F(PgComputeStoreTest, AnUnknownEnumNameIsAnIoError) {
  ModuleRecord m = MakeModule("m");
  RawSql(url_, "UPDATE compute_modules SET circuit = 'ajar' RETURNING id");
  Result<ModuleRecord> got = store_->GetModule("m");
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kIo);
  EXPECT_NE(got.status().message().find("\"ajar\""), std::string::npos)
      << got.status().message();
  Result<std::vector<ModuleRecord>> all = store_->ListModules();
  EXPECT_EQ(all.status().code(), StatusCode::kIo);
  EXPECT_TRUE(store_->GetState(m.id).ok());
}

// The server ends the store's session (a restart, a failover, an admin):
// the call that finds out fails, the next one runs on a new connection; a
// transaction cut off that way, before it or inside it, wrote nothing.
TEST_F(PgComputeStoreTest, ALostConnectionIsResetForTheNextCall) {
  ModuleRecord m = MakeModule("m");
  const std::string database = url_.substr(url_.rfind('/') + 1);
  const std::string kill_others =
      "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE "
      "datname = '" +
      database + "' AND pid <> pg_backend_pid()";
  for (int round = 0; round < 2; ++round) {
    EXPECT_NE(RawSql(url_, kill_others), "0");
    Result<int64_t> written = store_->SetState(m.id, "after", round, false);
    if (!written.ok()) {
      EXPECT_EQ(written.status().code(), StatusCode::kIo)
          << written.status().ToString();
      Result<StateBlob> state = store_->GetState(m.id);
      ASSERT_TRUE(state.ok()) << state.status().ToString();
      EXPECT_EQ(state->revision, round);
      written = store_->SetState(m.id, "after", round, false);
    }
    ASSERT_TRUE(written.ok()) << written.status().ToString();
    EXPECT_EQ(*written, round + 1);
  }
  // The session dies inside AddVersion, after the version row and its
  // first file (a trigger ends its own backend): nothing of it committed.
  RawScript(url_, R"sql(
    CREATE FUNCTION die() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN PERFORM pg_terminate_backend(pg_backend_pid());
      PERFORM pg_sleep(5); RETURN NEW; END $$;
    CREATE TRIGGER die BEFORE INSERT ON compute_version_files FOR EACH ROW
      WHEN (NEW.path = 'die'::bytea) EXECUTE FUNCTION die();
  )sql");
  Result<int64_t> cut = store_->AddVersion(Version(m.id, {"a", "die"}));
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.status().code(), StatusCode::kIo) << cut.status().ToString();
  Result<std::vector<VersionRecord>> versions =
      store_->ListVersions(m.id, 10, true);
  ASSERT_TRUE(versions.ok()) << versions.status().ToString();
  EXPECT_TRUE(versions->empty());
  Result<int64_t> added = store_->AddVersion(Version(m.id, {"a"}));
  ASSERT_TRUE(added.ok()) << added.status().ToString();
  EXPECT_EQ(*added, 1);
}

}  // namespace
}  // namespace tessera::store
