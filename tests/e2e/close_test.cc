// Why a connection ends: an operator's kick and stop (admin API), refused
// tickets (forged, expired, for another shard, for no shard) and a HELLO
// out of place.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <thread>

#include "common/clock.h"
#include "net/ticket.h"
#include "tests/e2e/e2e_fixture.h"

namespace tessera::e2e {
namespace {

class CloseTest : public E2eTest {};

// The server process reads the same (real) wall clock.
int64_t UnixNow() { return RealWallClock::Get()->UnixNowSecs(); }

// Sends HELLO with `ticket` to /shard/<shard> and returns the close.
CloseInfo HelloAndClose(std::unique_ptr<TestClient> client,
                        const std::string& ticket) {
  if (client == nullptr) return {};
  EXPECT_TRUE(client->SendHello(ticket).ok());
  Result<CloseInfo> close = client->WaitClose(5000);
  EXPECT_TRUE(close.ok()) << close.status().ToString();
  return close.ok() ? *close : CloseInfo{};
}

TEST_F(CloseTest, KickClosesOnlyThatSubscriberWith4005) {
  TwoPlayers players = StartArenaWithTwoPlayers();
  std::unique_ptr<TestClient>& alice = players.alice;
  std::unique_ptr<TestClient>& bob = players.bob;
  ASSERT_NE(alice, nullptr);
  ASSERT_NE(bob, nullptr);

  // The admin API refuses a request without the token.
  EXPECT_EQ(Http("POST", "/api/shards/arena-1/kick", {{"subscriber", "alice"}})
                .status,
            401);
  HttpResult kick = Http("POST", "/api/shards/arena-1/kick",
                         {{"subscriber", "alice"}}, /*admin=*/true);
  ASSERT_EQ(kick.status, 200) << kick.body;
  EXPECT_EQ(json::parse(kick.body)["closed"], 1);
  const CloseInfo close = ExpectClose(*alice);
  EXPECT_EQ(close.code, kKicked) << close.reason;
  EXPECT_FALSE(close.reason.empty());
  EXPECT_TRUE(KeepsReceivingFrames(*bob));
}

TEST_F(CloseTest, StopClosesEveryConnectionWith4006) {
  TwoPlayers players = StartArenaWithTwoPlayers();
  const fs::path& app = players.app;
  std::unique_ptr<TestClient>& alice = players.alice;
  std::unique_ptr<TestClient>& bob = players.bob;
  ASSERT_NE(alice, nullptr);
  ASSERT_NE(bob, nullptr);

  HttpResult stop =
      Http("POST", "/api/shards/arena-1/stop", nullptr, /*admin=*/true);
  ASSERT_EQ(stop.status, 200) << stop.body;
  for (TestClient* c : {alice.get(), bob.get()}) {
    const CloseInfo close = ExpectClose(*c);
    EXPECT_EQ(close.code, kShardStopped) << close.reason;
    EXPECT_EQ(close.reason.rfind("stopped", 0), 0u) << close.reason;
  }
  // The host remembers it for a while as stopped, saying why. The stop is
  // carried out on the shard's worker, which on a loaded machine may not
  // have run yet when the connections have closed.
  HttpResult detail;
  for (int i = 0; i < 100; ++i) {
    detail = Http("GET", "/api/shards/arena-1", nullptr, true);
    if (detail.status != 200 ||
        json::parse(detail.body, nullptr, false).value("status", "") ==
            "stopped") {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (detail.status == 200) {
    const json body = json::parse(detail.body);
    EXPECT_EQ(body["status"], "stopped") << detail.body;
    EXPECT_EQ(body["stop_reason"], "stopped") << detail.body;
  } else {
    EXPECT_EQ(detail.status, 404) << detail.body;
  }
  // The directory forgot it: a restart does not bring it back.
  ASSERT_TRUE(server()->Signal(SIGTERM).ok());
  Result<int> exit_code = server()->WaitExit(10000);
  ASSERT_TRUE(exit_code.ok() && *exit_code == 0);
  ASSERT_NE(StartDev(app), nullptr);
  EXPECT_EQ(Http("GET", "/api/shards/arena-1", nullptr, true).status, 404);
}

TEST_F(CloseTest, RefusedTicketsCloseWithDistinctCodes) {
  const fs::path app = CopyArena();
  ASSERT_NE(StartDev(app), nullptr);
  const std::string good = DevTicket("arena-a", "alice");
  DevJoin("arena-b", "bob");
  ASSERT_FALSE(ticket_secret().empty());

  // Forged: one character of the signature changed.
  std::string forged = good;
  forged.back() = forged.back() == 'A' ? 'B' : 'A';
  CloseInfo close = HelloAndClose(Connect("arena-a"), forged);
  EXPECT_EQ(close.code, kTicketInvalid) << close.reason;

  // Forged: a valid-looking ticket signed with another secret.
  net::Ticket t{"arena-a", "mallory", UnixNow() + 600, "{}"};
  close =
      HelloAndClose(Connect("arena-a"), net::MintTicket("not-the-secret", t));
  EXPECT_EQ(close.code, kTicketInvalid) << close.reason;

  // Expired: signed with the right secret, expiry in the past.
  t.subscriber_id = "alice";
  t.expires_unix = UnixNow() - 60;
  close =
      HelloAndClose(Connect("arena-a"), net::MintTicket(ticket_secret(), t));
  EXPECT_EQ(close.code, kTicketExpired) << close.reason;

  // Another shard: a valid ticket for arena-b used on arena-a.
  close = HelloAndClose(Connect("arena-a"), CliTicket(app, "arena-b", "bob"));
  EXPECT_EQ(close.code, kTicketWrongShard) << close.reason;

  // A valid ticket for a shard that does not run.
  close = HelloAndClose(Connect("arena-none"),
                        CliTicket(app, "arena-none", "alice"));
  EXPECT_EQ(close.code, kShardNotFound) << close.reason;

  // The good ticket still joins.
  std::unique_ptr<TestClient> alice = Join("arena-a", good);
  ASSERT_NE(alice, nullptr);
  MoveAndExpectAck(*alice, 1, "alice", 1, 2);
}

TEST_F(CloseTest, HelloMustComeFirstOnceInAKnownVersion) {
  const fs::path app = CopyArena();
  ASSERT_NE(StartDev(app), nullptr);
  const std::string ticket = DevTicket("arena-1", "alice");

  std::unique_ptr<TestClient> eager = Connect("arena-1");
  ASSERT_NE(eager, nullptr);
  ASSERT_TRUE(eager->SendInput(1, MoveTo(1, 1)).ok());
  CloseInfo close = ExpectClose(*eager);
  EXPECT_EQ(close.code, kHelloExpected) << close.reason;

  std::unique_ptr<TestClient> twice = Join("arena-1", ticket);
  ASSERT_NE(twice, nullptr);
  ASSERT_TRUE(twice->SendHello(ticket).ok());
  close = ExpectClose(*twice);
  EXPECT_EQ(close.code, kHelloExpected) << close.reason;

  std::unique_ptr<TestClient> future = Connect("arena-1");
  ASSERT_NE(future, nullptr);
  ASSERT_TRUE(future->SendHello(ticket, /*version=*/2).ok());
  close = ExpectClose(*future);
  EXPECT_EQ(close.code, kUnsupportedVersion) << close.reason;
}

}  // namespace
}  // namespace tessera::e2e
