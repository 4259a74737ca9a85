#include "store/sqlite_compute_store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <memory>
#include <string>

#include "compute/compute_store_conformance.h"
#include "store/sqlite_store.h"
#include "store/store.h"
#include "store/test_util.h"

namespace tessera::store {
namespace {

using compute::ComputeStore;
using compute::ComputeStoreBackend;
using compute::ComputeStoreConformanceTest;
using compute::LogRecord;
using compute::ModuleRecord;
using compute::Policy;
using compute::RunRecord;
using compute::StateBlob;
using compute::TriggerRecord;
using compute::UsageRow;
using compute::VersionRecord;
using testing::ScratchDir;

std::unique_ptr<ComputeStore> OpenOrNull(const std::string& path,
                                         const WallClock* clock) {
  SqliteComputeStore::Options options;
  options.wall_clock = clock;
  Result<std::unique_ptr<SqliteComputeStore>> store =
      SqliteComputeStore::Open(path, options);
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  if (!store.ok()) return nullptr;
  return std::move(store).value();
}

// The files of the "file" backend: one directory for the test binary.
std::string NextFile() {
  static ScratchDir dir;
  static int n = 0;
  return dir.File("conformance-" + std::to_string(++n) + ".db");
}

INSTANTIATE_TEST_SUITE_P(
    Sqlite, ComputeStoreConformanceTest,
    ::testing::Values(ComputeStoreBackend{"memory",
                                          [](const WallClock* clock) {
                                            return OpenOrNull(":memory:",
                                                              clock);
                                          }},
                      ComputeStoreBackend{"file",
                                          [](const WallClock* clock) {
                                            return OpenOrNull(NextFile(),
                                                              clock);
                                          }}),
    compute::ComputeStoreBackendName);

// Runs `sql` on a connection of its own.
void RawSql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* error = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK)
      << sql << ": " << (error ? error : "");
  sqlite3_free(error);
  sqlite3_close(db);
}

class SqliteComputeStoreTest : public ::testing::Test {
 protected:
  std::unique_ptr<ComputeStore> Open() { return OpenOrNull(path_, &clock_); }

  ScratchDir dir_;
  std::string path_ = dir_.File("app/tessera.db");
  FakeWallClock clock_{1'800'000'000'000'000};
};

TEST_F(SqliteComputeStoreTest, EverythingSurvivesAReopen) {
  int64_t module_id = 0;
  {
    std::unique_ptr<ComputeStore> store = Open();
    ASSERT_NE(store, nullptr);
    Result<ModuleRecord> m = store->UpsertModule("sim", "world", true);
    ASSERT_TRUE(m.ok());
    module_id = m->id;
    ModuleRecord state = *m;
    state.enabled = true;
    state.active_version = 1;
    ASSERT_TRUE(store->UpdateModuleState(state).ok());
    VersionRecord v;
    v.module_id = module_id;
    v.files = {{"Cargo.toml", "[package]"}, {"src/lib.rs", "fn x() {}"}};
    v.source_hash = "abc";
    ASSERT_TRUE(store->AddVersion(v).ok());
    TriggerRecord t;
    t.module_id = module_id;
    t.tick_hz = 2;
    ASSERT_TRUE(store->UpsertTrigger(t).ok());
    Policy p;
    p.max_modules = 4;
    ASSERT_TRUE(store->SetPolicy(p).ok());
    std::vector<RunRecord> runs(1);
    runs[0].module_id = module_id;
    runs[0].flow_id = "f1";
    ASSERT_TRUE(store->AddRuns(runs).ok());
    std::vector<UsageRow> usage(1);
    usage[0].module_id = module_id;
    usage[0].ticks = 9;
    ASSERT_TRUE(store->AddUsage(usage).ok());
    std::vector<LogRecord> logs(1);
    logs[0].module_id = module_id;
    logs[0].message = "hello";
    ASSERT_TRUE(store->AddLogs(logs).ok());
    ASSERT_TRUE(store->SetState(module_id, "blob", 0, true).ok());
  }
  std::unique_ptr<ComputeStore> store = Open();
  ASSERT_NE(store, nullptr);
  Result<ModuleRecord> m = store->GetModule("sim");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->id, module_id);
  EXPECT_TRUE(m->enabled);
  EXPECT_TRUE(m->always_on);
  Result<VersionRecord> v = store->GetVersion(module_id, 1);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->files.at("src/lib.rs"), "fn x() {}");
  Result<std::vector<TriggerRecord>> t = store->ListTriggers(module_id);
  ASSERT_TRUE(t.ok());
  ASSERT_EQ(t->size(), 1u);
  EXPECT_EQ((*t)[0].tick_hz, 2);
  Result<std::optional<Policy>> p = store->GetPolicy();
  ASSERT_TRUE(p.ok() && p->has_value());
  EXPECT_EQ((*p)->max_modules, 4);
  Result<std::vector<RunRecord>> runs = store->ListRuns({});
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ((*runs)[0].flow_id, "f1");
  Result<std::vector<UsageRow>> usage = store->ListUsage(module_id, 0);
  ASSERT_TRUE(usage.ok());
  ASSERT_EQ(usage->size(), 1u);
  EXPECT_EQ((*usage)[0].ticks, 9);
  Result<std::vector<LogRecord>> logs = store->ListLogs({});
  ASSERT_TRUE(logs.ok());
  ASSERT_EQ(logs->size(), 1u);
  EXPECT_EQ((*logs)[0].message, "hello");
  Result<StateBlob> state = store->GetState(module_id);
  ASSERT_TRUE(state.ok());
  EXPECT_EQ(state->bytes, "blob");
  EXPECT_EQ(state->revision, 1);
}

