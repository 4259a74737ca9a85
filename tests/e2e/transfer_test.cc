// Moving players between shards and messages between shards on the real
// `tessera dev`, over real sockets: the admin API moves a player, its
// connection gets TRANSFER then the close 4011, the ticket in it joins the
// target; a reconnect to the source is sent on again, a ticket issued after
// the move joins the source; a refused move leaves the player where it
// was; POST /api/publish reaches a group and counts a stopped shard as
// refused; /metrics counts it all. The shards run the `talk` test guest
// (tests/guests/talk).
#include <fstream>
#include <optional>
#include <string>

#include "tests/e2e/e2e_fixture.h"

namespace tessera::e2e {
namespace {

inline constexpr int kTransferred = 4011;  // docs/protocol.md "Closing"

class TransferTest : public E2eTest {
 protected:
  void SetUp() override {
    E2eTest::SetUp();
    app_ = dir() / "talk-app";
    fs::create_directories(app_);
    std::ofstream(app_ / "tessera.json") << json{
        {"name", "talk-app"},
        {"shards",
         {{{"name", "talk"},
           {"wasm", TESSERA_GUEST_TALK},
           {"codec", "msgpack"},
           {"tickRate", 20},
           {"idleShutdownSecs", 0}}}}}.dump();
    ASSERT_NE(StartDev(app_), nullptr);
  }

  void CreateShard(const std::string& id, const json& params) {
    HttpResult r = Http("POST", "/api/shards",
                        {{"kind", "talk"}, {"id", id}, {"params", params}},
                        /*admin=*/true);
    ASSERT_EQ(r.status, 201) << r.body;
  }

  // A ticket from the admin API (issued now).
  std::string Ticket(const std::string& shard, const std::string& subscriber,
                     const json& claims = json::object()) {
    HttpResult r = Http("POST", "/api/shards/" + shard + "/tickets",
                        {{"subscriber", subscriber}, {"claims", claims}},
                        /*admin=*/true);
    EXPECT_EQ(r.status, 200) << r.body;
    return json::parse(r.body, nullptr, false).value("ticket", "");
  }

  HttpResult Move(const std::string& from, const std::string& subscriber,
                  const std::string& to) {
    return Http("POST", "/api/shards/" + from + "/transfer",
                {{"subscriber", subscriber}, {"to", to}}, /*admin=*/true);
  }

  // Sends INPUT `seq` and reads until its answer: true for an ACK; a
  // REJECT's text in `rejected`.
  bool Input(TestClient& client, uint64_t seq, const json& input,
             std::string* rejected = nullptr) {
    if (!client.SendInput(seq, Msgpack(input)).ok()) return false;
    for (;;) {
      Result<net::v1::ServerMessage> msg = client.ReadMessage(30000);
      if (!msg.ok()) {
        ADD_FAILURE() << "no answer to input " << seq << ": "
                      << msg.status().ToString();
        return false;
      }
      if (auto* ack = std::get_if<net::v1::Ack>(&*msg)) {
        if (ack->seq == seq) return true;
      } else if (auto* reject = std::get_if<net::v1::Reject>(&*msg)) {
        if (reject->seq == seq) {
          if (rejected != nullptr) *rejected = reject->error;
          return false;
        }
      }
    }
  }

  // Reads FRAMEs until the snapshot lists `sid` (nullopt after 30 s of
  // frames without it).
  std::optional<json> WaitForPlayer(TestClient& client,
                                    const std::string& sid) {
    for (int i = 0; i < 600; ++i) {
      Result<net::v1::Frame> frame = client.ReadUntil<net::v1::Frame>(30000);
      if (!frame.ok()) {
        ADD_FAILURE() << frame.status().ToString();
        return std::nullopt;
      }
      json snapshot = Snapshot(*frame);
      if (snapshot.is_object() && snapshot["players"].contains(sid)) {
        return snapshot;
      }
    }
    return std::nullopt;
  }

  // Reads until TRANSFER, then expects the close 4011 right after it.
  std::optional<net::v1::Transfer> ExpectTransfer(TestClient& client) {
    Result<net::v1::Transfer> transfer =
        client.ReadUntil<net::v1::Transfer>(30000);
    if (!transfer.ok()) {
      ADD_FAILURE() << "no TRANSFER: " << transfer.status().ToString();
      return std::nullopt;
    }
    Result<net::testing::ClientEvent> next = client.Read(30000);
    EXPECT_TRUE(next.ok() && next->closed) << "a message after TRANSFER";
    if (next.ok() && next->closed) {
      EXPECT_EQ(next->close.code, kTransferred) << next->close.reason;
      EXPECT_EQ(next->close.reason, "moved to shard " + transfer->shard_id);
    }
    return *transfer;
  }

