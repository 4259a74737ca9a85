// PgMachineStore (pg_machine_store.h) against a real throwaway PostgreSQL
// cluster: join, heartbeat, leave and list by the database's clock; a live
// holder of an id is waited for, a silent one taken over (its heartbeats
// then lapse); a database that hangs fails a call on time; and Membership
// (cluster/membership.h) on this store fences itself while the database
// hangs and comes back under a new epoch when it answers again.
#include "store/postgres/pg_machine_store.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "cluster/membership.h"
#include "store/postgres/pg_store.h"
#include "store/postgres/pg_test_database.h"
#include "store/postgres/pg_test_proxy.h"

namespace tessera::store::pg {
namespace {

using cluster::MachineInfo;

std::unique_ptr<PgMachineStore> OpenStore(const std::string& url,
                                          PgMachineStoreOptions options = {}) {
  auto store = PgMachineStore::Open(url, options);
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  return store.ok() ? std::move(store).value() : nullptr;
}

// The heartbeat's answer (false, and a test failure, on an error).
bool Beat(PgMachineStore& store, std::string_view id, uint64_t epoch) {
  Result<bool> landed = store.Heartbeat(id, epoch);
  EXPECT_TRUE(landed.ok()) << landed.status().ToString();
  return landed.ok() && landed.value();
}

// Makes the machine's last heartbeat `ms` older, as if it had been silent.
void Age(const std::string& url, const std::string& id, int64_t ms) {
  QueryOne(url, "UPDATE cluster_machines SET heartbeat_ms = heartbeat_ms - " +
                    std::to_string(ms) + " WHERE id = '" + id +
                    "' RETURNING id");
}

TEST(PgMachineStoreTest, JoinHeartbeatListAndLeave) {
  const std::string url = FreshDatabase();
  auto store = OpenStore(url);
  ASSERT_NE(store, nullptr);
  auto joined = store->Join({"m1", "127.0.0.1:4001", 100}, 11, 0);
  ASSERT_TRUE(joined.ok()) << joined.status().ToString();
  EXPECT_TRUE(joined->joined);
  auto beat = store->Heartbeat("m1", 11);
  ASSERT_TRUE(beat.ok());
  EXPECT_TRUE(*beat);
  ASSERT_TRUE(store->Join({"m2", "127.0.0.1:4002", 50}, 22, 0).ok());
  auto list = store->List();
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  ASSERT_EQ(list->size(), 2u);
  const cluster::MachineRecord& m1 = (*list)[0];
  EXPECT_EQ(m1.info.id, "m1");
  EXPECT_EQ(m1.info.address, "127.0.0.1:4001");
  EXPECT_EQ(m1.info.capacity, 100);
  EXPECT_EQ(m1.epoch, 11u);
  EXPECT_TRUE(m1.live);
  EXPECT_EQ(m1.left_unix_ms, 0);
  EXPECT_GE(m1.heartbeat_unix_ms, m1.started_unix_ms);
  EXPECT_LT(m1.silent_ms, 5'000);
  EXPECT_EQ((*list)[1].info.capacity, 50);

  ASSERT_TRUE(store->Leave("m1", 11).ok());
  list = store->List();
  ASSERT_TRUE(list.ok());
  EXPECT_FALSE((*list)[0].live);
  EXPECT_GT((*list)[0].left_unix_ms, 0);
  // A left epoch's heartbeat has lapsed; the id is free at once.
  EXPECT_FALSE(Beat(*store, "m1", 11));
  auto again = store->Join({"m1", "127.0.0.1:4009", 100}, 12, 0);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->joined);
  EXPECT_EQ(QueryOne(url, "SELECT address FROM cluster_machines WHERE id='m1'"),
            "127.0.0.1:4009");
}

TEST(PgMachineStoreTest, ALiveHolderIsWaitedForAndASilentOneTakenOver) {
  const std::string url = FreshDatabase();
  auto store = OpenStore(url);
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Join({"m1", "a", 1}, 1, 0)->joined);
  // A second process under the same id: the first is alive.
  auto held = store->Join({"m1", "b", 1}, 2, 0);
  ASSERT_TRUE(held.ok());
  EXPECT_FALSE(held->joined);
  EXPECT_EQ(held->held_by, 1u);
  EXPECT_GT(held->wait_ms, 8'000);
  EXPECT_LE(held->wait_ms, 10'000);
  EXPECT_TRUE(Beat(*store, "m1", 1));
  // Silent 9 s: still alive, still waited for, a little less.
  Age(url, "m1", 9'000);
  held = store->Join({"m1", "b", 1}, 2, 0);
  EXPECT_FALSE(held->joined);
  EXPECT_LE(held->wait_ms, 1'000);
  EXPECT_TRUE(store->List()->front().live);
  // Silent 10 s: dead; the id is taken over and the old epoch has lapsed.
  Age(url, "m1", 1'500);
  EXPECT_FALSE(store->List()->front().live);
  auto taken = store->Join({"m1", "b", 1}, 2, 0);
  ASSERT_TRUE(taken.ok());
  EXPECT_TRUE(taken->joined);
  EXPECT_FALSE(Beat(*store, "m1", 1));
  EXPECT_TRUE(Beat(*store, "m1", 2));
}

TEST(PgMachineStoreTest, SilentForTheDeadTimeLapsesEvenIfNobodyTookOver) {
  const std::string url = FreshDatabase();
  auto store = OpenStore(url);
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Join({"m1", "a", 1}, 5, 0)->joined);
  Age(url, "m1", 10'500);
  EXPECT_FALSE(Beat(*store, "m1", 5));
  // Its own next epoch, replacing the old one, joins at once even while
  // the old one still counts as alive.
  ASSERT_TRUE(store->Join({"m2", "a", 1}, 7, 0)->joined);
  auto replaced = store->Join({"m2", "a", 1}, 8, 7);
  ASSERT_TRUE(replaced.ok());
  EXPECT_TRUE(replaced->joined);
  EXPECT_FALSE(Beat(*store, "m2", 7));
  EXPECT_TRUE(Beat(*store, "m2", 8));
}

// A store whose saves are guarded by an epoch the test sets.
class TestEpoch final : public cluster::EpochSource {
 public:
  std::string_view machine_id() const override { return "m1"; }
  uint64_t current_epoch() const override { return epoch; }
  uint64_t epoch = 0;
};

// The (machine, epoch) guard of saves: only the epoch the database has on
// the machine's row, not left and heard from within the dead time, saves;
// a machine cut off (fenced, lapsed, taken over, left) can never overwrite
// what its replacement saved.
TEST(PgMachineStoreTest, SavesAreGuardedByTheMachinesEpoch) {
  const std::string url = FreshDatabase();
  auto machines = OpenStore(url);
  ASSERT_NE(machines, nullptr);
  auto opened = PgStore::Open(url);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  PgStore& store = **opened;
  TestEpoch epoch;
  store.GuardSaves(&epoch, 10'000);
  auto state = [&] {
    auto loaded = store.Load("s1");
    return loaded.ok() && loaded->has_value() ? **loaded : std::string("-");
  };
  // Not joined: refused here, nothing sent.
  Status refused = store.Save("s1", "a");
  EXPECT_EQ(refused.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.message().find("does not hold an epoch"), std::string::npos)
      << refused.ToString();
  // An epoch the database does not have.
  epoch.epoch = 5;
  EXPECT_EQ(store.Save("s1", "a").code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(state(), "-");
  ASSERT_TRUE(machines->Join({"m1", "a", 1}, 5, 0)->joined);
  ASSERT_TRUE(store.Save("s1", "b").ok());
  EXPECT_EQ(state(), "b");
  // Silent past the dead time: its late saves are refused.
  Age(url, "m1", 10'500);
  Status late = store.Save("s1", "c");
  EXPECT_EQ(late.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(late.message().find("epoch 5"), std::string::npos)
      << late.ToString();
  // Taken over by a new epoch: only the new one saves.
  ASSERT_TRUE(machines->Join({"m1", "a", 1}, 6, 0)->joined);
  EXPECT_EQ(store.Save("s1", "c").code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(state(), "b");
  epoch.epoch = 6;
  ASSERT_TRUE(store.Save("s1", "d").ok());
  EXPECT_EQ(state(), "d");
  // The journal's saves carry the guard too: a refused save refuses the
  // whole step.
  epoch.epoch = 5;
  shard::TransferRecord record;
  record.id = "t1";
  record.from_shard = "s1";
  record.to_shard = "s2";
  record.subscriber = "alice";
  std::string s1_state = "e";
  EXPECT_FALSE(
      store.BeginTransfers({&record, 1}, "s1", std::string_view(s1_state))
          .ok());
  EXPECT_TRUE(store.ListTransfers()->empty());
  EXPECT_EQ(state(), "d");
  // Left: refused.
  epoch.epoch = 6;
  ASSERT_TRUE(machines->Leave("m1", 6).ok());
  EXPECT_EQ(store.Save("s1", "f").code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(state(), "d");
}

// Placements: a shard goes to the first live machine that claims it; a
// live machine keeps it (even under an older epoch of its own, taken back
// by itself only); a dead or left machine's shard is taken by the next; a
// lapsed epoch places nothing.
TEST(PgMachineStoreTest, AShardIsPlacedOnOneLiveMachineAndMovesOnlyWhenItDies) {
  const std::string url = FreshDatabase();
  auto store = OpenStore(url);
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Join({"m1", "a", 10}, 1, 0)->joined);
  ASSERT_TRUE(store->Join({"m2", "b", 10}, 2, 0)->joined);
  auto placed = store->Place("s1", "m1", 1);
  ASSERT_TRUE(placed.ok()) << placed.status().ToString();
  EXPECT_EQ(placed->machine_id, "m1");
  EXPECT_EQ(placed->epoch, 1u);
  // m2 is told who runs it.
  placed = store->Place("s1", "m2", 2);
  ASSERT_TRUE(placed.ok());
  EXPECT_EQ(placed->machine_id, "m1");
  // m1 under a new epoch (a fence, a restart) takes its own back at once.
  ASSERT_TRUE(store->Join({"m1", "a", 10}, 3, 1)->joined);
  placed = store->Place("s1", "m1", 3);
  EXPECT_EQ(placed->epoch, 3u);
  // An epoch that no longer holds its row places nothing.
  placed = store->Place("s2", "m1", 1);
  ASSERT_TRUE(placed.ok());
  EXPECT_EQ(placed->machine_id, "");
  EXPECT_TRUE(store->ListOrphanedPlacements()->empty());
  // m1 dies: its shard is an orphan, m2 takes it over; only one of two
  // claims wins.
  Age(url, "m1", 10'500);
  auto orphans = store->ListOrphanedPlacements();
  ASSERT_TRUE(orphans.ok()) << orphans.status().ToString();
  ASSERT_EQ(orphans->size(), 1u);
  EXPECT_EQ((*orphans)[0].shard_id, "s1");
  EXPECT_EQ((*orphans)[0].machine_id, "m1");
  placed = store->Place("s1", "m2", 2);
  EXPECT_EQ(placed->machine_id, "m2");
  EXPECT_EQ(store->Place("s1", "m1", 3)->machine_id, "m2");
  EXPECT_TRUE(store->ListOrphanedPlacements()->empty());
  auto all = store->ListPlacements();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ((*all)[0].shard_id, "s1");
  EXPECT_EQ((*all)[0].machine_id, "m2");
  // Unplaced only by its holder.
  ASSERT_TRUE(store->Unplace("s1", "m1", 3).ok());
  EXPECT_EQ(store->ListPlacements()->size(), 1u);
  ASSERT_TRUE(store->Unplace("s1", "m2", 2).ok());
  EXPECT_TRUE(store->ListPlacements()->empty());
  // A left machine's shard is free at once.
  ASSERT_TRUE(store->Place(std::string("s\0x", 3), "m2", 2).ok());
  ASSERT_TRUE(store->Join({"m3", "c", 10}, 4, 0)->joined);
  ASSERT_TRUE(store->Leave("m2", 2).ok());
  EXPECT_EQ(store->Place(std::string("s\0x", 3), "m3", 4)->machine_id, "m3");
  EXPECT_EQ(store->ListPlacements()->front().shard_id, std::string("s\0x", 3));
}

TEST(PgMachineStoreTest, BadArgumentsAreRefused) {
  auto store = OpenStore(FreshDatabase());
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->Join({"", "a", 1}, 1, 0).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(store->Join({"m1", "a", 1}, 0, 0).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(store->Heartbeat("m1", uint64_t{1} << 63).status().code(),
            StatusCode::kInvalidArgument);
  // Odd bytes in an id are kept as they are.
  ASSERT_TRUE(store->Join({"m'1; --", "a", 1}, 3, 0)->joined);
  EXPECT_EQ(store->List()->front().info.id, "m'1; --");
}

// A fresh database behind a HangingProxy, and a machine store on it whose
// statements wait at most `call_timeout_ms`.
struct ProxiedDatabase {
  bool Open(int64_t call_timeout_ms) {
    PgTestCluster* cluster = Cluster();
    if (cluster == nullptr) return false;
    direct = FreshDatabase();
    proxy = std::make_unique<HangingProxy>(cluster->port());
    store = OpenStore(
        proxy->Url(direct.substr(direct.rfind('/') + 1)),
        {.dead_after_ms = 10'000, .call_timeout_ms = call_timeout_ms});
    return store != nullptr;
  }
  std::string direct;  // the database's own URL
  std::unique_ptr<HangingProxy> proxy;
  std::unique_ptr<PgMachineStore> store;
};

TEST(PgMachineStoreTest, ADatabaseThatHangsFailsACallOnTimeAndIsReconnected) {
  ProxiedDatabase db;
  ASSERT_TRUE(db.Open(400));
  HangingProxy& proxy = *db.proxy;
  PgMachineStore* store = db.store.get();
  ASSERT_TRUE(store->Join({"m1", "a", 1}, 1, 0)->joined);
  proxy.set_hung(true);
  const auto start = std::chrono::steady_clock::now();
  auto beat = store->Heartbeat("m1", 1);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(beat.status().code(), StatusCode::kDeadlineExceeded)
      << beat.status().ToString();
  EXPECT_LT(took, std::chrono::seconds(3));
  proxy.set_hung(false);
  // The next call runs on a new connection.
  beat = store->Heartbeat("m1", 1);
  ASSERT_TRUE(beat.ok()) << beat.status().ToString();
  EXPECT_TRUE(*beat);
}

TEST(PgMachineStoreTest, MembershipFencesWhileTheDatabaseHangsThenRejoins) {
  ProxiedDatabase db;
  ASSERT_TRUE(db.Open(2'000));
  HangingProxy& proxy = *db.proxy;
  PgMachineStore* store = db.store.get();
  const std::string& direct = db.direct;
  std::atomic<int> joins{0}, fences{0};
  cluster::MembershipOptions options;
  options.self = {"m1", "127.0.0.1:1", 10};
  options.heartbeat_every_us = 100'000;
  options.fence_after_us = 600'000;
  options.fence_check_every_us = 20'000;
  options.on_joined = [&](uint64_t) { ++joins; };
  options.on_fenced = [&](std::string_view) { ++fences; };
  cluster::Membership membership(store, options);
  membership.Start();
  auto wait_for = [](const std::function<bool()>& done) {
    const auto until =
        std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!done() && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return done();
  };
  ASSERT_TRUE(wait_for([&] { return membership.may_run(); }));
  const uint64_t first = membership.view().epoch;
  proxy.set_hung(true);
  const auto hung_at = std::chrono::steady_clock::now();
  ASSERT_TRUE(wait_for([&] { return fences.load() == 1; }));
  // Fenced while the heartbeat call still hangs (it has 2 s to give up).
  EXPECT_LT(std::chrono::steady_clock::now() - hung_at,
            std::chrono::milliseconds(1'900));
  EXPECT_FALSE(membership.may_run());
  proxy.set_hung(false);
  ASSERT_TRUE(wait_for([&] { return joins.load() == 2; }));
  EXPECT_TRUE(membership.may_run());
  const uint64_t second = membership.view().epoch;
  EXPECT_NE(first, second);
  EXPECT_EQ(QueryOne(direct, "SELECT epoch FROM cluster_machines"),
            std::to_string(second));
  EXPECT_FALSE(Beat(*store, "m1", first));
  membership.Stop(/*leave=*/true);
  EXPECT_NE(QueryOne(direct, "SELECT left_ms FROM cluster_machines"), "");
  EXPECT_EQ(
      QueryOne(direct, "SELECT left_ms IS NOT NULL FROM cluster_machines"),
      "t");
}

}  // namespace
}  // namespace tessera::store::pg
