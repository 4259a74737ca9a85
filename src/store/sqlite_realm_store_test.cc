// The SQLite realm store: the conformance suite (in memory and on a real
// WAL file), plus what only the durable adapter has (reopening, the
// tables, the store URL forms and the file beside the store's).
#include "store/sqlite_realm_store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "realm/realm_store_conformance.h"
#include "store/store.h"
#include "store/test_util.h"

namespace tessera::store {
namespace {

using realm::LoadedRealm;
using realm::LoggedCommit;
using realm::RealmAppend;
using realm::RealmSnapshot;
using realm::RealmStore;
using realm::RealmStoreConformanceTest;
using testing::ScratchDir;

std::unique_ptr<SqliteRealmStore> OpenRealmsOrDie(const std::string& path) {
  Result<std::unique_ptr<SqliteRealmStore>> store =
      SqliteRealmStore::Open(path);
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  return store.ok() ? std::move(store).value() : nullptr;
}

// A store on a file of a scratch directory of its own, removed with it.
class ScratchFileRealmStore final : public RealmStore {
 public:
  ScratchFileRealmStore() : inner_(OpenRealmsOrDie(dir_.File("realms.db"))) {}
  bool ok() const { return inner_ != nullptr; }

  Status Create(std::string_view key, std::string_view kind,
                const RealmSnapshot& genesis) override {
    return inner_->Create(key, kind, genesis);
  }
  Status Append(std::span<const RealmAppend> entries) override {
    return inner_->Append(entries);
  }
  Status PutSnapshot(std::string_view key, const RealmSnapshot& snapshot,
                     int64_t log_window) override {
    return inner_->PutSnapshot(key, snapshot, log_window);
  }
  Result<std::optional<LoadedRealm>> Load(std::string_view key) override {
    return inner_->Load(key);
  }
  Result<std::vector<LoggedCommit>> ReadLog(std::string_view key, int64_t epoch,
                                            int64_t after,
                                            size_t limit) override {
    return inner_->ReadLog(key, epoch, after, limit);
  }
  Status StartEpoch(std::string_view key, const RealmSnapshot& first) override {
    return inner_->StartEpoch(key, first);
  }
  Status Drop(std::string_view key) override { return inner_->Drop(key); }
  Result<std::vector<std::string>> List(std::string_view kind) override {
    return inner_->List(kind);
  }
  Result<std::vector<realm::StoredAlarm>> ListAlarms() override {
    return inner_->ListAlarms();
  }

