// The shard session against a fake ShardGateway (no shard host, no guest):
// what a session asks of the shards is the gateway's narrow interface, the
// input token bucket runs on the injected clock, each input carries its
// view tick and the round trip the connection's WebSocket pings measured,
// and a player that moved to another shard is sent there (TRANSFER, 4011).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <mutex>
#include <thread>

#include "common/clock.h"
#include "net/protocol_v1.h"
#include "net/router.h"
#include "net/server.h"
#include "net/shard_fanout.h"
#include "net/shard_gateway.h"
#include "net/ticket.h"
#include "tests/net/test_client.h"

namespace tessera::net {
namespace {

using ::tessera::net::testing::ClientOptions;
using ::tessera::net::testing::TestClient;

constexpr char kSecret[] = "gateway-secret";

class FakeGateway final : public ShardGateway {
 public:
  struct Input {
    std::string subscriber;
    uint64_t id;
    std::string bytes;
    shard::InputTiming timing;
  };
  std::optional<ShardState> Find(std::string_view id) const override {
    if (id != "g" && id != "t") return std::nullopt;
    ShardState state;
    state.status = shard::ShardStatus::kRunning;
    state.tick = 5;
    state.tick_rate = 30;
    state.codec = shard::Codec::kJson;
    return state;
  }
  Status SubmitInput(std::string_view, std::string_view subscriber,
                     uint64_t input_id, std::string_view bytes,
                     shard::InputTiming timing) override {
    std::lock_guard<std::mutex> lock(mu);
    if (!refuse_inputs.empty()) {
      return Status(StatusCode::kFailedPrecondition, refuse_inputs);
    }
    inputs.push_back(
        {std::string(subscriber), input_id, std::string(bytes), timing});
    return Status::Ok();
  }
  Status AddSubscriber(std::string_view, std::string_view,
                       std::string_view claims_json) override {
    std::lock_guard<std::mutex> lock(mu);
    ++added;
    claims.emplace_back(claims_json);
    return Status::Ok();
  }
  std::optional<shard::MovedTo> FindMove(
      std::string_view id, std::string_view subscriber) const override {
    std::lock_guard<std::mutex> lock(mu);
    auto it = moves.find(std::string(id) + "/" + std::string(subscriber));
    if (it == moves.end()) return std::nullopt;
    return it->second;
  }
  void Move(const std::string& from, shard::MovedTo moved) {
    std::lock_guard<std::mutex> lock(mu);
    moves[from + "/" + moved.subscriber] = std::move(moved);
  }
  void RefuseInputs(std::string text) {
    std::lock_guard<std::mutex> lock(mu);
    refuse_inputs = std::move(text);
  }
  std::vector<std::string> Claims() {
    std::lock_guard<std::mutex> lock(mu);
    return claims;
  }
  Status RemoveSubscriber(std::string_view, std::string_view) override {
    std::lock_guard<std::mutex> lock(mu);
    ++removed;
    return Status::Ok();
  }
  Status RequestBaseline(std::string_view, std::string_view) override {
    return Status::Ok();
  }
  std::vector<Input> Inputs() {
    std::lock_guard<std::mutex> lock(mu);
    return inputs;
  }
  int Removed() {
    std::lock_guard<std::mutex> lock(mu);
    return removed;
  }