// The compute store and the shard store are two connections to one file;
// two compute connections share the revision guard.
TEST_F(SqliteComputeStoreTest, ConnectionsShareTheFileAndTheGuard) {
  Result<std::unique_ptr<SqliteStore>> shards = SqliteStore::Open(path_);
  ASSERT_TRUE(shards.ok()) << shards.status().ToString();
  std::unique_ptr<ComputeStore> a = Open();
  std::unique_ptr<ComputeStore> b = Open();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE((*shards)->Save("arena", "saved").ok());
  Result<ModuleRecord> m = a->UpsertModule("m", "", false);
  ASSERT_TRUE(m.ok());
  Result<ModuleRecord> seen = b->GetModule("m");
  ASSERT_TRUE(seen.ok());
  EXPECT_EQ(seen->id, m->id);

  Result<StateBlob> read_by_b = b->GetState(m->id);
  ASSERT_TRUE(read_by_b.ok());
  ASSERT_TRUE(a->SetState(m->id, "from a", 0, true).ok());
  Result<int64_t> stale = b->SetState(m->id, "from b", read_by_b->revision,
                                      /*lease_holder=*/false);
  ASSERT_FALSE(stale.ok());
  EXPECT_EQ(stale.status().code(), StatusCode::kAborted);
  Result<StateBlob> state = a->GetState(m->id);
  ASSERT_TRUE(state.ok());
  EXPECT_EQ(state->bytes, "from a");
  Result<std::optional<std::string>> saved = (*shards)->Load("arena");
  ASSERT_TRUE(saved.ok());
  EXPECT_EQ(*saved, std::optional<std::string>("saved"));
}

TEST_F(SqliteComputeStoreTest, AnUnknownEnumNameInTheFileIsAnIoError) {
  {
    std::unique_ptr<ComputeStore> store = Open();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->UpsertModule("m", "", false).ok());
  }
  RawSql(path_, "UPDATE compute_modules SET circuit = 'ajar'");
  std::unique_ptr<ComputeStore> store = Open();
  ASSERT_NE(store, nullptr);
  Result<ModuleRecord> m = store->GetModule("m");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kIo);
  EXPECT_NE(m.status().message().find("\"ajar\""), std::string::npos)
      << m.status().message();
  EXPECT_NE(m.status().message().find(path_), std::string::npos);
}

TEST(OpenComputeStoreTest, UrlForms) {
  Result<std::unique_ptr<ComputeStore>> memory =
      OpenComputeStore("sqlite::memory:");
  ASSERT_TRUE(memory.ok()) << memory.status().ToString();
  EXPECT_TRUE((*memory)->UpsertModule("m", "", false).ok());

  ScratchDir dir;
  const std::string path = dir.File("d/x.db");
  Result<std::unique_ptr<ComputeStore>> file =
      OpenComputeStore("sqlite:" + path);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  ASSERT_TRUE((*file)->UpsertModule("m", "", false).ok());
  file = OpenComputeStore(path);  // a plain path: the same file
  ASSERT_TRUE(file.ok());
  EXPECT_TRUE((*file)->GetModule("m").ok());

  Result<std::unique_ptr<ComputeStore>> other = OpenComputeStore("ftp://x");
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().code(), StatusCode::kInvalidArgument);
  Result<std::unique_ptr<ComputeStore>> empty = OpenComputeStore("");
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tessera::store
