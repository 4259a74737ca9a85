// The RealmStore conformance suite, part 2: PutSnapshot and compaction,
// Load, ReadLog, StartEpoch, Drop and List (part 1:
// realm_store_conformance.cc).
#include <string>
#include <vector>

#include "realm/realm_store_conformance.h"

namespace tessera::realm {
namespace {

// ReadLog's answer, failing the test on an error (empty then).
std::vector<LoggedCommit> ReadOrFail(RealmStore& store, const std::string& key,
                                     int64_t epoch, int64_t after,
                                     size_t limit) {
  Result<std::vector<LoggedCommit>> read =
      store.ReadLog(key, epoch, after, limit);
  EXPECT_TRUE(read.ok()) << read.status().ToString();
  return read.ok() ? std::move(read).value() : std::vector<LoggedCommit>();
}

StatusCode ReadCode(RealmStore& store, const std::string& key, int64_t epoch,
                    int64_t after) {
  return store.ReadLog(key, epoch, after, 100).status().code();
}

TEST_P(RealmStoreConformanceTest, LoadStartsFromTheNewestSnapshot) {
  CreateRealm("r");
  AppendRange("r", 1, 1, 10);
  ASSERT_TRUE(store_->PutSnapshot("r", Snap(1, 4), 100).ok());
  ASSERT_TRUE(store_->PutSnapshot("r", Snap(1, 7), 100).ok());
  std::optional<LoadedRealm> loaded = LoadOrFail("r");
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->snapshot, Snap(1, 7));
  EXPECT_EQ(loaded->tail, Commits("r", 8, 10));
  EXPECT_EQ(loaded->head_version(), 10);
}

TEST_P(RealmStoreConformanceTest, ASnapshotAtTheHeadLoadsWithAnEmptyTail) {
  CreateRealm("r");
  AppendRange("r", 1, 1, 5);
  ASSERT_TRUE(store_->PutSnapshot("r", Snap(1, 5), 0).ok());
  std::optional<LoadedRealm> loaded = LoadOrFail("r");
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->snapshot, Snap(1, 5));
  EXPECT_TRUE(loaded->tail.empty());
  AppendRange("r", 1, 6, 6);  // the log goes on after it
  EXPECT_EQ(TailOf("r"), Commits("r", 6, 6));
}

// Entries at or below snapshot.version - log_window go; the window behind
// the snapshot and everything after it stay replayable.
TEST_P(RealmStoreConformanceTest, ASnapshotDropsOnlyTheLogBehindTheWindow) {
  CreateRealm("r");
  AppendRange("r", 1, 1, 20);
  ASSERT_TRUE(store_->PutSnapshot("r", Snap(1, 15), 5).ok());
  EXPECT_EQ(ReadOrFail(*store_, "r", 1, 10, 100), Commits("r", 11, 20));
  EXPECT_EQ(ReadCode(*store_, "r", 1, 9), StatusCode::kOutOfRange);
  EXPECT_EQ(ReadCode(*store_, "r", 1, 0), StatusCode::kOutOfRange);
  EXPECT_EQ(TailOf("r"), Commits("r", 16, 20));
}

TEST_P(RealmStoreConformanceTest, AZeroWindowKeepsEveryCommitAfterTheSnapshot) {
  CreateRealm("r");
  AppendRange("r", 1, 1, 20);
  ASSERT_TRUE(store_->PutSnapshot("r", Snap(1, 15), 0).ok());
  EXPECT_EQ(ReadOrFail(*store_, "r", 1, 15, 100), Commits("r", 16, 20));
  EXPECT_EQ(ReadCode(*store_, "r", 1, 14), StatusCode::kOutOfRange);
}

TEST_P(RealmStoreConformanceTest, AWindowWiderThanTheLogDropsNothing) {
  CreateRealm("r");
  AppendRange("r", 1, 1, 8);
  ASSERT_TRUE(store_->PutSnapshot("r", Snap(1, 8), 512).ok());
  EXPECT_EQ(ReadOrFail(*store_, "r", 1, 0, 100), Commits("r", 1, 8));
}

TEST_P(RealmStoreConformanceTest, ASnapshotBeyondTheHeadOrNotNewerIsRefused) {
  CreateRealm("r");
  AppendRange("r", 1, 1, 10);
  ASSERT_TRUE(store_->PutSnapshot("r", Snap(1, 6), 100).ok());
  for (int64_t version : {11, 6, 5, 0}) {
    Status st = store_->PutSnapshot("r", Snap(1, version), 0);
    EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition)
        << version << ": " << st.ToString();
  }
  // Nothing was stored or compacted by the refusals.
  std::optional<LoadedRealm> loaded = LoadOrFail("r");
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->snapshot, Snap(1, 6));
  EXPECT_EQ(ReadOrFail(*store_, "r", 1, 0, 100), Commits("r", 1, 10));
  EXPECT_EQ(store_->PutSnapshot("r", Snap(1, 7), -1).code(),
            StatusCode::kInvalidArgument);
}

