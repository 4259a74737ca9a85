// The shard session against a fake ShardGateway (no shard host, no guest):
// what a session asks of the shards is the gateway's narrow interface, the
// input token bucket runs on the injected clock, and each input carries its
// view tick and the round trip the connection's WebSocket pings measured.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <thread>

#include "common/clock.h"
#include "net/protocol_v1.h"
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
    if (id != "g") return std::nullopt;
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
    inputs.push_back(
        {std::string(subscriber), input_id, std::string(bytes), timing});
    return Status::Ok();
  }
  Status AddSubscriber(std::string_view, std::string_view) override {
    std::lock_guard<std::mutex> lock(mu);
    ++added;
    return Status::Ok();
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

  std::mutex mu;
  std::vector<Input> inputs;
  int added = 0;
  int removed = 0;
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
    server_ = std::make_unique<Server>(options, kSecret, nullptr, &metrics_);
    server_->SetGateway(&gateway_);
    ASSERT_TRUE(server_->Start().ok());
  }
  void TearDown() override {
    if (server_) server_->Stop();
  }
  std::unique_ptr<TestClient> Join(const std::string& shard,
                                   const std::string& subscriber,
                                   v1::Welcome* welcome = nullptr) {
    ClientOptions options;
    options.port = server_->port();
    auto client = TestClient::Connect(options, shard);
    EXPECT_TRUE(client.ok()) << client.status().ToString();
    if (!client.ok()) return nullptr;
    Ticket ticket;
    ticket.resource_id = shard;
    ticket.subscriber_id = subscriber;
    ticket.expires_unix =
        std::chrono::duration_cast<std::chrono::seconds>(
            std::chrono::system_clock::now().time_since_epoch())
            .count() +
        600;
    auto joined = (*client)->Join(MintTicket(kSecret, ticket));
    if (!joined.ok()) {
      ADD_FAILURE() << joined.status().ToString();
      return nullptr;
    }
    if (welcome != nullptr) *welcome = *joined;
    return std::move(client).value();
  }

  // Round trips the server measured (tessera_connection_rtt_seconds).
  uint64_t RttSamples() {
    return metrics_.GetHistogram("tessera_connection_rtt_seconds", "", {})
        ->count();
  }

  FakeGateway gateway_;
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
  FakeClock clock(1'000'000);
  ServerOptions options;
  options.clock = &clock;
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
  clock.Advance(1'000'000);  // one more token, whatever the real time
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
  FakeClock clock(1'000'000);
  ServerOptions options;
  options.clock = &clock;
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

}  // namespace
}  // namespace tessera::net
