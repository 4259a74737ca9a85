// Interest management and replication through the whole host: the
// zone_mini test guest (tests/guests/zone_mini) on a manual ShardHost,
// frames decoded the way a client would.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "common/clock.h"
#include "replication/decoder.h"
#include "shard/manual_host_test.h"
#include "shard/shard_host.h"
#include "shard/test_guests.h"

namespace tessera::shard {
namespace {

using ::tessera::shard::testing::FromMsgpack;
using ::tessera::shard::testing::Msgpack;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using json = nlohmann::json;

class ViewSink final : public ShardSink {
 public:
  void OnFrame(std::string_view, uint64_t, std::string_view,
               const std::vector<InputResult>& inputs) override {
    std::lock_guard<std::mutex> lock(mu);
    ++broadcasts;
    Record(inputs);
  }
  void OnViews(std::string_view,
               std::shared_ptr<const ViewFrame> frame) override {
    std::lock_guard<std::mutex> lock(mu);
    Record(frame->inputs);
    frames.push_back(*frame);
  }
  void OnStopped(std::string_view, StopReason, std::string_view m) override {
    std::lock_guard<std::mutex> lock(mu);
    stopped = std::string(m);
  }
  void Record(const std::vector<InputResult>& inputs) {
    for (const InputResult& r : inputs) {
      if (!r.accepted) rejections.push_back(r.rejection);
    }
  }
  // The last frame's view of `subscriber`, or nullptr.
  const SubscriberView* Last(const std::string& subscriber) {
    if (frames.empty()) return nullptr;
    for (const SubscriberView& v : frames.back().views) {
      if (v.subscriber == subscriber) return &v;
    }
    return nullptr;
  }

  std::mutex mu;
  std::vector<ViewFrame> frames;
  size_t broadcasts = 0;
  std::vector<std::string> rejections;
  std::string stopped;
};

class SubscriberFramesTest : public testing::ManualHostTest<ViewSink> {
 protected:
  void SetUp() override { StartHost({{"zone", "zone_mini"}}); }