  fs::path app_;
};

TEST_F(TransferTest, APlayerMovedByTheAdminApiFollowsToTheTarget) {
  CreateShard("a", json::object());
  CreateShard("b", json::object());
  const std::string old_ticket = Ticket("a", "alice");
  std::unique_ptr<TestClient> alice = Join("a", old_ticket);
  ASSERT_NE(alice, nullptr);
  ASSERT_TRUE(Input(*alice, 1, {{"join", json::object()}}));
  ASSERT_TRUE(Input(*alice, 2, {{"step", json::object()}}));

  HttpResult moved = Move("a", "alice", "b");
  ASSERT_EQ(moved.status, 200) << moved.body;
  EXPECT_EQ(json::parse(moved.body), json({{"moved", true}, {"to", "b"}}));

  std::optional<net::v1::Transfer> transfer = ExpectTransfer(*alice);
  ASSERT_TRUE(transfer.has_value());
  EXPECT_EQ(transfer->shard_id, "b");
  // The ticket joins the target; the player is there with its state.
  std::unique_ptr<TestClient> there = Join("b", transfer->ticket);
  ASSERT_NE(there, nullptr);
  std::optional<json> snapshot = WaitForPlayer(*there, "alice");
  ASSERT_TRUE(snapshot.has_value());
  EXPECT_EQ((*snapshot)["players"]["alice"]["n"], 1);
  EXPECT_EQ((*snapshot)["players"]["alice"]["from"], "a");
  ASSERT_TRUE(Input(*there, 1, {{"step", json::object()}}));

  // Another connection with a ticket from before the move is sent on too.
  std::unique_ptr<TestClient> tab = Connect("a");
  ASSERT_NE(tab, nullptr);
  ASSERT_TRUE(tab->SendHello(old_ticket).ok());
  std::optional<net::v1::Transfer> again = ExpectTransfer(*tab);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->shard_id, "b");
  EXPECT_NE(Join("b", again->ticket), nullptr);

