// The RealmStore conformance suite, part 3: alarms (RealmAppend's alarm
// changes, ListAlarms, and Drop taking a realm's alarms with it).
#include <string>
#include <vector>

#include "realm/realm_store_conformance.h"

namespace tessera::realm {
namespace {

std::vector<StoredAlarm> ListOrFail(RealmStore& store) {
  Result<std::vector<StoredAlarm>> listed = store.ListAlarms();
  EXPECT_TRUE(listed.ok()) << listed.status().ToString();
  return listed.ok() ? std::move(listed).value() : std::vector<StoredAlarm>();
}

TEST_P(RealmStoreConformanceTest, AlarmsAreWrittenWithTheirCommits) {
  CreateRealm("match/m-2");
  CreateRealm("match/m-1");
  RealmAppend first = Entry("match/m-2", 1, 1, 2);
  first.alarms_set = {{"turn", 5'000, 0}, {"clean", 9'000, 2}};
  RealmAppend second = Entry("match/m-1", 1, 1, 1);
  second.alarms_set = {{"turn", 7'000, 0}};
  std::vector<RealmAppend> entries = {first, second};
  ASSERT_TRUE(store_->Append(entries).ok());
  EXPECT_EQ(ListOrFail(*store_),
            (std::vector<StoredAlarm>{{"match/m-1", {"turn", 7'000, 0}},
                                      {"match/m-2", {"clean", 9'000, 2}},
                                      {"match/m-2", {"turn", 5'000, 0}}}));
  EXPECT_EQ(HeadOf("match/m-2"), 2);
}

TEST_P(RealmStoreConformanceTest, AnEntryWithoutCommitsWritesItsAlarms) {
  CreateRealm("r");
  RealmAppend set = Entry("r", 1, 1, 0);
  ASSERT_TRUE(set.commits.empty());
  set.alarms_set = {{"tick", 1'000, 0}};
  ASSERT_TRUE(store_->Append(std::vector<RealmAppend>{set}).ok());
  // Setting a name again replaces it; a cancel goes before the sets.
  RealmAppend moved = Entry("r", 1, 1, 0);
  moved.alarms_cancelled = {"tick", "never-set"};
  moved.alarms_set = {{"tick", 3'000, 4}};
  ASSERT_TRUE(store_->Append(std::vector<RealmAppend>{moved}).ok());
  EXPECT_EQ(ListOrFail(*store_),
            (std::vector<StoredAlarm>{{"r", {"tick", 3'000, 4}}}));
  RealmAppend cancelled = Entry("r", 1, 1, 0);
  cancelled.alarms_cancelled = {"tick"};
  ASSERT_TRUE(store_->Append(std::vector<RealmAppend>{cancelled}).ok());
  EXPECT_TRUE(ListOrFail(*store_).empty());
  EXPECT_EQ(HeadOf("r"), 0);
}

TEST_P(RealmStoreConformanceTest, AFencedEntryWritesNoAlarm) {
  CreateRealm("r");
  AppendRange("r", 1, 1, 3);
  RealmAppend stale = Entry("r", 1, 3, 3);  // the head is 3 already
  stale.alarms_set = {{"turn", 1'000, 0}};
  EXPECT_EQ(store_->Append(std::vector<RealmAppend>{stale}).code(),
            StatusCode::kFailedPrecondition);
  RealmAppend other_epoch = Entry("r", 2, 4, 4);
  other_epoch.alarms_set = {{"turn", 1'000, 0}};
  EXPECT_EQ(store_->Append(std::vector<RealmAppend>{other_epoch}).code(),
            StatusCode::kFailedPrecondition);
  // One refused entry of a call: the good one's alarms are not written
  // either.
  CreateRealm("s");
  RealmAppend good = Entry("s", 1, 1, 1);
  good.alarms_set = {{"turn", 1'000, 0}};
  RealmAppend unknown = Entry("nobody", 1, 1, 1);
  EXPECT_EQ(store_->Append(std::vector<RealmAppend>{good, unknown}).code(),
            StatusCode::kNotFound);
  EXPECT_TRUE(ListOrFail(*store_).empty());
}

TEST_P(RealmStoreConformanceTest, ADroppedRealmLosesItsAlarms) {
  CreateRealm("match/old");
  CreateRealm("match/kept");
  RealmAppend old = Entry("match/old", 1, 1, 0);
  old.alarms_set = {{"turn", 1'000, 0}, {"clean", 2'000, 1}};
  RealmAppend kept = Entry("match/kept", 1, 1, 0);
  kept.alarms_set = {{"turn", 3'000, 0}};
  ASSERT_TRUE(store_->Append(std::vector<RealmAppend>{old, kept}).ok());
  ASSERT_TRUE(store_->Drop("match/old").ok());
  EXPECT_EQ(ListOrFail(*store_),
            (std::vector<StoredAlarm>{{"match/kept", {"turn", 3'000, 0}}}));
  // A new epoch (migrate, wipe) keeps them: the realm lives on.
  ASSERT_TRUE(store_->StartEpoch("match/kept", Snap(2, 0)).ok());
  EXPECT_EQ(ListOrFail(*store_).size(), 1u);
}

}  // namespace
}  // namespace tessera::realm
