// The zone example (interest management and replication) on the real
// `tessera dev`: players receive only the units near them, as entity
// changes that a client decoder (the reference replication::Decoder)
// reconstructs; stealthed units only for scouts; a reconnect gets a fresh
// baseline.
#include <cmath>
#include <string>

#include "replication/decoder.h"
#include "tests/e2e/e2e_fixture.h"

namespace tessera::e2e {
namespace {

constexpr double kRadius = 300;  // examples/zone's interest radius
constexpr double kMargin = 15;   // and its hysteresis
constexpr int kNpcs = 400;

// A component's MessagePack value, or null.
json Component(const replication::DecodedEntity& e, uint8_t id) {
  for (const auto& c : e.components) {
    if (c.id == id) {
      return json::from_msgpack(c.bytes, true, /*allow_exceptions=*/false);
    }
  }
  return nullptr;
}

class ZoneTest : public E2eTest {
 protected:
  void SetUp() override {
    E2eTest::SetUp();
    app_ = dir() / "zone";
    fs::copy(fs::path(TESSERA_SOURCE_DIR) / "examples/zone", app_,
             fs::copy_options::recursive);
    fs::remove_all(app_ / ".tessera");
    ASSERT_NE(StartDev(app_), nullptr);
  }

  std::unique_ptr<TestClient> Player(const std::string& name) {
    HttpResult r =
        Http("POST", "/api/dev/join",
             {{"shard", "zone-1"}, {"kind", "zone"}, {"subscriber", name}});
    EXPECT_EQ(r.status, 200) << r.body;
    json body = json::parse(r.body, nullptr, false);
    std::unique_ptr<TestClient> client =
        Join("zone-1", body.value("ticket", ""));
    if (client) {
      EXPECT_TRUE(
          client->SendInput(1, Msgpack({{"join", json::object()}})).ok());
    }
    return client;
  }

  // Reads `frames` FRAMEs (a count, not a time: a busy machine delivers
  // them later, not fewer), applying each one's entities to `decoder`.
  // Returns how many FRAMEs were applied; counts nil snapshots.
  int Play(TestClient& client, replication::Decoder& decoder, int frames,
           int* nil_snapshots = nullptr) {
    int applied = 0;
    while (applied < frames) {
      Result<net::v1::Frame> frame = client.ReadUntil<net::v1::Frame>(10000);
      if (!frame.ok()) {
        ADD_FAILURE() << frame.status().ToString();
        break;
      }
      if (!frame->entities.has_value()) {
        ADD_FAILURE() << "a FRAME without entities from a replicated shard";
        break;
      }
      if (nil_snapshots != nullptr && frame->snapshot_nil) ++*nil_snapshots;
      Status s = decoder.Apply(*frame->entities);
      if (!s.ok()) {
        ADD_FAILURE() << "frame " << frame->tick << ": " << s.ToString();
        break;
      }
      ++applied;
    }
    return applied;
  }

  // The player unit named `name` in `decoder`, or nullptr.
  static const replication::DecodedEntity* Self(
      const replication::Decoder& decoder, const std::string& name) {
    for (const auto& e : decoder.entities()) {
      if (Component(e, 2) == name) return &e;
    }
    return nullptr;
  }

  fs::path app_;
};

TEST_F(ZoneTest, PlayersReceiveOnlyNearbyUnitsAsEntityChanges) {
  std::unique_ptr<TestClient> alice = Player("alice");
  std::unique_ptr<TestClient> scout = Player("scout-1");
  ASSERT_TRUE(alice && scout);
  replication::Decoder alice_world, scout_world;
  int nil_snapshots = 0;
  // 1.5 s and 0.3 s of a 20 Hz shard.
  ASSERT_EQ(Play(*alice, alice_world, 30, &nil_snapshots), 30);
  ASSERT_EQ(Play(*scout, scout_world, 6), 6);
  EXPECT_GT(nil_snapshots, 0) << "the unchanged snapshot was sent each tick";

  const replication::DecodedEntity* me = Self(alice_world, "alice");
  ASSERT_NE(me, nullptr) << "alice does not see her own unit";
  EXPECT_EQ(Component(*me, 1), "player");
  const double x = alice_world.Coordinate(*me, 0);
  const double y = alice_world.Coordinate(*me, 1);
  size_t near = 0;
  for (const auto& e : alice_world.entities()) {
    const double d = std::hypot(alice_world.Coordinate(e, 0) - x,
                                alice_world.Coordinate(e, 1) - y);
    // Held positions may trail by a few deferred updates.
    EXPECT_LE(d, kRadius + kMargin + 10) << "entity " << e.id;
    ++near;
    // A non-scout sees a stealthed unit only within 50 units.
    if (Component(e, 1) == "stealth") {
      EXPECT_LE(d, 60) << "entity " << e.id;
    }
  }
  EXPECT_GT(near, 5u);
  EXPECT_LT(near, static_cast<size_t>(kNpcs) / 2) << "interest sends too much";
  // The scout sees the other player, who stands next to it.
  EXPECT_NE(Self(scout_world, "alice"), nullptr);
}

TEST_F(ZoneTest, AReconnectStartsFromAFreshBaseline) {
  std::unique_ptr<TestClient> alice = Player("alice");
  ASSERT_TRUE(alice);
  replication::Decoder first;
  ASSERT_EQ(Play(*alice, first, 12), 12);
  ASSERT_TRUE(alice->Close().ok());

  HttpResult r = Http("POST", "/api/dev/join",
                      {{"shard", "zone-1"}, {"subscriber", "alice"}});
  ASSERT_EQ(r.status, 200) << r.body;
  std::unique_ptr<TestClient> again =
      Join("zone-1", json::parse(r.body).value("ticket", ""));
  ASSERT_TRUE(again);
  // A fresh decoder must be able to start from the very first FRAME.
  Result<net::v1::Frame> frame = again->ReadUntil<net::v1::Frame>(3000);
  ASSERT_TRUE(frame.ok()) << frame.status().ToString();
  ASSERT_TRUE(frame->entities.has_value());
  EXPECT_FALSE(frame->snapshot_nil)
      << "the first FRAME must carry the snapshot";
  replication::Decoder second;
  Status s = second.Apply(*frame->entities);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_NE(Self(second, "alice"), nullptr);
  EXPECT_GT(second.entities().size(), 5u);
}

}  // namespace
}  // namespace tessera::e2e
