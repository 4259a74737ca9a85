// The RealmStore conformance suite, part 1: the fixture, Create and Append
// with its fence. Part 2 (realm_store_conformance_log.cc): snapshots,
// compaction, Load, ReadLog, epochs, Drop and List.
#include "realm/realm_store_conformance.h"

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace tessera::realm {

void PrintTo(const RealmStoreBackend& backend, std::ostream* os) {
  *os << backend.name;
}

std::string RealmStoreBackendName(
    const ::testing::TestParamInfo<RealmStoreBackend>& info) {
  return info.param.name;
}

void RealmStoreConformanceTest::SetUp() {
  store_ = GetParam().make();
  ASSERT_NE(store_, nullptr);
}

RealmSnapshot RealmStoreConformanceTest::Snap(int64_t epoch, int64_t version) {
  return RealmSnapshot{epoch, version, "hash-" + std::to_string(epoch),
                       R"({"epoch":)" + std::to_string(epoch) +
                           R"(,"version":)" + std::to_string(version) + "}"};
}

std::string RealmStoreConformanceTest::PatchOf(const std::string& key,
                                               int64_t version) {
  std::string patch("\x93\x00\xff", 3);
  patch += key;
  patch += '#';
  patch += std::to_string(version);
  return patch;
}

std::vector<LoggedCommit> RealmStoreConformanceTest::Commits(
    const std::string& key, int64_t from, int64_t to) {
  std::vector<LoggedCommit> out;
  for (int64_t v = from; v <= to; ++v) out.push_back({v, PatchOf(key, v)});
  return out;
}

RealmAppend RealmStoreConformanceTest::Entry(const std::string& key,
                                             int64_t epoch, int64_t from,
                                             int64_t to) {
  return RealmAppend{key, epoch, Commits(key, from, to), {}, {}};
}

void RealmStoreConformanceTest::CreateRealm(const std::string& key,
                                            const std::string& kind) {
  Status st = store_->Create(key, kind, Snap(1, 0));
  ASSERT_TRUE(st.ok()) << st.ToString();
}

void RealmStoreConformanceTest::AppendRange(const std::string& key,
                                            int64_t epoch, int64_t from,
                                            int64_t to) {
  std::vector<RealmAppend> entries = {Entry(key, epoch, from, to)};
  Status st = store_->Append(entries);
  ASSERT_TRUE(st.ok()) << st.ToString();
}

std::optional<LoadedRealm> RealmStoreConformanceTest::LoadOrFail(
    const std::string& key) {
  Result<std::optional<LoadedRealm>> loaded = store_->Load(key);
  EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
  if (!loaded.ok()) return std::nullopt;
  return std::move(loaded).value();
}

int64_t RealmStoreConformanceTest::HeadOf(const std::string& key) {
  std::optional<LoadedRealm> loaded = LoadOrFail(key);
  return loaded.has_value() ? loaded->head_version() : -1;
}

std::vector<LoggedCommit> RealmStoreConformanceTest::TailOf(
    const std::string& key) {
  std::optional<LoadedRealm> loaded = LoadOrFail(key);
  EXPECT_TRUE(loaded.has_value()) << key;
  return loaded.has_value() ? loaded->tail : std::vector<LoggedCommit>();
}

RealmSnapshot RealmStoreConformanceTest::SnapshotOf(const std::string& key) {
  std::optional<LoadedRealm> loaded = LoadOrFail(key);
  EXPECT_TRUE(loaded.has_value()) << key;
  return loaded.has_value() ? loaded->snapshot : RealmSnapshot();
}

namespace {

TEST_P(RealmStoreConformanceTest,
       ACreatedRealmLoadsAsItsGenesisWithNothingAfter) {
  RealmSnapshot genesis = Snap(3, 7);
  ASSERT_TRUE(store_->Create("match/m-1", "match", genesis).ok());
  std::optional<LoadedRealm> loaded = LoadOrFail("match/m-1");
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->kind, "match");
  EXPECT_EQ(loaded->epoch, 3);
  EXPECT_EQ(loaded->snapshot, genesis);
  EXPECT_TRUE(loaded->tail.empty());
  EXPECT_EQ(loaded->head_version(), 7);
}

TEST_P(RealmStoreConformanceTest, AnUnknownRealmLoadsAsNothing) {
  Result<std::optional<LoadedRealm>> loaded = store_->Load("match/none");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_FALSE(loaded->has_value());
}

TEST_P(RealmStoreConformanceTest,
       CreatingAnExistingKeyIsRefusedAndKeepsTheFirstRealm) {
  CreateRealm("match/m-1", "match");
  AppendRange("match/m-1", 1, 1, 2);
  Status again = store_->Create("match/m-1", "lobby", Snap(5, 0));
  EXPECT_EQ(again.code(), StatusCode::kAlreadyExists) << again.ToString();
  std::optional<LoadedRealm> loaded = LoadOrFail("match/m-1");
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->kind, "match");
  EXPECT_EQ(loaded->epoch, 1);
  EXPECT_EQ(loaded->head_version(), 2);
}

