// RealmHost over a thread-less WorkerPool, a fake clock and the real SQLite
// realm store: attach answers, group commit, refusals, catch-up, idle
// unload, the server's update path, store failures and shutdown.
#include "realm/host.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "realm/host_testing.h"
#include "store/test_util.h"

namespace tessera::realm {
namespace {

using namespace host_testing;  // NOLINT

Json ReadRules() {
  return Json::parse(R"([
    {"path": "players/{avatar}/**", "write": "owner"},
    {"path": "chat", "write": "append"},
    {"path": "hands/{avatar}/**", "write": "owner", "read": "owner"}])");
}

class RealmHostTest : public HostFixture {
 protected:
  void SetUp() override { Make({Kind({{"rules", ReadRules()}})}); }
};

TEST_F(RealmHostTest, FirstAttachHydratesTheInitialState) {
  std::shared_ptr<RecordingPeer> a = Join("a");
  const AttachAnswer& answer = a->attached[0];
  EXPECT_TRUE(answer.hydrate);
  EXPECT_EQ(answer.epoch, 1);
  EXPECT_EQ(answer.head, 0);
  EXPECT_EQ(answer.avatar, "a");
  EXPECT_EQ(answer.state, Initial());
  ASSERT_NE(answer.kind, nullptr);
  EXPECT_EQ(answer.kind->name, "match");
  EXPECT_EQ(host_->instance_count(), 1u);
}

TEST_F(RealmHostTest, WritesAreDurableBeforeAnyPeerHearsOfThem) {
  std::shared_ptr<RecordingPeer> a = Join("a");
  std::shared_ptr<RecordingPeer> b = Join("b");
  host_->Write("match", "m1", a.get(), 7, {Set(P({"players", "a"}), 1)});
  EXPECT_TRUE(a->commits.empty());  // queued, not yet run
  Pass();
  ASSERT_EQ(b->Versions(), std::vector<int64_t>({1}));
  ASSERT_EQ(a->Versions(), std::vector<int64_t>({1}));
  EXPECT_EQ(a->commits[0].writer, a.get());
  EXPECT_EQ(a->commits[0].seq, 7u);
  EXPECT_EQ(b->commits[0].patch, Patch({Set(P({"players", "a"}), 1)}));
  // In the store by the time the peers were told.
  Result<std::optional<LoadedRealm>> loaded = store_->Load("match/m1");
  ASSERT_TRUE(loaded.ok() && loaded->has_value());
  EXPECT_EQ((*loaded)->head_version(), 1);
}

TEST_F(RealmHostTest, WritesQueuedTogetherAreOneGroupCommit) {
  std::shared_ptr<RecordingPeer> a = Join("a");
  std::shared_ptr<RecordingPeer> b = Join("b");
  for (uint64_t i = 1; i <= 5; ++i) {
    host_->Write("match", "m1", i % 2 ? a.get() : b.get(), i,
                 {{OpKind::kAppend, P({"chat"}), "line " + std::to_string(i)}});
  }
  Pass();
  EXPECT_EQ(b->Versions(), std::vector<int64_t>({1, 2, 3, 4, 5}));
  EXPECT_EQ(b->batches, 1);  // one flush, one delivery
  EXPECT_EQ(a->batches, 1);
}

TEST_F(RealmHostTest, BatchMsSendsAtOnceThenHoldsTheWindowsWritesTogether) {
  Make({Kind({{"rules", ReadRules()}, {"batchMs", 10}})});
  std::shared_ptr<RecordingPeer> a = Join("a");
  std::shared_ptr<RecordingPeer> b = Join("b");
  // After a quiet spell a write goes out at once.
  host_->Write("match", "m1", a.get(), 1, {Set(P({"players", "a"}), 1)});
  Pass();
  EXPECT_EQ(b->Versions(), std::vector<int64_t>({1}));
  // What comes in during the next 10 ms waits for the window's end...
  host_->Write("match", "m1", a.get(), 2, {Set(P({"players", "a"}), 2)});
  Advance(4);
  host_->Write("match", "m1", b.get(), 3, {Set(P({"players", "b"}), 3)});
  Pass();
  Advance(5);
  Pass();
  EXPECT_EQ(b->Versions(), std::vector<int64_t>({1}));
  // ...and then goes out as one group commit.
  Advance(1);
  Pass();
  EXPECT_EQ(b->Versions(), std::vector<int64_t>({1, 2, 3}));
  EXPECT_EQ(b->batches, 2);
  EXPECT_EQ(a->batches, 2);
  // Nothing was stored twice or out of order.
  Result<std::optional<LoadedRealm>> loaded = store_->Load("match/m1");
  ASSERT_TRUE(loaded.ok() && loaded->has_value());
  EXPECT_EQ((*loaded)->head_version(), 3);
  // Quiet again for longer than the window: the next write is not held.
  Advance(50);
  host_->Write("match", "m1", a.get(), 4, {Set(P({"players", "a"}), 4)});
  Pass();
  EXPECT_EQ(b->Versions(), std::vector<int64_t>({1, 2, 3, 4}));
}

TEST_F(RealmHostTest, WithoutBatchMsEveryPassSendsWhatItCommitted) {
  std::shared_ptr<RecordingPeer> a = Join("a");
  std::shared_ptr<RecordingPeer> b = Join("b");
  for (int i = 1; i <= 3; ++i) {
    host_->Write("match", "m1", a.get(), i, {Set(P({"players", "a"}), i)});
    Pass();
    EXPECT_EQ(b->batches, i);
  }
}

TEST_F(RealmHostTest, RefusedWritesAreAnsweredAndApplyNothing) {
  std::shared_ptr<RecordingPeer> a = Join("a");
  std::shared_ptr<RecordingPeer> b = Join("b");
  host_->Write("match", "m1", b.get(), 1, {Set(P({"players", "a", "x"}), 1)});
  host_->Write("match", "m1", b.get(), 2, {{OpKind::kDelete, P({"chat"}), {}}});
  host_->Write("match", "m1", b.get(), 3,
               {{OpKind::kDelete, P({"players", "b", "gone"}), {}}});
  host_->Write("match", "m1", a.get(), 4, {Set(P({"players", "a"}), 1)});
  Pass();
  ASSERT_EQ(b->rejected.size(), 3u);
  EXPECT_EQ(b->rejected[0].seq, 1u);
  EXPECT_EQ(b->rejected[0].code, "permission_denied");
  EXPECT_NE(b->rejected[0].message.find("owned by avatar a"), std::string::npos)
      << b->rejected[0].message;
  EXPECT_EQ(b->rejected[1].code, "permission_denied");
  EXPECT_EQ(b->rejected[2].code, "invalid_patch");
  EXPECT_TRUE(a->rejected.empty());
  // Only a's write became a commit, as version 1.
  EXPECT_EQ(b->Versions(), std::vector<int64_t>({1}));
  EXPECT_EQ(b->commits[0].seq, 4u);
}

TEST_F(RealmHostTest, AWriteOfAPeerNotAttachedIsDropped) {
  std::shared_ptr<RecordingPeer> a = Join("a");
  RecordingPeer stranger;
  host_->Write("match", "m1", &stranger, 1, {Set(P({"n"}), 1)});
  Pass();
  EXPECT_TRUE(a->commits.empty());
  EXPECT_TRUE(stranger.rejected.empty());
}

TEST_F(RealmHostTest, AReconnectWithinTheWindowResumesWithTheMissingCommits) {
  std::shared_ptr<RecordingPeer> a = Join("a");
  for (uint64_t i = 1; i <= 4; ++i) {
    host_->Write("match", "m1", a.get(), i,
                 {{OpKind::kAppend, P({"chat"}), static_cast<int64_t>(i)}});
  }
  Pass();
  host_->Detach("match", "m1", a.get());
  std::shared_ptr<RecordingPeer> again = Join("a", "m1", 1, 2);
  const AttachAnswer& answer = again->attached[0];
  EXPECT_FALSE(answer.hydrate);
  EXPECT_EQ(answer.from, 2);
  EXPECT_EQ(answer.head, 4);
  ASSERT_EQ(answer.replay.size(), 2u);
  EXPECT_EQ(answer.replay[0].version, 3);
  EXPECT_EQ(answer.replay[1].patch, Patch({{OpKind::kAppend, P({"chat"}), 4}}));
  // Another epoch, or a version the realm never had: a hydrate.
  EXPECT_TRUE(Join("a", "m1", 2, 2)->attached[0].hydrate);
  EXPECT_TRUE(Join("a", "m1", 1, 9)->attached[0].hydrate);
}

TEST_F(RealmHostTest, AHydrateIsSlicedForTheReader) {
  Result<int64_t> v = Update(
      "m1", {Set(P({"hands"}),
                 {{"a", {{"cards", {1, 2}}}}, {"b", {{"cards", {3}}}}})});
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(*v, 1);
  std::shared_ptr<RecordingPeer> b = Join("b");
  EXPECT_EQ(b->attached[0].state["hands"],
            Json::parse(R"({"b": {"cards": [3]}})"));
  EXPECT_EQ(b->attached[0].head, 1);
}

TEST_F(RealmHostTest, ServerUpdatesAreBroadcastWithoutAWriter) {
  std::shared_ptr<RecordingPeer> a = Join("a");
  Result<int64_t> v = Update("m1", {Set(P({"n"}), 42)});
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  ASSERT_EQ(a->Versions(), std::vector<int64_t>({*v}));
  EXPECT_EQ(a->commits[0].writer, nullptr);
  // Not bound by the rules, but still by the patch's own validity.
  Result<int64_t> bad = Update("m1", {{OpKind::kDelete, P({"missing"}), {}}});
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Update("m1", {}).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(RealmHostTest, AnIdleDurableInstanceUnloadsAndReloadsFromTheStore) {
  std::shared_ptr<RecordingPeer> a = Join("a");
  host_->Write("match", "m1", a.get(), 1, {Set(P({"players", "a"}), 5)});
  Pass();
  host_->Detach("match", "m1", a.get());
  Pass();
  EXPECT_EQ(host_->instance_count(), 1u);
  clock_.Advance(999'000);
  Pass();
  EXPECT_EQ(host_->instance_count(), 1u);  // 1 s idle is the limit
  clock_.Advance(2'000);
  Pass();
  EXPECT_EQ(host_->instance_count(), 0u);
  std::shared_ptr<RecordingPeer> back = Join("a", "m1", 1, 1);
  EXPECT_FALSE(back->attached[0].hydrate);  // same epoch, at the head
  EXPECT_EQ(back->attached[0].head, 1);
  EXPECT_TRUE(back->attached[0].replay.empty());
}

TEST_F(RealmHostTest, AnIdleEphemeralInstanceIsGoneAfterUnload) {
  Make({Kind({{"name", "match"},
              {"persistence", "ephemeral"},
              {"schema", Json::object()}})});
  std::shared_ptr<RecordingPeer> a = Join("a");
  const int64_t epoch = a->attached[0].epoch;
  EXPECT_GT(epoch, 1);
  host_->Write("match", "m1", a.get(), 1, {Set(P({"players", "a"}), 5)});
  Pass();
  host_->Detach("match", "m1", a.get());
  Pass();
  clock_.Advance(2'000'000);
  Pass();
  EXPECT_EQ(host_->instance_count(), 0u);
  std::shared_ptr<RecordingPeer> back = Join("a", "m1", epoch, 1);
  EXPECT_TRUE(back->attached[0].hydrate);
  EXPECT_NE(back->attached[0].epoch, epoch);
  EXPECT_EQ(back->attached[0].state, Initial());
}

TEST_F(RealmHostTest, AStoreFailureClosesEveryPeerAndTheNextAttachReloads) {
  std::shared_ptr<RecordingPeer> a = Join("a");
  std::shared_ptr<RecordingPeer> b = Join("b");
  // A second writer on the same realm: the host's next flush is fenced.
  std::unique_ptr<RealmInstance> rival = OpenRealm(Kind(), store_.get());
  ASSERT_NE(rival, nullptr);
  Commit(rival.get(), 1);
  ASSERT_TRUE(rival->Flush().ok());
  host_->Write("match", "m1", a.get(), 1, {Set(P({"players", "a"}), 1)});
  Pass();
  ASSERT_EQ(a->closed.size(), 1u);
  EXPECT_EQ(a->closed[0].code, kCloseRealmUnavailable);
  EXPECT_NE(a->closed[0].reason.find("match/m1"), std::string::npos);
  ASSERT_EQ(b->closed.size(), 1u);
  EXPECT_TRUE(b->commits.empty());  // never durable, never sent
  EXPECT_EQ(host_->instance_count(), 0u);
  // The store's truth: the rival's commit.
  std::shared_ptr<RecordingPeer> c = Join("c");
  EXPECT_EQ(c->attached[0].head, 1);
  EXPECT_EQ(c->attached[0].state["n"], 1);
}

TEST_F(RealmHostTest, ShutdownCommitsWhatWasQueuedAndClosesPeers) {
  std::shared_ptr<RecordingPeer> a = Join("a");
  host_->Write("match", "m1", a.get(), 1, {Set(P({"players", "a"}), 1)});
  host_->Shutdown();
  EXPECT_EQ(a->Versions(), std::vector<int64_t>({1}));
  ASSERT_EQ(a->closed.size(), 1u);
  EXPECT_EQ(a->closed[0].code, kCloseGoingAway);
  EXPECT_EQ(host_->Attach("match", "m1", a, "a", 0, 0).code(),
            StatusCode::kUnavailable);
  Result<std::optional<LoadedRealm>> loaded = store_->Load("match/m1");
  ASSERT_TRUE(loaded.ok() && loaded->has_value());
  EXPECT_EQ((*loaded)->head_version(), 1);
}

TEST_F(RealmHostTest, UnknownKindsAndBadKeysAreRefusedAtOnce) {
  auto peer = std::make_shared<RecordingPeer>();
  Status missing = host_->Attach("nope", "m1", peer, "a", 0, 0);
  EXPECT_EQ(missing.code(), StatusCode::kNotFound);
  EXPECT_NE(missing.message().find("nope"), std::string::npos);
  for (const std::string& key :
       std::vector<std::string>{"", "a/b", "sp ace", std::string(129, 'k')}) {
    EXPECT_EQ(host_->Attach("match", key, peer, "a", 0, 0).code(),
              StatusCode::kInvalidArgument)
        << key;
  }
  EXPECT_TRUE(RealmHost::ValidKey("Room-1.a:b_c"));
  EXPECT_EQ(host_->instance_count(), 0u);
}

}  // namespace
}  // namespace tessera::realm

namespace tessera::realm {
namespace {

using namespace host_testing;  // NOLINT

TEST(RealmHostMetricsTest, CommitsRefusalsAndInstancesAreCounted) {
  FakeClock clock(1'000'000);
  guest::WorkerPool pool(guest::WorkerPoolOptions{0, &clock, 100'000});
  std::unique_ptr<store::SqliteRealmStore> store = OpenStore(":memory:");
  Metrics metrics;
  RealmHostOptions options;
  options.pool = &pool;
  options.store = store.get();
  options.metrics = &metrics;
  RealmHost host({Kind()}, std::move(options));
  auto a = std::make_shared<RecordingPeer>();
  ASSERT_TRUE(host.Attach("match", "m1", a, "a", 0, 0).ok());
  pool.RunPass(clock.NowUs());
  host.Write("match", "m1", a.get(), 1, {{OpKind::kAppend, P({"chat"}), 1}});
  host.Write("match", "m1", a.get(), 2, {{OpKind::kAppend, P({"chat"}), 2}});
  host.Write("match", "m1", a.get(), 3, {Set(P({"n"}), 1)});  // server-only
  pool.RunPass(clock.NowUs());
  const std::string text = metrics.Render();
  EXPECT_NE(text.find("tessera_realm_commits_total 2"), std::string::npos)
      << text;
  EXPECT_NE(text.find("tessera_realm_refusals_total 1"), std::string::npos);
  EXPECT_NE(text.find("tessera_realm_instances 1"), std::string::npos);
  EXPECT_NE(text.find("tessera_realm_flush_seconds_count 1"),
            std::string::npos);
}

}  // namespace
}  // namespace tessera::realm
