// Playing the arena through `tessera dev`: joining with tickets from the
// dev join and from `tessera ticket`, moving, rejections, and two players
// seeing each other.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace tessera::e2e
