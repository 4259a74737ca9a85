// RealmInstance over the real SqliteRealmStore (a temp file or
// ":memory:"): genesis, commits and reopen, snapshots, rules, catch-up,
// schema changes and ephemeral realms.
#include "realm/engine.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "realm/engine_testing.h"
#include "store/sqlite_realm_store.h"
#include "store/test_util.h"

namespace tessera::realm {
namespace {

using namespace engine_testing;  // NOLINT
using store::SqliteRealmStore;
using store::testing::ScratchDir;

TEST(RealmEngineTest, FirstOpenIsGenesisAtEpochOneVersionZero) {
  std::unique_ptr<SqliteRealmStore> store = OpenStore(":memory:");
  std::unique_ptr<RealmInstance> realm = OpenRealm(Kind(), store.get());
  ASSERT_NE(realm, nullptr);
  EXPECT_EQ(realm->epoch(), 1);
  EXPECT_EQ(realm->version(), 0);
  EXPECT_EQ(realm->durable_version(), 0);
  EXPECT_EQ(realm->state(), Initial());
  Result<std::optional<LoadedRealm>> loaded = store->Load("match/m1");
  ASSERT_TRUE(loaded.ok() && loaded->has_value());
  EXPECT_EQ((*loaded)->kind, "match");
  EXPECT_EQ((*loaded)->snapshot.version, 0);
  EXPECT_EQ((*loaded)->snapshot.schema_hash, Kind().schema_hash);
}

TEST(RealmEngineTest, FlushedCommitsSurviveReopenUnflushedOnesDoNot) {
  ScratchDir dir;
  const std::string path = dir.File("realms.db");
  Json flushed;
  {
    std::unique_ptr<SqliteRealmStore> store = OpenStore(path);
    std::unique_ptr<RealmInstance> realm = OpenRealm(Kind(), store.get());
    ASSERT_NE(realm, nullptr);
    for (int i = 1; i <= 5; ++i) EXPECT_EQ(Commit(realm.get(), i), i);
    ASSERT_TRUE(
        realm->Submit({Set(P({"players", "a"}), {{"hp", 3}})}, "a").ok());
    EXPECT_EQ(realm->durable_version(), 0);
    ASSERT_TRUE(realm->Flush().ok());
    EXPECT_EQ(realm->durable_version(), 6);
    flushed = realm->state();
    Commit(realm.get(), 7);  // never flushed
    EXPECT_EQ(realm->version(), 7);
  }
  std::unique_ptr<SqliteRealmStore> store = OpenStore(path);
  std::unique_ptr<RealmInstance> realm = OpenRealm(Kind(), store.get());
  ASSERT_NE(realm, nullptr);
  EXPECT_EQ(realm->version(), 6);
  EXPECT_EQ(realm->durable_version(), 6);
  EXPECT_EQ(realm->state(), flushed);
  EXPECT_EQ(realm->state()["players"]["a"]["hp"], 3);
  EXPECT_EQ(Commit(realm.get(), 7), 7);
}

TEST(RealmEngineTest, SnapshotEveryNVersionsThenReopenReplaysAShortTail) {
  ScratchDir dir;
  const std::string path = dir.File("realms.db");
  Json state;
  {
    std::unique_ptr<SqliteRealmStore> store = OpenStore(path);
    std::unique_ptr<RealmInstance> realm = OpenRealm(Kind(), store.get());
    ASSERT_NE(realm, nullptr);
    for (int i = 1; i <= 7; ++i) {
      Commit(realm.get(), i);
      ASSERT_TRUE(realm->Flush().ok());
    }
    EXPECT_EQ(Loaded(store.get()).snapshot.version, 0);
    for (int i = 8; i <= 20; ++i) {
      Commit(realm.get(), i);
      ASSERT_TRUE(realm->Flush().ok());
    }
    Result<std::optional<LoadedRealm>> loaded = store->Load("match/m1");
    ASSERT_TRUE(loaded.ok() && loaded->has_value());
    EXPECT_EQ((*loaded)->snapshot.version, 16);
    ASSERT_EQ((*loaded)->tail.size(), 4u);
    EXPECT_EQ((*loaded)->tail.front().version, 17);
    state = realm->state();
    // One group commit across a multiple snapshots at its head.
    for (int i = 21; i <= 26; ++i) Commit(realm.get(), i);
    ASSERT_TRUE(realm->Flush().ok());
    EXPECT_EQ(Loaded(store.get()).snapshot.version, 26);
    EXPECT_TRUE(Loaded(store.get()).tail.empty());
    state = realm->state();
  }
  std::unique_ptr<SqliteRealmStore> store = OpenStore(path);
  std::unique_ptr<RealmInstance> realm = OpenRealm(Kind(), store.get());
  ASSERT_NE(realm, nullptr);
  EXPECT_EQ(realm->version(), 26);
  EXPECT_EQ(realm->state(), state);
  EXPECT_EQ(realm->state()["n"], 26);
}

TEST(RealmEngineTest, RuleRefusalLeavesDocumentAndVersionUnchanged) {
  std::unique_ptr<SqliteRealmStore> store = OpenStore(":memory:");
  std::unique_ptr<RealmInstance> realm = OpenRealm(Kind(), store.get());
  ASSERT_NE(realm, nullptr);
  Result<int64_t> refused =
      realm->Submit({Set(P({"players", "b", "hp"}), 1)}, "a");
  EXPECT_EQ(refused.status().code(), StatusCode::kPermissionDenied);
  refused = realm->Submit({Set(P({"n"}), 5)}, "a");  // server-only
  EXPECT_EQ(refused.status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(realm->version(), 0);
  EXPECT_EQ(realm->state(), Initial());
  // The server is not bound by the rules.
  EXPECT_EQ(realm->Submit({Set(P({"players", "b"}), {{"hp", 1}})}, "").value(),
            1);
}

TEST(RealmEngineTest, ARefusedOpMidPatchCommitsNothing) {
  std::unique_ptr<SqliteRealmStore> store = OpenStore(":memory:");
  std::unique_ptr<RealmInstance> realm = OpenRealm(Kind(), store.get());
  ASSERT_NE(realm, nullptr);
  Result<int64_t> refused =
      realm->Submit({Set(P({"players", "a"}), {{"hp", 1}}),
                     {OpKind::kAppend, P({"chat"}), "hi"},
                     Set(P({"players", "b"}), {{"hp", 1}})},
                    "a");
  EXPECT_EQ(refused.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(refused.status().message().find("op 2"), std::string::npos)
      << refused.status().message();
  // An op that does not apply (delete of an absent key) after good ones.
  Result<int64_t> bad =
      realm->Submit({Set(P({"players", "a"}), {{"hp", 1}}),
                     {OpKind::kDelete, P({"players", "a", "mana"}), nullptr},
                     {OpKind::kDelete, P({"players", "a", "gone"}), nullptr}},
                    "a");
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(realm->version(), 0);
  EXPECT_EQ(realm->state(), Initial());
  ASSERT_TRUE(realm->Flush().ok());
  EXPECT_EQ(Loaded(store.get()).head_version(), 0);
  EXPECT_EQ(realm->Submit({}, "").status().code(),
            StatusCode::kInvalidArgument);
}

// Applies a catch-up's commits to `doc`, checking they are consecutive
// after `version`.
void ApplyReplay(const CatchUpAnswer& answer, int64_t version, Json* doc) {
  for (const LoggedCommit& commit : answer.commits) {
    EXPECT_EQ(commit.version, ++version);
    KeyTable keys;
    Result<Patch> patch =
        DecodePatch({reinterpret_cast<const uint8_t*>(commit.patch.data()),
                     commit.patch.size()},
                    &keys);
    ASSERT_TRUE(patch.ok()) << patch.status().ToString();
    ASSERT_TRUE(ApplyPatch(*patch, doc).ok());
  }
}

TEST(RealmEngineTest, CatchUpReplaysWithinTheWindowElseHydrates) {
  ScratchDir dir;
  const std::string path = dir.File("realms.db");
  Json at24;
  Json at40;
  {
    std::unique_ptr<SqliteRealmStore> store = OpenStore(path);
    std::unique_ptr<RealmInstance> realm = OpenRealm(Kind(), store.get());
    ASSERT_NE(realm, nullptr);
    for (int i = 1; i <= 40; ++i) {
      Commit(realm.get(), i);
      if (i % 3 == 0) {
        ASSERT_TRUE(realm->Flush().ok());
      }
      if (i == 24) at24 = realm->state();
    }
    // CatchUp flushes the last commits before answering.
    Result<CatchUpAnswer> edge = realm->CatchUp(1, 24);  // 16 behind
    ASSERT_TRUE(edge.ok()) << edge.status().ToString();
    EXPECT_EQ(realm->durable_version(), 40);
    EXPECT_FALSE(edge->hydrate);
    ASSERT_EQ(edge->commits.size(), 16u);
    Json doc = at24;
    ApplyReplay(*edge, 24, &doc);
    EXPECT_EQ(doc, realm->state());
    at40 = realm->state();

    Result<CatchUpAnswer> past = realm->CatchUp(1, 23);  // 17 behind
    ASSERT_TRUE(past.ok());
    EXPECT_TRUE(past->hydrate);
    EXPECT_EQ(past->state, realm->state());
    EXPECT_EQ(past->version, 40);
    EXPECT_EQ(past->epoch, 1);
    EXPECT_TRUE(realm->CatchUp(2, 30)->hydrate);  // another epoch
    EXPECT_TRUE(realm->CatchUp(1, 41)->hydrate);  // ahead of the head
    Result<CatchUpAnswer> current = realm->CatchUp(1, 40);
    EXPECT_FALSE(current->hydrate);
    EXPECT_TRUE(current->commits.empty());
  }
  // After a reopen (snapshot at 40, empty tail) the replay comes from the
  // store's log.
  std::unique_ptr<SqliteRealmStore> store = OpenStore(path);
  std::unique_ptr<RealmInstance> realm = OpenRealm(Kind(), store.get());
  ASSERT_NE(realm, nullptr);
  EXPECT_EQ(realm->state(), at40);
  Result<CatchUpAnswer> replay = realm->CatchUp(1, 24);
  ASSERT_TRUE(replay.ok()) << replay.status().ToString();
  EXPECT_FALSE(replay->hydrate);
  Json doc = at24;
  ApplyReplay(*replay, 24, &doc);
  EXPECT_EQ(doc, at40);
  EXPECT_TRUE(realm->CatchUp(1, 23)->hydrate);
}

TEST(RealmEngineTest, SchemaChangeRefusesWithoutMigrateAndWipesWithWipe) {
  ScratchDir dir;
  const std::string path = dir.File("realms.db");
  {
    std::unique_ptr<SqliteRealmStore> store = OpenStore(path);
    std::unique_ptr<RealmInstance> realm = OpenRealm(Kind(), store.get());
    ASSERT_NE(realm, nullptr);
    Commit(realm.get(), 1);
    ASSERT_TRUE(realm->Flush().ok());
  }
  std::unique_ptr<SqliteRealmStore> store = OpenStore(path);
  const Json v2 = {{"schema", {{"v", 2}}}};
  Result<std::unique_ptr<RealmInstance>> refused =
      RealmInstance::Open(Kind(v2), "match/m1", store.get(), Initial());
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("\"migrate\": \"wipe\""),
            std::string::npos)
      << refused.status().message();

  RealmKindConfig module = Kind(v2);
  module.migrate = MigrateMode::kModule;
  refused = RealmInstance::Open(module, "match/m1", store.get(), Initial());
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("no module migrate was given"),
            std::string::npos);
  // A migrate that fails changes nothing either.
  refused = RealmInstance::Open(
      module, "match/m1", store.get(), Initial(),
      [](const Json&, std::string_view) -> Result<Json> {
        return Status(StatusCode::kTrap, "the module trapped");
      });
  EXPECT_NE(refused.status().message().find("the module trapped"),
            std::string::npos);
  // Nothing was discarded by the refusals.
  EXPECT_EQ(Loaded(store.get()).head_version(), 1);

  Json wipe = v2;
  wipe["migrate"] = "wipe";
  std::unique_ptr<RealmInstance> wiped = OpenRealm(Kind(wipe), store.get());
  ASSERT_NE(wiped, nullptr);
  EXPECT_EQ(wiped->epoch(), 2);
  EXPECT_EQ(wiped->version(), 0);
  EXPECT_EQ(wiped->state(), Initial());
  EXPECT_TRUE(wiped->CatchUp(1, 1)->hydrate);
  wiped.reset();
  // The new schema now opens as is.
  std::unique_ptr<RealmInstance> again = OpenRealm(Kind(v2), store.get());
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->epoch(), 2);
}

TEST(RealmEngineTest, EphemeralRealmBootsGenesisOnAFreshEpochEveryOpen) {
  const RealmKindConfig kind = Kind({{"persistence", "ephemeral"}});
  std::unique_ptr<RealmInstance> first = OpenRealm(kind, nullptr);
  ASSERT_NE(first, nullptr);
  Commit(first.get(), 1);
  ASSERT_TRUE(first->Flush().ok());
  EXPECT_EQ(first->durable_version(), 1);
  Result<CatchUpAnswer> replay = first->CatchUp(first->epoch(), 0);
  EXPECT_FALSE(replay->hydrate);
  EXPECT_EQ(replay->commits.size(), 1u);
  std::unique_ptr<RealmInstance> second = OpenRealm(kind, nullptr);
  ASSERT_NE(second, nullptr);
  EXPECT_NE(second->epoch(), first->epoch());
  EXPECT_NE(second->epoch(), 1);
  EXPECT_EQ(second->version(), 0);
  EXPECT_EQ(second->state(), Initial());
  EXPECT_TRUE(second->CatchUp(first->epoch(), 1)->hydrate);
  // A durable kind without a store refuses.
  EXPECT_EQ(RealmInstance::Open(Kind(), "match/m1", nullptr, Initial())
                .status()
                .code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tessera::realm

namespace tessera::realm {
namespace {

using namespace engine_testing;  // NOLINT
using store::testing::ScratchDir;

TEST(RealmEngineMigrateTest, AModuleMigrateStartsANewEpochFromTheOldHead) {
  ScratchDir dir;
  const std::string path = dir.File("realms.db");
  Json old_head;
  std::string old_hash;
  {
    std::unique_ptr<SqliteRealmStore> store = OpenStore(path);
    std::unique_ptr<RealmInstance> realm = OpenRealm(Kind(), store.get());
    ASSERT_NE(realm, nullptr);
    for (int i = 1; i <= 5; ++i) Commit(realm.get(), i);
    ASSERT_TRUE(realm->Flush().ok());
    old_head = realm->state();
    old_hash = Kind().schema_hash;
  }
  std::unique_ptr<SqliteRealmStore> store = OpenStore(path);
  RealmKindConfig v2 = Kind({{"schema", {{"v", 2}}}});
  v2.migrate = MigrateMode::kModule;
  std::vector<std::string> seen;
  Result<std::unique_ptr<RealmInstance>> migrated = RealmInstance::Open(
      v2, "match/m1", store.get(), Initial(),
      [&](const Json& old_state, std::string_view hash) -> Result<Json> {
        seen.push_back(std::string(hash));
        EXPECT_EQ(old_state, old_head);
        return Json{{"total", old_state["n"]}, {"players", Json::object()}};
      });
  ASSERT_TRUE(migrated.ok()) << migrated.status().ToString();
  EXPECT_EQ(seen, std::vector<std::string>({old_hash}));
  RealmInstance& realm = **migrated;
  EXPECT_EQ(realm.epoch(), 2);
  EXPECT_EQ(realm.version(), 0);
  EXPECT_EQ(realm.state()["total"], 5);
  // Clients of the old epoch hydrate; the old log is gone from the store.
  EXPECT_TRUE(realm.CatchUp(1, 5)->hydrate);
  LoadedRealm loaded = Loaded(store.get());
  EXPECT_EQ(loaded.epoch, 2);
  EXPECT_TRUE(loaded.tail.empty());
  EXPECT_EQ(loaded.snapshot.schema_hash, v2.schema_hash);
  // Commits go on in the new epoch, and a reopen needs no migrate.
  ASSERT_TRUE(realm.Submit({Set(P({"total"}), 6)}, "").ok());
  ASSERT_TRUE(realm.Flush().ok());
  migrated->reset();
  std::unique_ptr<RealmInstance> again = OpenRealm(v2, store.get());
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->epoch(), 2);
  EXPECT_EQ(again->version(), 1);
  EXPECT_EQ(again->state()["total"], 6);
}

}  // namespace
}  // namespace tessera::realm