TEST_P(RealmStoreConformanceTest,
       AppendedCommitsLoadAfterTheSnapshotInVersionOrder) {
  CreateRealm("r");
  AppendRange("r", 1, 1, 1);
  AppendRange("r", 1, 2, 5);
  std::optional<LoadedRealm> loaded = LoadOrFail("r");
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->snapshot, Snap(1, 0));
  EXPECT_EQ(loaded->tail, Commits("r", 1, 5));  // binary patches intact
  EXPECT_EQ(loaded->head_version(), 5);
}

TEST_P(RealmStoreConformanceTest, AGroupAppendCommitsEveryRealmsEntry) {
  CreateRealm("a");
  CreateRealm("b");
  CreateRealm("c");
  AppendRange("c", 1, 1, 3);
  std::vector<RealmAppend> entries = {Entry("a", 1, 1, 2), Entry("b", 1, 1, 1),
                                      Entry("c", 1, 4, 6)};
  Status st = store_->Append(entries);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(TailOf("a"), Commits("a", 1, 2));
  EXPECT_EQ(TailOf("b"), Commits("b", 1, 1));
  EXPECT_EQ(TailOf("c"), Commits("c", 1, 6));
}

TEST_P(RealmStoreConformanceTest,
       ASecondEntryForTheSameRealmContinuesTheFirst) {
  CreateRealm("r");
  std::vector<RealmAppend> entries = {Entry("r", 1, 1, 2), Entry("r", 1, 3, 4)};
  ASSERT_TRUE(store_->Append(entries).ok());
  EXPECT_EQ(TailOf("r"), Commits("r", 1, 4));
  std::vector<RealmAppend> overlapping = {Entry("r", 1, 5, 6),
                                          Entry("r", 1, 5, 5)};
  EXPECT_EQ(store_->Append(overlapping).code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(HeadOf("r"), 4);
}

TEST_P(RealmStoreConformanceTest,
       AFirstVersionPastTheHeadIsRefusedNamingBothVersions) {
  CreateRealm("match/m-9");
  AppendRange("match/m-9", 1, 1, 3);
  std::vector<RealmAppend> gap = {Entry("match/m-9", 1, 5, 6)};
  Status st = store_->Append(gap);
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition) << st.ToString();
  EXPECT_NE(st.message().find("match/m-9"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("4"), std::string::npos)  // expected
      << st.message();
  EXPECT_NE(st.message().find("5"), std::string::npos)  // offered
      << st.message();
  EXPECT_EQ(HeadOf("match/m-9"), 3);
}

// A second writer that read the same head offers versions already taken.
TEST_P(RealmStoreConformanceTest,
       ASecondWriterOfferingTakenVersionsIsFencedOff) {
  CreateRealm("r");
  AppendRange("r", 1, 1, 3);
  std::vector<RealmAppend> stale = {Entry("r", 1, 3, 4)};
  Status st = store_->Append(stale);
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition) << st.ToString();
  std::optional<LoadedRealm> loaded = LoadOrFail("r");
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->tail, Commits("r", 1, 3));  // version 3 not replaced
}

TEST_P(RealmStoreConformanceTest, AGapInsideAnEntryWritesNothingOfIt) {
  CreateRealm("r");
  RealmAppend entry = Entry("r", 1, 1, 2);
  entry.commits.push_back({4, PatchOf("r", 4)});
  std::vector<RealmAppend> entries = {entry};
  Status st = store_->Append(entries);
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition) << st.ToString();
  EXPECT_EQ(HeadOf("r"), 0);
  EXPECT_TRUE(TailOf("r").empty());
}

TEST_P(RealmStoreConformanceTest, AWriterOfAnotherEpochIsFencedOff) {
  CreateRealm("r");
  AppendRange("r", 1, 1, 2);
  ASSERT_TRUE(store_->StartEpoch("r", Snap(2, 10)).ok());
  // The old writer continues where it was, in its epoch.
  std::vector<RealmAppend> old_epoch = {Entry("r", 1, 3, 3)};
  EXPECT_EQ(store_->Append(old_epoch).code(), StatusCode::kFailedPrecondition);
  // Even the versions that would follow the new head are refused.
  std::vector<RealmAppend> wrong_epoch = {Entry("r", 1, 11, 11)};
  EXPECT_EQ(store_->Append(wrong_epoch).code(),
            StatusCode::kFailedPrecondition);
  std::vector<RealmAppend> future_epoch = {Entry("r", 3, 11, 11)};
  EXPECT_EQ(store_->Append(future_epoch).code(),
            StatusCode::kFailedPrecondition);
  std::optional<LoadedRealm> loaded = LoadOrFail("r");
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->epoch, 2);
  EXPECT_TRUE(loaded->tail.empty());
  AppendRange("r", 2, 11, 12);
  EXPECT_EQ(HeadOf("r"), 12);
}