TEST_P(RealmStoreConformanceTest, ASnapshotOfAnotherEpochIsRefused) {
  CreateRealm("r");
  AppendRange("r", 1, 1, 3);
  EXPECT_EQ(store_->PutSnapshot("r", Snap(2, 3), 0).code(),
            StatusCode::kFailedPrecondition);
  ASSERT_TRUE(store_->StartEpoch("r", Snap(2, 0)).ok());
  AppendRange("r", 2, 1, 3);
  EXPECT_EQ(store_->PutSnapshot("r", Snap(1, 3), 0).code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(SnapshotOf("r"), Snap(2, 0));
}

TEST_P(RealmStoreConformanceTest, ASnapshotOfAnUnknownRealmIsNotFound) {
  EXPECT_EQ(store_->PutSnapshot("nobody", Snap(1, 0), 0).code(),
            StatusCode::kNotFound);
  EXPECT_FALSE(LoadOrFail("nobody").has_value());
}

TEST_P(RealmStoreConformanceTest, ReadLogReplaysTheCommitsAfterAVersion) {
  CreateRealm("r");
  AppendRange("r", 1, 1, 10);
  EXPECT_EQ(ReadOrFail(*store_, "r", 1, 0, 100), Commits("r", 1, 10));
  EXPECT_EQ(ReadOrFail(*store_, "r", 1, 6, 100), Commits("r", 7, 10));
  EXPECT_EQ(ReadOrFail(*store_, "r", 1, 9, 100), Commits("r", 10, 10));
}

TEST_P(RealmStoreConformanceTest, ReadLogReturnsAtMostTheLimitOldestFirst) {
  CreateRealm("r");
  AppendRange("r", 1, 1, 10);
  EXPECT_EQ(ReadOrFail(*store_, "r", 1, 2, 3), Commits("r", 3, 5));
  EXPECT_EQ(ReadOrFail(*store_, "r", 1, 5, 1), Commits("r", 6, 6));
  EXPECT_TRUE(ReadOrFail(*store_, "r", 1, 5, 0).empty());
}

TEST_P(RealmStoreConformanceTest, ReadLogAtTheHeadIsEmpty) {
  CreateRealm("r");
  EXPECT_TRUE(ReadOrFail(*store_, "r", 1, 0, 100).empty());
  AppendRange("r", 1, 1, 4);
  ASSERT_TRUE(store_->PutSnapshot("r", Snap(1, 4), 0).ok());
  EXPECT_TRUE(ReadOrFail(*store_, "r", 1, 4, 100).empty());
}

TEST_P(RealmStoreConformanceTest, ReadLogBeyondTheHeadIsOutOfRange) {
  CreateRealm("r");
  AppendRange("r", 1, 1, 4);
  EXPECT_EQ(ReadCode(*store_, "r", 1, 5), StatusCode::kOutOfRange);
}

TEST_P(RealmStoreConformanceTest,
       ReadLogBeforeTheEpochsFirstSnapshotIsOutOfRange) {
  ASSERT_TRUE(store_->Create("r", "match", Snap(1, 50)).ok());
  AppendRange("r", 1, 51, 52);
  EXPECT_EQ(ReadOrFail(*store_, "r", 1, 50, 100), Commits("r", 51, 52));
  EXPECT_EQ(ReadCode(*store_, "r", 1, 49), StatusCode::kOutOfRange);
  EXPECT_EQ(ReadCode(*store_, "r", 1, -1), StatusCode::kOutOfRange);
}

TEST_P(RealmStoreConformanceTest, ReadLogOfAnotherEpochIsOutOfRange) {
  CreateRealm("r");
  AppendRange("r", 1, 1, 5);
  ASSERT_TRUE(store_->StartEpoch("r", Snap(2, 5)).ok());
  AppendRange("r", 2, 6, 8);
  // A client of epoch 1 at version 5 must hydrate, though the numbers
  // would line up.
  EXPECT_EQ(ReadCode(*store_, "r", 1, 5), StatusCode::kOutOfRange);
  EXPECT_EQ(ReadCode(*store_, "r", 1, 2), StatusCode::kOutOfRange);
  EXPECT_EQ(ReadCode(*store_, "r", 3, 5), StatusCode::kOutOfRange);
  EXPECT_EQ(ReadOrFail(*store_, "r", 2, 5, 100), Commits("r", 6, 8));
}

TEST_P(RealmStoreConformanceTest, ReadLogOfAnUnknownRealmIsNotFound) {
  EXPECT_EQ(ReadCode(*store_, "nobody", 1, 0), StatusCode::kNotFound);
}

TEST_P(RealmStoreConformanceTest, ANewEpochReplacesTheLogWithItsFirstSnapshot) {
  CreateRealm("r");
  AppendRange("r", 1, 1, 9);
  ASSERT_TRUE(store_->PutSnapshot("r", Snap(1, 6), 2).ok());
  RealmSnapshot first{2, 0, "hash-new", R"({"migrated":true})"};
  ASSERT_TRUE(store_->StartEpoch("r", first).ok());
  std::optional<LoadedRealm> loaded = LoadOrFail("r");
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->kind, "match");
  EXPECT_EQ(loaded->epoch, 2);
  EXPECT_EQ(loaded->snapshot, first);
  EXPECT_TRUE(loaded->tail.empty());
  // The new epoch numbers on from its first snapshot; the old one's
  // versions are gone, whatever they were.
  AppendRange("r", 2, 1, 2);
  EXPECT_EQ(TailOf("r"), Commits("r", 1, 2));
  EXPECT_EQ(ReadCode(*store_, "r", 1, 8), StatusCode::kOutOfRange);
  // Old snapshots no longer count: a snapshot of epoch 2 only has to be
  // newer than epoch 2's first.
  ASSERT_TRUE(store_->PutSnapshot("r", Snap(2, 1), 0).ok());
  EXPECT_EQ(SnapshotOf("r"), Snap(2, 1));
}