  mutable std::mutex mu;
  std::vector<Input> inputs;
  int added = 0;
  int removed = 0;
  std::vector<std::string> claims;              // AddSubscriber's, in order
  std::map<std::string, shard::MovedTo> moves;  // by "from/subscriber"
  std::string refuse_inputs;  // non-empty: SubmitInput's error text
};

// Polls `cond` for up to 5 s (a wait for a condition, not a timing claim).
template <typename F>
bool WaitFor(F cond) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!cond()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

class GatewayTest : public ::testing::Test {
 protected:
  // WebSocket pings off unless `options` asks for them.
  void Start(ServerOptions options, int64_t ws_ping_interval_ms = 0) {
    options.port = 0;
    options.ping_interval_ms = 60'000;
    options.ws_ping_interval_ms = ws_ping_interval_ms;
    router_.AddSession(kShardPathPrefix, ShardSessions());
    server_ = std::make_unique<Server>(options, kSecret, router_, &gateway_,
                                       &metrics_);
    ASSERT_TRUE(server_->Start().ok());
  }
  void TearDown() override {
    if (server_) server_->Stop();
  }
  // A ticket for `subscriber` on `shard`, issued at `issued` (null: now).
  static std::string TicketFor(const std::string& shard,
                               const std::string& subscriber,
                               const WallClock* issued = nullptr,
                               const std::string& claims = "{}") {
    Ticket ticket;
    ticket.resource_id = shard;
    ticket.subscriber_id = subscriber;
    ticket.expires_unix = RealWallClock::Get()->UnixNowSecs() + 600;
    ticket.claims_json = claims;
    return MintTicket(kSecret, ticket, issued);
  }
  std::unique_ptr<TestClient> Connect(const std::string& shard) {
    ClientOptions options;
    options.port = server_->port();
    auto client = TestClient::Connect(options, shard);
    EXPECT_TRUE(client.ok()) << client.status().ToString();
    if (!client.ok()) return nullptr;
    return std::move(client).value();
  }
  std::unique_ptr<TestClient> Join(const std::string& shard,
                                   const std::string& subscriber,
                                   v1::Welcome* welcome = nullptr,
                                   const WallClock* issued = nullptr) {
    auto client = Connect(shard);
    if (client == nullptr) return nullptr;
    auto joined = client->Join(TicketFor(shard, subscriber, issued));
    if (!joined.ok()) {
      ADD_FAILURE() << joined.status().ToString();
      return nullptr;
    }
    if (welcome != nullptr) *welcome = *joined;
    return client;
  }

  // Round trips the server measured (tessera_connection_rtt_seconds).
  uint64_t RttSamples() {
    return metrics_.GetHistogram("tessera_connection_rtt_seconds", "", {})
        ->count();
  }