TEST_P(RealmStoreConformanceTest, AnUnknownKeyIsNotFoundAndWritesNothingElse) {
  CreateRealm("a");
  std::vector<RealmAppend> entries = {Entry("a", 1, 1, 2),
                                      Entry("missing", 1, 1, 1)};
  Status st = store_->Append(entries);
  EXPECT_EQ(st.code(), StatusCode::kNotFound) << st.ToString();
  EXPECT_NE(st.message().find("missing"), std::string::npos) << st.message();
  EXPECT_EQ(HeadOf("a"), 0);
  EXPECT_FALSE(LoadOrFail("missing").has_value());
}

// All or nothing: one refused entry anywhere leaves every realm of the
// call as it was, also those whose entries came first and were fine.
TEST_P(RealmStoreConformanceTest, OneRefusedEntryWritesNoEntryOfTheCall) {
  CreateRealm("room/alpha");
  CreateRealm("room/beta");
  CreateRealm("room/gamma");
  AppendRange("room/gamma", 1, 1, 1);
  std::vector<RealmAppend> entries = {
      Entry("room/alpha", 1, 1, 3), Entry("room/beta", 1, 1, 1),
      Entry("room/gamma", 1, 1, 2)};  // gamma's head is 1
  Status st = store_->Append(entries);
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition) << st.ToString();
  EXPECT_NE(st.message().find("room/gamma"), std::string::npos) << st.message();
  EXPECT_EQ(HeadOf("room/alpha"), 0);
  EXPECT_EQ(HeadOf("room/beta"), 0);
  EXPECT_EQ(HeadOf("room/gamma"), 1);
  // The refused call took nothing: the same versions go in afterwards.
  std::vector<RealmAppend> fixed = {Entry("room/alpha", 1, 1, 3),
                                    Entry("room/beta", 1, 1, 1),
                                    Entry("room/gamma", 1, 2, 2)};
  ASSERT_TRUE(store_->Append(fixed).ok());
  EXPECT_EQ(TailOf("room/alpha"), Commits("room/alpha", 1, 3));
}

TEST_P(RealmStoreConformanceTest, AnEmptyEntryWritesNothingButIsStillFenced) {
  CreateRealm("r");
  std::vector<RealmAppend> empty = {RealmAppend{"r", 1, {}, {}, {}}};
  EXPECT_TRUE(store_->Append(empty).ok());
  EXPECT_EQ(HeadOf("r"), 0);
  std::vector<RealmAppend> other_epoch = {RealmAppend{"r", 2, {}, {}, {}}};
  EXPECT_EQ(store_->Append(other_epoch).code(),
            StatusCode::kFailedPrecondition);
  std::vector<RealmAppend> unknown = {RealmAppend{"x", 1, {}, {}, {}}};
  EXPECT_EQ(store_->Append(unknown).code(), StatusCode::kNotFound);
  EXPECT_TRUE(store_->Append({}).ok());
}

// Two writers that both believe they own the realm, on two threads: every
// version is taken by exactly one of them and the log stays consecutive.
TEST_P(RealmStoreConformanceTest, RacingWritersNeverBothTakeAVersion) {
  CreateRealm("r");
  constexpr int64_t kTarget = 100;
  std::atomic<int64_t> won[2] = {0, 0};
  auto writer = [&](int id) {
    int64_t next = 1;
    while (next <= kTarget) {
      RealmAppend entry{
          "r", 1, {{next, std::string(1, char('A' + id))}}, {}, {}};
      std::vector<RealmAppend> entries = {entry};
      Status st = store_->Append(entries);
      if (st.ok()) {
        won[id].fetch_add(1);
        ++next;
      } else {
        ASSERT_EQ(st.code(), StatusCode::kFailedPrecondition) << st.ToString();
        Result<std::optional<LoadedRealm>> now = store_->Load("r");
        ASSERT_TRUE(now.ok() && now->has_value());
        next = (*now)->head_version() + 1;
      }
    }
  };
  std::thread a(writer, 0);
  std::thread b(writer, 1);
  a.join();
  b.join();
  EXPECT_EQ(won[0].load() + won[1].load(), kTarget);
  std::optional<LoadedRealm> loaded = LoadOrFail("r");
  ASSERT_TRUE(loaded.has_value());
  ASSERT_EQ(loaded->tail.size(), static_cast<size_t>(kTarget));
  for (int64_t i = 0; i < kTarget; ++i) {
    EXPECT_EQ(loaded->tail[i].version, i + 1);
  }
}

}  // namespace
}  // namespace tessera::realm