  // A ticket issued after the move joins the source: a new join.
  std::unique_ptr<TestClient> back = Join("a", Ticket("a", "alice"));
  ASSERT_NE(back, nullptr);
  EXPECT_TRUE(KeepsReceivingFrames(*back, 3));
}

// A move the module asks for (transfer_requests after its tick) carries the
// claims of the player's ticket to the target, which requires one; a
// player without the claim is refused there and stays in the source.
TEST_F(TransferTest, AMoveTheModuleStartsCarriesTheTicketsClaims) {
  CreateShard("a", json::object());
  CreateShard("party", {{"require_claim", "party"}});
  std::unique_ptr<TestClient> bob = Join("a", Ticket("a", "bob"));
  std::unique_ptr<TestClient> alice =
      Join("a", Ticket("a", "alice", {{"party", "red"}}));
  ASSERT_TRUE(alice && bob);
  ASSERT_TRUE(Input(*alice, 1, {{"join", json::object()}}));
  ASSERT_TRUE(Input(*bob, 1, {{"join", json::object()}}));
  ASSERT_TRUE(Input(*alice, 2, {{"go", {{"to", "party"}}}}));
  std::optional<net::v1::Transfer> transfer = ExpectTransfer(*alice);
  ASSERT_TRUE(transfer.has_value());
  EXPECT_EQ(transfer->shard_id, "party");
  std::unique_ptr<TestClient> there = Join("party", transfer->ticket);
  ASSERT_NE(there, nullptr);
  ASSERT_TRUE(WaitForPlayer(*there, "alice").has_value());

  // Bob has no party claim: the target refuses him, he stays where he is,
  // still connected, and his inputs are taken again.
  ASSERT_TRUE(Input(*bob, 2, {{"go", {{"to", "party"}}}}));
  // Until the refusal is back, the source refuses his inputs as moving.
  bool taken = false;
  for (uint64_t seq = 3; seq < 200 && !taken; ++seq) {
    std::string rejected;
    taken = Input(*bob, seq, {{"step", json::object()}}, &rejected);
    if (!taken) {
      ASSERT_NE(rejected.find("moving to shard party"), std::string::npos)
          << rejected;
    }
  }
  ASSERT_TRUE(taken);
  std::optional<json> snapshot = WaitForPlayer(*bob, "bob");
  ASSERT_TRUE(snapshot.has_value());
  EXPECT_EQ((*snapshot)["players"]["bob"]["n"], 1);
  EXPECT_FALSE((*snapshot)["players"].contains("alice"));
}

TEST_F(TransferTest, ARefusedMoveLeavesThePlayerConnectedToTheSource) {
  CreateShard("a", json::object());
  CreateShard("closed", {{"refuse", "closed for repairs"}});
  std::unique_ptr<TestClient> alice = Join("a", Ticket("a", "alice"));
  ASSERT_NE(alice, nullptr);
  ASSERT_TRUE(Input(*alice, 1, {{"join", json::object()}}));

  HttpResult refused = Move("a", "alice", "closed");
  EXPECT_EQ(refused.status, 409) << refused.body;
  json body = json::parse(refused.body, nullptr, false);
  EXPECT_EQ(body.value("code", ""), "SHARD_TRANSFER_REFUSED");
  EXPECT_EQ(body.value("message", ""), "closed for repairs");

  // Still in a, still connected, inputs accepted.
  ASSERT_TRUE(Input(*alice, 2, {{"step", json::object()}}));
  std::optional<json> snapshot = WaitForPlayer(*alice, "alice");
  ASSERT_TRUE(snapshot.has_value());
  EXPECT_EQ((*snapshot)["players"]["alice"]["n"], 1);

  HttpResult nowhere = Move("a", "alice", "nowhere");
  EXPECT_EQ(nowhere.status, 404) << nowhere.body;
  EXPECT_EQ(json::parse(nowhere.body, nullptr, false).value("code", ""),
            "SHARD_NOT_FOUND");
  ASSERT_TRUE(Input(*alice, 3, {{"step", json::object()}}));
}

TEST_F(TransferTest, PublishReachesAGroupAndCountsAStoppedShard) {
  CreateShard("a", {{"groups", {"world"}}});
  CreateShard("b", {{"groups", {"world"}}});
  CreateShard("c", json::object());
  std::unique_ptr<TestClient> watcher = Join("b", Ticket("b", "watcher"));
  ASSERT_NE(watcher, nullptr);
  // Groups are read after a tick: the first frame says b has run one.
  ASSERT_TRUE(KeepsReceivingFrames(*watcher, 2));

  HttpResult r = Http("POST", "/api/publish",
                      {{"to", {{"group", "world"}}},
                       {"topic", "relic_taken"},
                       {"data", "by alice"}},
                      /*admin=*/true);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body), json({{"delivered", 2}, {"refused", 0}}));
  bool seen = false;
  for (int i = 0; i < 600 && !seen; ++i) {
    Result<net::v1::Frame> frame = watcher->ReadUntil<net::v1::Frame>(30000);
    ASSERT_TRUE(frame.ok()) << frame.status().ToString();
    const json inbox = Snapshot(*frame)["inbox"];
    for (const json& m : inbox) {
      seen = seen || m == json({"", "relic_taken", "by alice"});
    }
  }
  EXPECT_TRUE(seen) << "b's module never got the message";

  ASSERT_EQ(Http("POST", "/api/shards/c/stop", nullptr, true).status, 200);
  r = Http("POST", "/api/publish",
           {{"to", {{"shard", "c"}}}, {"topic", "hello"}}, /*admin=*/true);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body), json({{"delivered", 0}, {"refused", 1}}));

  const std::string metrics = Http("GET", "/metrics").body;
  for (const char* line :
       {"tessera_shard_messages_sent_total ",
        "tessera_shard_messages_delivered_total ",
        "tessera_shard_messages_refused_total{reason=\"not_found\"} 1",
        "tessera_shard_transfers_total{outcome=\"moved\"} 0",
        "tessera_shard_transfer_seconds_count 0"}) {
    EXPECT_NE(metrics.find(line), std::string::npos) << line << "\n" << metrics;
  }
}

TEST_F(TransferTest, MovesAreCountedInTheMetrics) {
  CreateShard("a", json::object());
  CreateShard("b", json::object());
  CreateShard("closed", {{"refuse", "no"}});
  std::unique_ptr<TestClient> alice = Join("a", Ticket("a", "alice"));
  ASSERT_NE(alice, nullptr);
  ASSERT_TRUE(Input(*alice, 1, {{"join", json::object()}}));
  ASSERT_EQ(Move("a", "alice", "closed").status, 409);
  ASSERT_EQ(Move("a", "alice", "b").status, 200);
  ASSERT_TRUE(ExpectTransfer(*alice).has_value());
  const std::string metrics = Http("GET", "/metrics").body;
  for (const char* line :
       {"tessera_shard_transfers_total{outcome=\"moved\"} 1",
        "tessera_shard_transfers_total{outcome=\"shard_transfer_refused\"} 1",
        "tessera_shard_transfer_seconds_count 2",
        "tessera_ws_closes_total{code=\"4011\"} 1"}) {
    EXPECT_NE(metrics.find(line), std::string::npos) << line << "\n" << metrics;
  }
}

}  // namespace
}  // namespace tessera::e2e