 private:
  ScratchDir dir_;  // outlives inner_
  std::unique_ptr<SqliteRealmStore> inner_;
};

INSTANTIATE_TEST_SUITE_P(
    Sqlite, RealmStoreConformanceTest,
    ::testing::Values(
        realm::RealmStoreBackend{"memory",
                                 []() -> std::unique_ptr<RealmStore> {
                                   return OpenRealmsOrDie(":memory:");
                                 }},
        realm::RealmStoreBackend{
            "file",
            []() -> std::unique_ptr<RealmStore> {
              auto store = std::make_unique<ScratchFileRealmStore>();
              if (!store->ok()) return nullptr;
              return store;
            }}),
    realm::RealmStoreBackendName);

// The first column of the last row of `sql` on a connection of its own.
std::string RealmRawSql(const std::string& path, const std::string& sql) {
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

std::vector<RealmAppend> OneEntry(const std::string& key, int64_t epoch,
                                  int64_t from, int64_t to) {
  RealmAppend entry{key, epoch, {}, {}, {}};
  for (int64_t v = from; v <= to; ++v) {
    entry.commits.push_back({v, "patch-" + std::to_string(v)});
  }
  return {entry};
}

TEST(SqliteRealmStoreTest, ReopeningKeepsRealmsLogsAndSnapshots) {
  ScratchDir dir;
  const std::string path = dir.File("app/realms.db");
  const RealmSnapshot snap{1, 3, "h1", R"({"v":3})"};
  {
    std::unique_ptr<SqliteRealmStore> store = OpenRealmsOrDie(path);
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->Create("match/m-1", "match", {1, 0, "h1", "{}"}).ok());
    ASSERT_TRUE(store->Append(OneEntry("match/m-1", 1, 1, 5)).ok());
    ASSERT_TRUE(store->PutSnapshot("match/m-1", snap, 1).ok());
    ASSERT_TRUE(store->Create("lobby/main", "lobby", {4, 9, "h2", "{}"}).ok());
  }
  std::unique_ptr<SqliteRealmStore> store = OpenRealmsOrDie(path);
  ASSERT_NE(store, nullptr);
  Result<std::optional<LoadedRealm>> loaded = store->Load("match/m-1");
  ASSERT_TRUE(loaded.ok() && loaded->has_value());
  EXPECT_EQ((*loaded)->snapshot, snap);
  EXPECT_EQ((*loaded)->head_version(), 5);
  ASSERT_EQ((*loaded)->tail.size(), 2u);
  EXPECT_EQ((*loaded)->tail[1], (LoggedCommit{5, "patch-5"}));
  Result<std::vector<LoggedCommit>> log = store->ReadLog("match/m-1", 1, 2, 10);
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  EXPECT_EQ(log->size(), 3u);
  EXPECT_EQ(store->ReadLog("match/m-1", 1, 1, 10).status().code(),
            StatusCode::kOutOfRange);
  ASSERT_TRUE(store->Append(OneEntry("match/m-1", 1, 6, 6)).ok());
  Result<std::vector<std::string>> all = store->List("");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(*all, (std::vector<std::string>{"lobby/main", "match/m-1"}));
}

TEST(SqliteRealmStoreTest, TheRowsAreTheTablesOfMigration5) {
  ScratchDir dir;
  const std::string path = dir.File("realms.db");
  std::unique_ptr<SqliteRealmStore> store = OpenRealmsOrDie(path);
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Create("r", "match", {1, 0, "h", R"({"a":1})"}).ok());
  ASSERT_TRUE(store->Append(OneEntry("r", 1, 1, 3)).ok());
  ASSERT_TRUE(store->PutSnapshot("r", {1, 2, "h", R"({"a":2})"}, 1).ok());
  EXPECT_EQ(RealmRawSql(path, "PRAGMA journal_mode"), "wal");
  EXPECT_EQ(RealmRawSql(path,
                        "SELECT kind || '|' || epoch || '|' || head_version "
                        "FROM realms WHERE key = 'r'"),
            "match|1|3");
  // Version 1 is at the window's edge (2 - 1) and went; the older
  // snapshot went with the new one's arrival.
  EXPECT_EQ(RealmRawSql(path,
                        "SELECT group_concat(version, ',') FROM "
                        "(SELECT version FROM realm_log ORDER BY "
                        "version)"),
            "2,3");
  EXPECT_EQ(RealmRawSql(path,
                        "SELECT CAST(patch AS TEXT) FROM realm_log "
                        "WHERE version = 3"),
            "patch-3");
  EXPECT_EQ(RealmRawSql(path,
                        "SELECT group_concat(version || ':' || state) "
                        "FROM realm_snapshots"),
            R"(2:{"a":2})");
}

TEST(SqliteRealmStoreTest, OpenRealmStoreUsesTheFileBesideTheStore) {
  ScratchDir dir;
  for (const std::string& url :
       {"sqlite:" + dir.File("a.db"), "sqlite://" + dir.File("b.db"),
        dir.File("c/d.db")}) {
    Result<std::unique_ptr<RealmStore>> store = OpenRealmStore(url);
    ASSERT_TRUE(store.ok()) << url << ": " << store.status().ToString();
    ASSERT_TRUE((*store)->Create("r", "k", {1, 0, "", "{}"}).ok());
  }
  EXPECT_TRUE(std::filesystem::exists(dir.File("a-realms.db")));
  EXPECT_TRUE(std::filesystem::exists(dir.File("b-realms.db")));
  EXPECT_TRUE(std::filesystem::exists(dir.File("c/d-realms.db")));
  EXPECT_FALSE(std::filesystem::exists(dir.File("a.db")));
  Result<std::unique_ptr<RealmStore>> memory =
      OpenRealmStore("sqlite::memory:");
  ASSERT_TRUE(memory.ok()) << memory.status().ToString();
  EXPECT_TRUE((*memory)->Create("r", "k", {1, 0, "", "{}"}).ok());
  EXPECT_EQ(OpenRealmStore("").status().code(), StatusCode::kInvalidArgument);
}

// A log edited by hand so that it skips a version is an error at Load,
// never a guessed document.
TEST(SqliteRealmStoreTest, ALogWithAHoleIsAnIoErrorAtLoad) {
  ScratchDir dir;
  const std::string path = dir.File("realms.db");
  {
    std::unique_ptr<SqliteRealmStore> store = OpenRealmsOrDie(path);
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->Create("r", "match", {1, 0, "h", "{}"}).ok());
    ASSERT_TRUE(store->Append(OneEntry("r", 1, 1, 3)).ok());
  }
  RealmRawSql(path, "DELETE FROM realm_log WHERE version = 2");
  std::unique_ptr<SqliteRealmStore> store = OpenRealmsOrDie(path);
  ASSERT_NE(store, nullptr);
  Result<std::optional<LoadedRealm>> loaded = store->Load("r");
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), StatusCode::kIo);
  EXPECT_NE(loaded.status().message().find("skips"), std::string::npos)
      << loaded.status().message();
}

// Not a test: the group commit figure (run with
// --gtest_also_run_disabled_tests). Appends batches of 64-byte patches to
// one realm on a real file, each batch one durable transaction.
TEST(SqliteRealmStoreBench, DISABLED_GroupCommitThroughput) {
  ScratchDir dir;
  std::unique_ptr<SqliteRealmStore> store =
      OpenRealmsOrDie(dir.File("bench.db"));
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Create("r", "bench", {1, 0, "", "{}"}).ok());
  int64_t head = 0;
  for (int batch : {1, 16, 128, 512}) {
    const auto start = std::chrono::steady_clock::now();
    int64_t commits = 0;
    while (std::chrono::steady_clock::now() - start <
           std::chrono::milliseconds(1000)) {
      RealmAppend entry{"r", 1, {}, {}, {}};
      for (int i = 0; i < batch; ++i) {
        entry.commits.push_back({++head, std::string(64, 'p')});
      }
      std::vector<RealmAppend> entries = {entry};
      ASSERT_TRUE(store->Append(entries).ok());
      commits += batch;
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    std::printf("batch %4d: %9.0f commits/s, %6.0f appends/s\n", batch,
                commits / seconds, commits / seconds / batch);
  }
}

}  // namespace
}  // namespace tessera::store
