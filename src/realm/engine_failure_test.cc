// RealmInstance when its store fails: a failed Append stops the instance
// until it is reopened; a failed snapshot loses nothing and is retried.
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "realm/engine.h"
#include "realm/engine_testing.h"
#include "store/sqlite_realm_store.h"

namespace tessera::realm {
namespace {

using namespace engine_testing;  // NOLINT
using store::SqliteRealmStore;

TEST(RealmEngineTest, AFailedFlushStopsTheInstanceUntilReopened) {
  std::unique_ptr<SqliteRealmStore> store = OpenStore(":memory:");
  std::unique_ptr<RealmInstance> a = OpenRealm(Kind(), store.get());
  std::unique_ptr<RealmInstance> b = OpenRealm(Kind(), store.get());
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  Commit(a.get(), 1);
  ASSERT_TRUE(a->Flush().ok());
  Commit(b.get(), 100);  // a second writer at the same version: fenced off
  EXPECT_EQ(b->Flush().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(b->Submit({Set(P({"n"}), 1)}, "").status().code(),
            StatusCode::kUnavailable);
  EXPECT_EQ(b->Flush().code(), StatusCode::kUnavailable);
  EXPECT_EQ(b->CatchUp(1, 0).status().code(), StatusCode::kUnavailable);
  b = OpenRealm(Kind(), store.get());
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->version(), 1);
  EXPECT_EQ(b->state()["n"], 1);
}

// Delegates to a real store; PutSnapshot fails while `fail_snapshots`.
class SnapshotFailingStore final : public RealmStore {
 public:
  explicit SnapshotFailingStore(RealmStore* real) : real_(real) {}
  bool fail_snapshots = true;
  Status Create(std::string_view key, std::string_view kind,
                const RealmSnapshot& genesis) override {
    return real_->Create(key, kind, genesis);
  }
  Status Append(std::span<const RealmAppend> entries) override {
    return real_->Append(entries);
  }
  Status PutSnapshot(std::string_view key, const RealmSnapshot& snapshot,
                     int64_t log_window) override {
    if (fail_snapshots) return IoError("disk full");
    return real_->PutSnapshot(key, snapshot, log_window);
  }
  Result<std::optional<LoadedRealm>> Load(std::string_view key) override {
    return real_->Load(key);
  }
  Result<std::vector<LoggedCommit>> ReadLog(std::string_view key, int64_t epoch,
                                            int64_t after,
                                            size_t limit) override {
    return real_->ReadLog(key, epoch, after, limit);
  }
  Status StartEpoch(std::string_view key, const RealmSnapshot& first) override {
    return real_->StartEpoch(key, first);
  }
  Status Drop(std::string_view key) override { return real_->Drop(key); }
  Result<std::vector<std::string>> List(std::string_view kind) override {
    return real_->List(kind);
  }
  Result<std::vector<StoredAlarm>> ListAlarms() override {
    return real_->ListAlarms();
  }

 private:
  RealmStore* real_;
};

TEST(RealmEngineTest, AFailedSnapshotKeepsTheCommitsAndIsRetried) {
  std::unique_ptr<SqliteRealmStore> real = OpenStore(":memory:");
  SnapshotFailingStore store(real.get());
  std::unique_ptr<RealmInstance> realm = OpenRealm(Kind(), &store);
  ASSERT_NE(realm, nullptr);
  for (int i = 1; i <= 9; ++i) Commit(realm.get(), i);
  EXPECT_TRUE(realm->Flush().ok());  // crossed 8: the snapshot fails
  EXPECT_EQ(realm->durable_version(), 9);
  EXPECT_EQ(realm->last_snapshot_status().code(), StatusCode::kIo);
  EXPECT_EQ(Loaded(real.get()).snapshot.version, 0);
  EXPECT_EQ(Loaded(real.get()).head_version(), 9);
  store.fail_snapshots = false;
  Commit(realm.get(), 10);
  EXPECT_TRUE(realm->Flush().ok());
  EXPECT_TRUE(realm->last_snapshot_status().ok());
  EXPECT_EQ(Loaded(real.get()).snapshot.version, 10);
}

}  // namespace
}  // namespace tessera::realm
