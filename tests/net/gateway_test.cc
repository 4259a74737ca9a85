// The shard session against a fake ShardGateway (no shard host, no guest):
// what a session asks of the shards is the gateway's narrow interface, and
// the input token bucket runs on the injected clock.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
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
                     uint64_t input_id, std::string_view bytes) override {
    std::lock_guard<std::mutex> lock(mu);
    inputs.push_back({std::string(subscriber), input_id, std::string(bytes)});
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
  void Start(ServerOptions options) {
    options.port = 0;
    options.ping_interval_ms = 60'000;
    router_.AddSession(kShardPathPrefix, ShardSessions());
    server_ =
        std::make_unique<Server>(options, kSecret, router_, &gateway_, nullptr);
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
    ticket.expires_unix = RealWallClock::Get()->UnixNowSecs() + 600;
    auto joined = (*client)->Join(MintTicket(kSecret, ticket));
    if (!joined.ok()) {
      ADD_FAILURE() << joined.status().ToString();
      return nullptr;
    }
    if (welcome != nullptr) *welcome = *joined;
    return std::move(client).value();
  }

  FakeGateway gateway_;
  FakeClock clock_{1'000'000};  // for the tests that inject it; outlives
                                // the server, whose Stop reads it too
  Router router_;               // shard sessions only
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

}  // namespace
}  // namespace tessera::net