TEST_P(RealmStoreConformanceTest, ANewEpochMustBeGreaterThanTheCurrentOne) {
  CreateRealm("r");
  ASSERT_TRUE(store_->StartEpoch("r", Snap(3, 0)).ok());
  AppendRange("r", 3, 1, 2);
  for (int64_t epoch : {3, 2, 1}) {
    Status st = store_->StartEpoch("r", Snap(epoch, 0));
    EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition)
        << epoch << ": " << st.ToString();
  }
  std::optional<LoadedRealm> loaded = LoadOrFail("r");
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->epoch, 3);
  EXPECT_EQ(loaded->tail, Commits("r", 1, 2));
}

TEST_P(RealmStoreConformanceTest, ANewEpochOfAnUnknownRealmIsNotFound) {
  EXPECT_EQ(store_->StartEpoch("nobody", Snap(2, 0)).code(),
            StatusCode::kNotFound);
  EXPECT_FALSE(LoadOrFail("nobody").has_value());
}

TEST_P(RealmStoreConformanceTest, ADroppedRealmIsGoneAndItsKeyFree) {
  CreateRealm("match/old");
  AppendRange("match/old", 1, 1, 5);
  ASSERT_TRUE(store_->PutSnapshot("match/old", Snap(1, 3), 1).ok());
  CreateRealm("match/other");
  ASSERT_TRUE(store_->Drop("match/old").ok());
  EXPECT_FALSE(LoadOrFail("match/old").has_value());
  EXPECT_EQ(ReadCode(*store_, "match/old", 1, 0), StatusCode::kNotFound);
  std::vector<RealmAppend> late = {Entry("match/old", 1, 6, 6)};
  EXPECT_EQ(store_->Append(late).code(), StatusCode::kNotFound);
  // The next address boots genesis: nothing of the old history shows.
  CreateRealm("match/old");
  std::optional<LoadedRealm> fresh = LoadOrFail("match/old");
  ASSERT_TRUE(fresh.has_value());
  EXPECT_EQ(fresh->snapshot, Snap(1, 0));
  EXPECT_TRUE(fresh->tail.empty());
  EXPECT_TRUE(ReadOrFail(*store_, "match/old", 1, 0, 100).empty());
  EXPECT_TRUE(LoadOrFail("match/other").has_value());
}

TEST_P(RealmStoreConformanceTest, DroppingAnUnknownRealmIsOk) {
  EXPECT_TRUE(store_->Drop("nobody").ok());
  EXPECT_TRUE(store_->Drop("nobody").ok());
}

TEST_P(RealmStoreConformanceTest, ListGivesTheKeysOfAKindSorted) {
  CreateRealm("match/m-2", "match");
  CreateRealm("lobby/main", "lobby");
  CreateRealm("match/m-10", "match");
  CreateRealm("match/m-1", "match");
  Result<std::vector<std::string>> matches = store_->List("match");
  ASSERT_TRUE(matches.ok()) << matches.status().ToString();
  EXPECT_EQ(*matches,
            (std::vector<std::string>{"match/m-1", "match/m-10", "match/m-2"}));
  Result<std::vector<std::string>> all = store_->List("");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(*all, (std::vector<std::string>{"lobby/main", "match/m-1",
                                            "match/m-10", "match/m-2"}));
  Result<std::vector<std::string>> none = store_->List("board");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  ASSERT_TRUE(store_->Drop("match/m-10").ok());
  Result<std::vector<std::string>> after_drop = store_->List("match");
  ASSERT_TRUE(after_drop.ok());
  EXPECT_EQ(*after_drop, (std::vector<std::string>{"match/m-1", "match/m-2"}));
}

}  // namespace
}  // namespace tessera::realm