  void Start(const json& params) {
    ASSERT_TRUE(host_->Create("zone", "z", Msgpack(params)).ok());
  }
  void Join(const std::string& sub) {
    ASSERT_TRUE(host_->AddSubscriber("z", sub).ok());
    Input(sub, {{"join", json::object()}});
  }
  void Input(const std::string& sub, const json& input) {
    ASSERT_TRUE(host_->SubmitInput("z", sub, ++seq_, Msgpack(input)).ok());
  }
  // The snapshot_visible of `sub` in the last frame.
  json Visible(const std::string& sub) {
    const SubscriberView* v = sink_.Last(sub);
    if (v == nullptr || v->snapshot == nullptr) return nullptr;
    return FromMsgpack(*v->snapshot);
  }
  // Feeds `sub`'s payload of the last frame to `decoder`.
  void Decode(const std::string& sub, replication::Decoder& decoder) {
    const SubscriberView* v = sink_.Last(sub);
    ASSERT_NE(v, nullptr) << "no view for " << sub;
    ASSERT_NE(v->entities, nullptr);
    Status s = decoder.Apply(*v->entities);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  static std::vector<uint64_t> Ids(const replication::Decoder& d) {
    std::vector<uint64_t> ids;
    for (const auto& e : d.entities()) ids.push_back(e.id);
    return ids;
  }
};

TEST_F(SubscriberFramesTest, EachSubscriberSeesWhatIsNearAndWhatItMaySee) {
  Start({{"mode", "interest"}});
  Join("alice");
  Join("scout-bob");
  Step();
  ASSERT_FALSE(sink_.frames.empty());
  EXPECT_EQ(sink_.broadcasts, 0u);
  // Players 1000 (alice) and 1001 (bob) at (0, 0), radius 200: rock, tree
  // and the stealthed unit are in range, the far one is not; only the
  // scout may see the stealthed unit.
  EXPECT_EQ(Visible("alice")["visible"], json({1, 2, 1000, 1001}));
  EXPECT_EQ(Visible("scout-bob")["visible"], json({1, 2, 3, 1000, 1001}));
  EXPECT_EQ(Visible("alice")["entered"], json({1, 2, 1000, 1001}));

  // Alice walks to the far unit: what she leaves and meets is listed once.
  Input("alice", {{"move_to", {{"x", 1000}, {"y", 990}}}});
  Step();
  EXPECT_EQ(Visible("alice")["visible"], json({4, 1000}));
  EXPECT_EQ(Visible("alice")["entered"], json({4}));
  EXPECT_EQ(Visible("alice")["left"], json({1, 2, 1001}));
  Step();
  EXPECT_EQ(Visible("alice")["entered"], json::array());
  EXPECT_EQ(Visible("alice")["left"], json::array());
  // A subscriber unknown to the module (no player yet) sees nothing.
  ASSERT_TRUE(host_->AddSubscriber("z", "carol").ok());
  Step();
  EXPECT_EQ(Visible("carol")["visible"], json::array());
}

// Two subscribers at the same place: equal visible sets. Returns whether
// their snapshots are one shared buffer.
bool SameBuffer(SubscriberFramesTest& t, ViewSink& sink) {
  const SubscriberView* a = sink.Last("a");
  const SubscriberView* b = sink.Last("b");
  EXPECT_NE(a, nullptr);
  EXPECT_NE(b, nullptr);
  if (a == nullptr || b == nullptr) return false;
  EXPECT_EQ(FromMsgpack(*a->snapshot)["visible"],
            FromMsgpack(*b->snapshot)["visible"]);
  (void)t;
  return a->snapshot.get() == b->snapshot.get();
}

TEST_F(SubscriberFramesTest, SnapshotsAreNotSharedUnlessTurnedOn) {
  Start({{"mode", "interest"}, {"shared", false}});
  Join("a");
  Join("b");
  Step();
  EXPECT_FALSE(SameBuffer(*this, sink_));
}

TEST_F(SubscriberFramesTest, SharedSnapshotsAreEncodedOncePerVisibleSet) {
  Start({{"mode", "interest"}, {"shared", true}});
  Join("a");
  Join("b");
  Join("scout-c");  // sees the stealthed unit too: another set
  Step();
  EXPECT_TRUE(SameBuffer(*this, sink_));
  EXPECT_NE(sink_.Last("scout-c")->snapshot.get(),
            sink_.Last("a")->snapshot.get());
}

TEST_F(SubscriberFramesTest, ReplicationReconstructsEachSubscribersWorld) {
  Start({{"mode", "replicate"}, {"movers", 3}});
  Join("alice");
  Join("scout-bob");
  replication::Decoder alice, bob;
  Step();
  ASSERT_TRUE(sink_.frames.back().replication);
  ASSERT_TRUE(sink_.Last("alice")->baseline);
  Decode("alice", alice);
  Decode("scout-bob", bob);
  // Movers 10, 11, 12 start at (0, 20), (0, 40), (0, 60), moving +1 in x.
  EXPECT_THAT(Ids(alice), ElementsAre(1, 2, 10, 11, 12, 1000, 1001));
  EXPECT_THAT(Ids(bob), ElementsAre(1, 2, 3, 10, 11, 12, 1000, 1001));
  const auto* rock = alice.Find(1);
  ASSERT_NE(rock, nullptr);
  ASSERT_EQ(rock->components.size(), 1u);
  EXPECT_EQ(rock->components[0].bytes, "rock");
  const double x0 = alice.Coordinate(*alice.Find(10), 0);
  for (int i = 0; i < 5; ++i) {
    Step();
    ASSERT_FALSE(sink_.Last("alice")->baseline);
    Decode("alice", alice);
    Decode("scout-bob", bob);
  }
  EXPECT_NEAR(alice.Coordinate(*alice.Find(10), 0), x0 + 5, 0.005);
  EXPECT_NEAR(bob.Coordinate(*bob.Find(12), 0), x0 + 5, 0.005);
  EXPECT_NEAR(alice.Coordinate(*alice.Find(11), 1), 40, 0.005);

  // A component change, a removal, and an id removed and reused in one tick.
  Input("alice",
        {{"set_component", {{"id", 2}, {"component", 7}, {"value", "tall"}}}});
  Input("alice", {{"remove", {{"id", 10}}}});
  Input("alice", {{"reuse", {{"id", 1}, {"x", 5}, {"y", 5}}}});
  Step();
  EXPECT_THAT(sink_.rejections, IsEmpty());
  Decode("alice", alice);
  EXPECT_THAT(alice.left(), ElementsAre(1, 10));
  EXPECT_THAT(alice.entered(), ElementsAre(1));
  EXPECT_EQ(alice.Find(10), nullptr);
  ASSERT_EQ(alice.Find(2)->components.size(), 2u);
  EXPECT_EQ(alice.Find(2)->components[1].bytes, "tall");
  EXPECT_NEAR(alice.Coordinate(*alice.Find(1), 0), 5, 0.005);

  // The shard snapshot is passed along only when it changed.
  const auto& frames = sink_.frames;
  EXPECT_EQ(frames[frames.size() - 2].snapshot.get(),
            frames[frames.size() - 3].snapshot.get());
  EXPECT_NE(frames.back().snapshot.get(),
            frames[frames.size() - 2].snapshot.get());
}

TEST_F(SubscriberFramesTest, ANewConnectionGetsABaseline) {
  Start({{"mode", "replicate_all"}});
  Join("alice");
  Step();
  Step();
  ASSERT_FALSE(sink_.Last("alice")->baseline);
  // A second tab of the same subscriber: both get a full frame next.
  ASSERT_TRUE(host_->AddSubscriber("z", "alice").ok());
  Step();
  ASSERT_TRUE(sink_.Last("alice")->baseline);
  replication::Decoder late;
  Decode("alice", late);
  // Without interest every subscriber holds every entity.
  EXPECT_THAT(Ids(late), ElementsAre(1, 2, 3, 4, 1000));
}

// Without interest every client holding the mirror's state gets the same
// bytes: one payload buffer per tick for them all, and each client still
// rebuilds the exact world from it.
TEST_F(SubscriberFramesTest, SubscribersInStepShareOnePayload) {
  Start({{"mode", "replicate_all"}, {"movers", 2}});
  Join("alice");
  Join("bob");
  replication::Decoder alice, bob, carol;
  Step();
  ASSERT_TRUE(sink_.Last("alice")->baseline);
  ASSERT_TRUE(sink_.Last("bob")->baseline);
  Decode("alice", alice);
  Decode("bob", bob);
  const double x0 = alice.Coordinate(*alice.Find(10), 0);
  Step();
  ASSERT_FALSE(sink_.Last("alice")->baseline);
  EXPECT_EQ(sink_.Last("alice")->entities.get(),
            sink_.Last("bob")->entities.get());
  Decode("alice", alice);
  Decode("bob", bob);

  // A late joiner gets its own BASELINE, then joins the group.
  Join("carol");
  Step();
  ASSERT_TRUE(sink_.Last("carol")->baseline);
  EXPECT_NE(sink_.Last("carol")->entities.get(),
            sink_.Last("alice")->entities.get());
  Decode("alice", alice);
  Decode("bob", bob);
  Decode("carol", carol);
  Step();
  EXPECT_EQ(sink_.Last("carol")->entities.get(),
            sink_.Last("alice")->entities.get());
  Decode("alice", alice);
  Decode("bob", bob);
  Decode("carol", carol);

  // A member reconnecting leaves the group for a BASELINE of its own.
  ASSERT_TRUE(host_->AddSubscriber("z", "bob").ok());
  Input("alice", {{"remove", {{"id", 11}}}});
  Step();
  ASSERT_TRUE(sink_.Last("bob")->baseline);
  EXPECT_NE(sink_.Last("bob")->entities.get(),
            sink_.Last("alice")->entities.get());
  replication::Decoder bob2;
  Decode("alice", alice);
  Decode("bob", bob2);
  Decode("carol", carol);
  Step();
  EXPECT_EQ(sink_.Last("bob")->entities.get(),
            sink_.Last("alice")->entities.get());
  Decode("alice", alice);
  Decode("bob", bob2);
  Decode("carol", carol);

  // Everyone holds the same world: the movers moved 6 ticks, 11 is gone.
  for (const replication::Decoder* d : {&alice, &bob2, &carol}) {
    EXPECT_THAT(Ids(*d), ElementsAre(1, 2, 3, 4, 10, 1000, 1001, 1002));
    EXPECT_NEAR(d->Coordinate(*d->Find(10), 0), x0 + 5, 0.005);
  }
}

// With a budget ranked by each subscriber's own area, nothing is shared.
TEST_F(SubscriberFramesTest, BudgetedPayloadsAreNotShared) {
  Start({{"mode", "replicate_all"}, {"movers", 2}, {"budget", 400}});
  Join("alice");
  Join("bob");
  Step();
  Step();
  ASSERT_FALSE(sink_.Last("alice")->baseline);
  EXPECT_NE(sink_.Last("alice")->entities.get(),
            sink_.Last("bob")->entities.get());
}

}  // namespace
}  // namespace tessera::shard

namespace tessera::shard {
namespace {

std::vector<std::string> Within(const ShardHost& host, std::string_view id,
                                float x, float y, float radius) {
  auto within = host.SubscribersWithin(id, x, y, radius);
  EXPECT_TRUE(within.ok()) << within.status().ToString();
  return within.ok() ? *within : std::vector<std::string>{"<error>"};
}

// Spatial notifications: the subscribers whose interest-area centre at the
// last tick is within a radius of a point.
TEST_F(SubscriberFramesTest, SubscribersWithinReadsTheLastTicksAreaCentres) {
  Start({{"mode", "interest"}});
  // Before any tick: running, no centres yet.
  auto none = host_->SubscribersWithin("z", 0, 0, 1e9f);
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_THAT(*none, IsEmpty());
  Join("alice");
  Join("bob");
  ASSERT_TRUE(host_->AddSubscriber("z", "carol").ok());  // no player: no area
  Step();
  // alice and bob stand at (0, 0); carol has no area.
  auto near = host_->SubscribersWithin("z", 3, 4, 5);  // distance 5: inside
  ASSERT_TRUE(near.ok());
  EXPECT_THAT(*near, ElementsAre("alice", "bob"));
  auto just_out = host_->SubscribersWithin("z", 3, 4, 4.99f);
  ASSERT_TRUE(just_out.ok());
  EXPECT_THAT(*just_out, IsEmpty());

  Input("alice", {{"move_to", {{"x", 500}, {"y", 500}}}});
  // Not ticked yet: the centres are still the last tick's.
  EXPECT_THAT(Within(*host_, "z", 0, 0, 10), ElementsAre("alice", "bob"));
  Step();
  EXPECT_THAT(Within(*host_, "z", 0, 0, 10), ElementsAre("bob"));
  EXPECT_THAT(Within(*host_, "z", 505, 500, 10), ElementsAre("alice"));
  // A subscriber that left is gone from the next tick's centres.
  ASSERT_TRUE(host_->RemoveSubscriber("z", "bob").ok());
  Step();
  EXPECT_THAT(Within(*host_, "z", 0, 0, 10), IsEmpty());

  EXPECT_EQ(host_->SubscribersWithin("nope", 0, 0, 1).status().code(),
            StatusCode::kNotFound);
  ASSERT_TRUE(host_->Stop("z").ok());
  Step();
  EXPECT_EQ(host_->SubscribersWithin("z", 0, 0, 1).status().code(),
            StatusCode::kNotFound);
}

TEST_F(SubscriberFramesTest, ShardsOfKindListsTheRunningOnes) {
  Start({{"mode", "interest"}});
  ASSERT_TRUE(host_->Create("zone", "a", Msgpack({{"mode", "interest"}})).ok());
  EXPECT_THAT(host_->ShardsOfKind("zone"), ElementsAre("a", "z"));
  EXPECT_THAT(host_->ShardsOfKind("other"), IsEmpty());
  ASSERT_TRUE(host_->Stop("a").ok());
  Step();
  EXPECT_THAT(host_->ShardsOfKind("zone"), ElementsAre("z"));
}

}  // namespace
}  // namespace tessera::shard
