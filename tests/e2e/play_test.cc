// Playing the arena through `tessera dev`: joining with tickets from the
// dev join and from `tessera ticket`, moving, rejections, two players
// seeing each other, and the arena's replication mode.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "replication/decoder.h"
#include "tests/e2e/e2e_fixture.h"

namespace tessera::e2e {
namespace {

using net::v1::Frame;
using net::v1::Reject;

class PlayTest : public E2eTest {};

TEST_F(PlayTest, JoinWithTheDevTicketAndMove) {
  const fs::path app = CopyArena();
  ASSERT_NE(StartDev(app), nullptr);
  const json join = DevJoin("arena-1", "alice");
  EXPECT_EQ(join["shardId"], "arena-1");
  EXPECT_EQ(join["subscriberId"], "alice");

  std::unique_ptr<TestClient> alice = Connect("arena-1");
  ASSERT_NE(alice, nullptr);
  Result<net::v1::Welcome> welcome =
      alice->Join(join["ticket"].get<std::string>());
  ASSERT_TRUE(welcome.ok()) << welcome.status().ToString();
  EXPECT_EQ(welcome->shard_id, "arena-1");
  EXPECT_EQ(welcome->subscriber_id, "alice");
  EXPECT_EQ(welcome->tick_rate, 20u);
  EXPECT_EQ(welcome->codec, "msgpack");

  // Frames flow before any input; the player appears only once it moved.
  Result<Frame> first = alice->ReadUntil<Frame>();
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->last_seq, 0u);
  EXPECT_TRUE(FindPlayer(Snapshot(*first), "alice").is_null());

  MoveAndExpectAck(*alice, 1, "alice", 120.5, 80.25);
  MoveAndExpectAck(*alice, 2, "alice", 300, 400);

  // PING is answered with the same nonce.
  ASSERT_TRUE(alice->SendPing(77).ok());
  Result<net::v1::Pong> pong = alice->ReadUntil<net::v1::Pong>();
  ASSERT_TRUE(pong.ok()) << pong.status().ToString();
  EXPECT_EQ(pong->nonce, 77u);