  FakeGateway gateway_;
  FakeClock clock_{1'000'000};  // for the tests that inject it; outlives
                                // the server, whose Stop reads it too
  Router router_;               // shard sessions only
  Metrics metrics_;
  std::unique_ptr<Server> server_;
};

TEST_F(GatewayTest, JoinsInputsAndFramesGoThroughTheGateway) {
  Start(ServerOptions());
  v1::Welcome welcome;
  auto alice = Join("g", "alice", &welcome);
  ASSERT_NE(alice, nullptr);
  EXPECT_EQ(welcome.tick_rate, 30u);
  EXPECT_EQ(welcome.codec, "json");
  EXPECT_EQ(welcome.tick, 5u);
  ASSERT_TRUE(alice->SendInput(1, "move").ok());
  ASSERT_TRUE(WaitFor([&] { return gateway_.Inputs().size() == 1; }));
  const FakeGateway::Input input = gateway_.Inputs()[0];
  EXPECT_EQ(input.subscriber, "alice");
  EXPECT_EQ(input.bytes, "move");
  // Not stamped, and no WebSocket pings: nothing for lag compensation.
  EXPECT_FALSE(input.timing.view_tick.has_value());
  EXPECT_FALSE(input.timing.rtt_us.has_value());

  // The shard's tick reaches the connection with its result.
  shard::InputResult result;
  result.subscriber = "alice";
  result.seq = input.id;
  result.accepted = true;
  server_->shards().OnFrame("g", 6, "snap", {result});
  auto frame = alice->ReadUntil<v1::Frame>();
  ASSERT_TRUE(frame.ok()) << frame.status().ToString();
  EXPECT_EQ(frame->tick, 6u);
  EXPECT_EQ(frame->last_seq, 1u);
  EXPECT_EQ(frame->snapshot, "snap");
  auto ack = alice->ReadUntil<v1::Ack>();
  ASSERT_TRUE(ack.ok()) << ack.status().ToString();
  EXPECT_EQ(ack->seq, 1u);

  ASSERT_TRUE(alice->Close().ok());
  EXPECT_TRUE(WaitFor([&] { return gateway_.Removed() == 1; }));
}

TEST_F(GatewayTest, AShardTheGatewayDoesNotKnowIsNotFound) {
  Start(ServerOptions());
  ClientOptions options;
  options.port = server_->port();
  auto client = TestClient::Connect(options, "nope");
  ASSERT_TRUE(client.ok());
  Ticket ticket{"nope", "bob", 4'000'000'000, "{}"};
  ASSERT_TRUE((*client)->SendHello(MintTicket(kSecret, ticket)).ok());
  auto close = (*client)->WaitClose();
  ASSERT_TRUE(close.ok());
  EXPECT_EQ(close->code, kCloseShardNotFound);
}

TEST_F(GatewayTest, TheInputRateRunsOnTheInjectedClock) {
  ServerOptions options;
  options.clock = &clock_;
  options.input_rate_per_sec = 1;
  options.input_burst = 1;
  Start(options);
  auto alice = Join("g", "alice");
  ASSERT_NE(alice, nullptr);
  ASSERT_TRUE(alice->SendInput(1, "a").ok());
  ASSERT_TRUE(alice->SendInput(2, "b").ok());  // no token left
  auto rejected = alice->ReadUntil<v1::Reject>();
  ASSERT_TRUE(rejected.ok()) << rejected.status().ToString();
  EXPECT_EQ(rejected->seq, 2u);
  EXPECT_EQ(rejected->error, "rate limited");
  clock_.Advance(1'000'000);  // one more token, whatever the real time
  ASSERT_TRUE(alice->SendInput(3, "c").ok());
  ASSERT_TRUE(WaitFor([&] { return gateway_.Inputs().size() == 2; }));
  EXPECT_EQ(gateway_.Inputs()[1].bytes, "c");
}

// Over a real socket: the server pings the connection (WebSocket control
// frames), the client's WebSocket answers by itself while it reads, the
// round trip becomes known, and inputs carry it to the gateway with the
// fractional view tick the client drew.
TEST_F(GatewayTest, InputsCarryTheViewTickAndTheMeasuredRoundTrip) {
  Start(ServerOptions(), /*ws_ping_interval_ms=*/10);
  auto alice = Join("g", "alice");
  ASSERT_NE(alice, nullptr);
  // Before any pong: the view tick, no round trip yet... unless a pong
  // already came back while Join read the WELCOME, so only the view tick
  // is checked here.
  ASSERT_TRUE(alice->SendInput(1, "early", 4.5).ok());
  ASSERT_TRUE(WaitFor([&] { return gateway_.Inputs().size() == 1; }));
  EXPECT_EQ(gateway_.Inputs()[0].timing.view_tick, 4.5);

  // Reading lets the client's WebSocket answer the pings (nothing else
  // arrives: the app-level PING is a minute away and no tick runs).
  ASSERT_TRUE(WaitFor([&] {
    auto event = alice->Read(/*timeout_ms=*/5);
    EXPECT_FALSE(event.ok() && event->closed);
    return RttSamples() >= 2;
  }));
  ASSERT_TRUE(alice->SendInput(2, "shoot", 12.25).ok());
  ASSERT_TRUE(alice->SendInput(3, "walk", 13.0).ok());
  ASSERT_TRUE(alice->SendInput(4, "talk").ok());
  ASSERT_TRUE(WaitFor([&] { return gateway_.Inputs().size() == 4; }));
  const std::vector<FakeGateway::Input> inputs = gateway_.Inputs();
  EXPECT_EQ(inputs[1].bytes, "shoot");
  EXPECT_EQ(inputs[1].timing.view_tick, 12.25);
  ASSERT_TRUE(inputs[1].timing.rtt_us.has_value());
  EXPECT_GE(*inputs[1].timing.rtt_us, 0);
  EXPECT_EQ(inputs[2].timing.view_tick, 13.0);
  EXPECT_TRUE(inputs[2].timing.rtt_us.has_value());
  // Unstamped: no view tick, but the round trip all the same.
  EXPECT_FALSE(inputs[3].timing.view_tick.has_value());
  EXPECT_TRUE(inputs[3].timing.rtt_us.has_value());
  // The pings did not disturb the protocol: the connection is still open
  // and answers its PINGs.
  ASSERT_TRUE(alice->SendPing(9).ok());
  auto pong = alice->ReadUntil<v1::Pong>();
  ASSERT_TRUE(pong.ok()) << pong.status().ToString();
  EXPECT_EQ(pong->nonce, 9u);
}

// The round trip runs on the server's clock: on a FakeClock that does not
// move, every sample is 0 (not the real time the pong took).
TEST_F(GatewayTest, TheRoundTripRunsOnTheInjectedClock) {
  ServerOptions options;
  options.clock = &clock_;
  Start(options, /*ws_ping_interval_ms=*/10);
  auto alice = Join("g", "alice");
  ASSERT_NE(alice, nullptr);
  ASSERT_TRUE(WaitFor([&] {
    (void)alice->Read(/*timeout_ms=*/5);
    return RttSamples() >= 1;
  }));
  ASSERT_TRUE(alice->SendInput(1, "a", 0.5).ok());
  ASSERT_TRUE(WaitFor([&] { return gateway_.Inputs().size() == 1; }));
  EXPECT_EQ(gateway_.Inputs()[0].timing.rtt_us, 0);
  EXPECT_EQ(gateway_.Inputs()[0].timing.view_tick, 0.5);
}

// A forged view tick is refused where it enters: the connection is closed
// (4000) and nothing reaches the gateway.
TEST_F(GatewayTest, AnInvalidViewTickClosesTheConnection) {
  Start(ServerOptions());
  auto alice = Join("g", "alice");
  ASSERT_NE(alice, nullptr);
  ASSERT_TRUE(alice->SendInput(1, "a", -1.0).ok());
  auto close = alice->WaitClose();
  ASSERT_TRUE(close.ok()) << close.status().ToString();
  EXPECT_EQ(close->code, kCloseBadFrame);
  EXPECT_THAT(close->reason, ::testing::HasSubstr("view_tick"));
  EXPECT_TRUE(gateway_.Inputs().empty());
}

// ---- Players that moved to another shard ----

// Tickets are dated by these clocks: the move is at 2'000 ms.
constexpr int64_t kMovedMs = 2'000;
const FakeWallClock kBeforeTheMove(1'000'000);  // 1'000 ms
const FakeWallClock kAfterTheMove(3'000'000);   // 3'000 ms

shard::MovedTo AliceToT() {
  shard::MovedTo moved;
  moved.subscriber = "alice";
  moved.to = "t";
  moved.claims_json = R"({"party":"red"})";
  moved.moved_unix_ms = kMovedMs;
  return moved;
}

// Reads the TRANSFER and the close 4011 after it; checks the ticket is for
// "t", alice, the move's claims, issued by the server between `since_ms`
// and now.
void ExpectTransferToT(TestClient& client, int64_t since_ms) {
  auto transfer = client.ReadUntil<v1::Transfer>();
  ASSERT_TRUE(transfer.ok()) << transfer.status().ToString();
  EXPECT_EQ(transfer->shard_id, "t");
  TicketCheck check = VerifyTicket(kSecret, transfer->ticket, "t",
                                   RealWallClock::Get()->UnixNowSecs());
  ASSERT_EQ(check.error, TicketError::kNone) << check.message;
  EXPECT_EQ(check.ticket.subscriber_id, "alice");
  EXPECT_EQ(check.ticket.claims_json, R"({"party":"red"})");
  EXPECT_GE(check.ticket.issued_unix_ms, since_ms);
  EXPECT_LE(check.ticket.issued_unix_ms, RealWallClock::Get()->UnixNowMs());
  EXPECT_GT(check.ticket.expires_unix, RealWallClock::Get()->UnixNowSecs());
  // The last message: nothing but the close follows.
  auto close = client.Read();
  ASSERT_TRUE(close.ok()) << close.status().ToString();
  ASSERT_TRUE(close->closed) << "a message after TRANSFER";
  EXPECT_EQ(close->close.code, kCloseTransferred);
  EXPECT_EQ(close->close.reason, "moved to shard t");
}

TEST_F(GatewayTest, AHelloOfAPlayerThatMovedGetsTransferInsteadOfWelcome) {
  Start(ServerOptions());
  gateway_.Move("g", AliceToT());
  auto alice = Connect("g");
  ASSERT_NE(alice, nullptr);
  const int64_t since = RealWallClock::Get()->UnixNowMs();
  ASSERT_TRUE(alice->SendHello(TicketFor("g", "alice", &kBeforeTheMove)).ok());
  ExpectTransferToT(*alice, since);
  EXPECT_EQ(gateway_.added, 0) << "a redirected connection does not join";
  // Bob never moved: he joins.
  EXPECT_NE(Join("g", "bob", nullptr, &kBeforeTheMove), nullptr);
}

TEST_F(GatewayTest, TheRedirectWorksWhenTheSourceIsGone) {
  Start(ServerOptions());
  gateway_.Move("gone", AliceToT());  // Find does not know "gone"
  auto alice = Connect("gone");
  ASSERT_NE(alice, nullptr);
  const int64_t since = RealWallClock::Get()->UnixNowMs();
  ASSERT_TRUE(
      alice->SendHello(TicketFor("gone", "alice", &kBeforeTheMove)).ok());
  ExpectTransferToT(*alice, since);
}

TEST_F(GatewayTest, ATicketIssuedAfterTheMoveJoinsNormally) {
  Start(ServerOptions());
  gateway_.Move("g", AliceToT());
  auto alice = Join("g", "alice", nullptr, &kAfterTheMove);
  ASSERT_NE(alice, nullptr);
  // A later announcement of the same move leaves it alone, too.
  server_->shards().OnTransfer("g", AliceToT());
  server_->shards().OnFrame("g", 6, "snap", {});
  auto frame = alice->ReadUntil<v1::Frame>();
  ASSERT_TRUE(frame.ok()) << frame.status().ToString();
  EXPECT_EQ(frame->tick, 6u);
}

// OnTransfer (the host's announcement) reaches every connection of the
// player on the source, after the frames before it; others stay.
TEST_F(GatewayTest,
       LiveConnectionsOfTheMovedPlayerGetTransferAfterTheirFrames) {
  Start(ServerOptions());
  auto tab1 = Join("g", "alice", nullptr, &kBeforeTheMove);
  auto tab2 = Join("g", "alice", nullptr, &kBeforeTheMove);
  auto bob = Join("g", "bob", nullptr, &kBeforeTheMove);
  ASSERT_TRUE(tab1 && tab2 && bob);
  server_->shards().OnFrame("g", 6, "snap", {});
  gateway_.Move("g", AliceToT());
  const int64_t since = RealWallClock::Get()->UnixNowMs();
  server_->shards().OnTransfer("g", AliceToT());
  server_->shards().OnFrame("g", 7, "snap", {});
  for (TestClient* tab : {tab1.get(), tab2.get()}) {
    auto frame = tab->ReadMessage();
    ASSERT_TRUE(frame.ok()) << frame.status().ToString();
    ASSERT_TRUE(std::holds_alternative<v1::Frame>(*frame));
    EXPECT_EQ(std::get<v1::Frame>(*frame).tick, 6u);
    ExpectTransferToT(*tab, since);
  }
  auto frame = bob->ReadUntil<v1::Frame>();
  ASSERT_TRUE(frame.ok());
  EXPECT_EQ(frame->tick, 6u);
  frame = bob->ReadUntil<v1::Frame>();
  ASSERT_TRUE(frame.ok()) << "bob stays";
  EXPECT_EQ(frame->tick, 7u);
  EXPECT_TRUE(WaitFor([&] { return gateway_.Removed() == 2; }))
      << "the transferred connections leave the shard";
}

// The ticket's claims go to the shard with the subscriber (for the moves
// the module starts).
TEST_F(GatewayTest, AddSubscriberGetsTheTicketsClaims) {
  Start(ServerOptions());
  auto alice = Connect("g");
  ASSERT_NE(alice, nullptr);
  auto welcome =
      alice->Join(TicketFor("g", "alice", nullptr, R"({"party":"blue"})"));
  ASSERT_TRUE(welcome.ok()) << welcome.status().ToString();
  ASSERT_NE(Join("g", "bob"), nullptr);
  EXPECT_THAT(gateway_.Claims(),
              ::testing::ElementsAre(R"({"party":"blue"})", "{}"));
}

// While the player moves the shard refuses its inputs on arrival: a REJECT
// with the shard's text, no strike (the connection stays, later inputs
// go through).
TEST_F(GatewayTest, InputsRefusedWhileMovingAreRejectedWithoutAStrike) {
  ServerOptions options;
  options.max_strikes = 1;
  Start(options);
  auto alice = Join("g", "alice");
  ASSERT_NE(alice, nullptr);
  gateway_.RefuseInputs("moving to shard t");
  for (uint64_t seq = 1; seq <= 3; ++seq) {
    ASSERT_TRUE(alice->SendInput(seq, "a").ok());
    auto rejected = alice->ReadUntil<v1::Reject>();
    ASSERT_TRUE(rejected.ok()) << rejected.status().ToString();
    EXPECT_EQ(rejected->seq, seq);
    EXPECT_EQ(rejected->error, "moving to shard t");
  }
  gateway_.RefuseInputs("");
  ASSERT_TRUE(alice->SendInput(4, "b").ok());
  ASSERT_TRUE(WaitFor([&] { return gateway_.Inputs().size() == 1; }));
  EXPECT_EQ(gateway_.Inputs()[0].bytes, "b");
}

}  // namespace
}  // namespace tessera::net