  // The ticks, inputs and traffic show in the metrics.
  HttpResult metrics = Http("GET", "/metrics");
  ASSERT_EQ(metrics.status, 200);
  for (const char* name :
       {"tessera_tick_duration_seconds_count",
        "tessera_tick_cpu_seconds_bucket", "tessera_inputs_accepted_total 2",
        "tessera_connections 1", "tessera_ws_bytes_out_total"}) {
    EXPECT_NE(metrics.body.find(name), std::string::npos) << name;
  }
  EXPECT_EQ(metrics.body.find("tessera_tick_duration_seconds_count 0\n"),
            std::string::npos);
  EXPECT_TRUE(alice->Close().ok());
}

TEST_F(PlayTest, JoinWithATicketFromTheCli) {
  const fs::path app = CopyArena();
  ASSERT_NE(StartDev(app), nullptr);
  DevJoin("arena-cli", "creator");  // creates the shard
  // `tessera ticket` reads the same app directory's dev secret.
  const std::string ticket = CliTicket(app, "arena-cli", "bob");
  ASSERT_EQ(ticket.rfind("v1.", 0), 0u) << ticket;
  std::unique_ptr<TestClient> bob = Join("arena-cli", ticket);
  ASSERT_NE(bob, nullptr);
  MoveAndExpectAck(*bob, 1, "bob", 10, 20);
}

TEST_F(PlayTest, AMoveOutsideTheArenaIsRejectedWithTheModulesText) {
  const fs::path app = CopyArena();
  ASSERT_NE(StartDev(app), nullptr);
  std::unique_ptr<TestClient> alice =
      Join("arena-1", DevTicket("arena-1", "alice"));
  ASSERT_NE(alice, nullptr);

  ASSERT_TRUE(alice->SendInput(1, MoveTo(900, 20)).ok());
  Result<Reject> reject = alice->ReadUntil<Reject>();
  ASSERT_TRUE(reject.ok()) << reject.status().ToString();
  EXPECT_EQ(reject->seq, 1u);
  EXPECT_EQ(reject->error, "outside the arena");
  // The refused move added no player; the next valid one does.
  Result<Frame> frame = alice->ReadUntil<Frame>();
  ASSERT_TRUE(frame.ok());
  EXPECT_TRUE(FindPlayer(Snapshot(*frame), "alice").is_null());
  MoveAndExpectAck(*alice, 2, "alice", 5, 5);
}

TEST_F(PlayTest, TwoSubscribersSeeEachOther) {
  TwoPlayers players = StartArenaWithTwoPlayers();
  std::unique_ptr<TestClient>& alice = players.alice;
  std::unique_ptr<TestClient>& bob = players.bob;
  ASSERT_NE(alice, nullptr);
  ASSERT_NE(bob, nullptr);

  MoveAndExpectAck(*alice, 1, "alice", 100, 100);
  MoveAndExpectAck(*bob, 1, "bob", 200, 250);
  std::optional<json> seen_by_alice = WaitForPlayerAt(*alice, "bob", 200, 250);
  ASSERT_TRUE(seen_by_alice.has_value());
  EXPECT_FALSE(FindPlayer(*seen_by_alice, "alice").is_null());
  std::optional<json> seen_by_bob = WaitForPlayerAt(*bob, "alice", 100, 100);
  ASSERT_TRUE(seen_by_bob.has_value());
  EXPECT_EQ((*seen_by_bob)["players"].size(), 2u);

  // A second connection of the same subscriber (another tab) gets the
  // frames too, and its own ACKs.
  std::unique_ptr<TestClient> alice_tab =
      Join("arena-1", DevTicket("arena-1", "alice"));
  ASSERT_NE(alice_tab, nullptr);
  MoveAndExpectAck(*alice_tab, 1, "alice", 150, 150);
  EXPECT_TRUE(WaitForPlayerAt(*alice, "alice", 150, 150).has_value());
  EXPECT_TRUE(WaitForPlayerAt(*bob, "alice", 150, 150).has_value());
}

// With the create param "replicate", players are replicated entities (the
// subscriber id as component 1): a client rebuilds them from the FRAMEs'
// entity changes, the unchanged empty snapshot goes as nil, and a frame
// after one player's move carries that player only.
TEST_F(PlayTest, TheArenaInReplicationModeSendsOnlyWhoMoved) {
  ASSERT_NE(StartDev(CopyArena()), nullptr);
  auto join = [&](const std::string& name) {
    HttpResult r = Http("POST", "/api/dev/join",
                        {{"shard", "arena-r"},
                         {"kind", "arena"},
                         {"params", {{"replicate", true}}},
                         {"subscriber", name}});
    EXPECT_EQ(r.status, 200) << r.body;
    return Join("arena-r", json::parse(r.body).value("ticket", ""));
  };
  std::unique_ptr<TestClient> alice = join("alice");
  std::unique_ptr<TestClient> bob = join("bob");
  ASSERT_NE(alice, nullptr);
  ASSERT_NE(bob, nullptr);
  auto position_of = [](const replication::Decoder& d,
                        const std::string& name) -> std::optional<double> {
    for (const auto& e : d.entities()) {
      for (const auto& c : e.components) {
        if (c.id == 1 && json::from_msgpack(c.bytes, true, false) == name) {
          return d.Coordinate(e, 0) * 1000 + d.Coordinate(e, 1);
        }
      }
    }
    return std::nullopt;
  };
  replication::Decoder seen;
  auto read_until = [&](const std::string& name, double x, double y) {
    for (int i = 0; i < 100; ++i) {
      Result<Frame> frame = bob->ReadUntil<Frame>(3000);
      if (!frame.ok() || !frame->entities.has_value()) {
        ADD_FAILURE() << "no replication FRAME: " << frame.status().ToString();
        return std::string();
      }
      EXPECT_TRUE(frame->snapshot_nil || frame->snapshot.size() < 16);
      Status applied = seen.Apply(*frame->entities);
      if (!applied.ok()) {
        ADD_FAILURE() << applied.ToString();
        return std::string();
      }
      std::optional<double> at = position_of(seen, name);
      if (at && std::abs(*at - (x * 1000 + y)) < 0.1) return *frame->entities;
    }
    ADD_FAILURE() << name << " never seen at " << x << ", " << y;
    return std::string();
  };
  ASSERT_TRUE(alice->SendInput(1, MoveTo(120.5, 80.3)).ok());
  ASSERT_TRUE(bob->SendInput(1, MoveTo(700, 20)).ok());
  read_until("alice", 120.5, 80.3);
  read_until("bob", 700, 20);
  EXPECT_EQ(seen.entities().size(), 2u);
  // One player moves: the frame that shows it is a few bytes.
  ASSERT_TRUE(alice->SendInput(2, MoveTo(400, 250.1)).ok());
  const std::string moved = read_until("alice", 400, 250.1);
  EXPECT_LT(moved.size(), 24u);
  EXPECT_NEAR(*position_of(seen, "bob"), 700 * 1000 + 20, 0.1);
}

}  // namespace
}  // namespace tessera::e2e
