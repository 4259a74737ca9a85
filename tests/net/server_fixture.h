// Fixture for the in-process server tests: a real Server on an ephemeral
// port, a real ShardHost ticking the `counter` test guest, and the
// synchronous test client over loopback sockets. Included by
// server_test.cc (WebSocket sessions) and server_http_test.cc (HTTP,
// ports, metrics, io threads).
#ifndef TESSERA_TESTS_NET_SERVER_FIXTURE_H_
#define TESSERA_TESTS_NET_SERVER_FIXTURE_H_

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "common/clock.h"
#include "net/protocol_v1.h"
#include "net/router.h"
#include "net/server.h"
#include "net/shard_fanout.h"
#include "net/shard_host_gateway.h"
#include "net/ticket.h"
#include "shard/kind_registry.h"
#include "shard/shard_host.h"
#include "shard/shard_sink.h"
#include "shard/test_guests.h"
#include "tests/net/test_client.h"

namespace tessera::net {
namespace server_test {

using ::tessera::net::testing::ClientOptions;
using ::tessera::net::testing::CloseInfo;
using ::tessera::net::testing::HttpCall;
using ::tessera::net::testing::HttpConnection;
using ::tessera::net::testing::TestClient;
using ::tessera::shard::testing::FromMsgpack;
using ::tessera::shard::testing::Msgpack;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using ::testing::UnorderedElementsAre;
using json = nlohmann::json;

constexpr char kSecret[] = "test-secret";
constexpr uint32_t kTickRate = 50;

inline int64_t UnixNow() { return RealWallClock::Get()->UnixNowSecs(); }

inline std::string AddInput(int n) { return Msgpack({{"add", {{"n", n}}}}); }

// Records requests; answers 200 "hello <target>".
class FakeHttp final : public HttpHandler {
 public:
  HttpResponse Handle(const HttpRequest& request) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      requests_.push_back(request);
    }
    HttpResponse response;
    response.content_type = "text/plain";
    response.body = "hello " + request.target;
    response.headers.emplace_back("X-Test", "yes");
    return response;
  }
  std::vector<HttpRequest> requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }

 private:
  std::mutex mu_;
  std::vector<HttpRequest> requests_;
};

// How long a test waits for something that must happen before it gives up:
// generous, so that only a condition that never comes fails, however busy
// the machine.
constexpr int kGiveUpMs = 30'000;

// Polls `cond` for up to kGiveUpMs.
template <typename F>
bool WaitFor(F cond) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(kGiveUpMs);
  while (!cond()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    TESSERA_LOAD_GUEST(counter, "counter", 64);
    AddKind("counter", counter);
  }

  // Registers `module` as kind `name`, ticking at kTickRate, never idle.
  void AddKind(const std::string& name,
               std::shared_ptr<const wasm::CompiledModule> module) {
    shard::KindConfig kind;
    kind.name = name;
    kind.tick_rate = kTickRate;
    kind.idle_shutdown_secs = 0;
    ASSERT_TRUE(kinds_.Add(kind, std::move(module)).ok());
  }

  void TearDown() override {
    if (server_) server_->Stop();
    host_.reset();
    server_.reset();
    gateway_.reset();
  }

  ServerOptions Options() {
    ServerOptions options;
    options.port = 0;
    options.ping_interval_ms = 60'000;
    options.find_kind = FindKindIn(&kinds_);
    return options;
  }

  // Wired leaf-first as the composition root does (server/app_server.cc):
  // the host reporting to observers, its gateway, the router (shard
  // sessions, then the fake HTTP handler for the rest), the server; then
  // the server's fan-out joins the observers, before the first shard.
  void StartServer(ServerOptions options) {
    shard::HostOptions host_options;
    host_options.workers = 2;
    host_ = std::make_unique<shard::ShardHost>(&kinds_, &observers_, nullptr,
                                               host_options);
    gateway_ = std::make_unique<ShardHostGateway>(*host_, options.find_kind);
    router_.AddSession(kShardPathPrefix, ShardSessions());
    router_.AddHttp("/", http_);
    server_ = std::make_unique<Server>(std::move(options), kSecret, router_,
                                       gateway_.get(), &metrics_);
    observers_.Add(&server_->shards());
    Status started = server_->Start();
    ASSERT_TRUE(started.ok()) << started.ToString();
    ASSERT_NE(server_->port(), 0);
  }
  void StartServer() { StartServer(Options()); }

  void CreateShard(const std::string& id, int start = 0) {
    Status created = host_->Create("counter", id, Msgpack({{"start", start}}));
    ASSERT_TRUE(created.ok()) << created.ToString();
  }

  std::string Ticket(const std::string& shard, const std::string& subscriber,
                     int64_t ttl_secs = 600,
                     const std::string& secret = kSecret) {
    net::Ticket ticket;
    ticket.resource_id = shard;
    ticket.subscriber_id = subscriber;
    ticket.expires_unix = UnixNow() + ttl_secs;
    return MintTicket(secret, ticket);
  }

  ClientOptions ClientOpts(std::string subprotocol = "") {
    ClientOptions options;
    options.port = server_->port();
    options.subprotocol = std::move(subprotocol);
    options.timeout_ms = kGiveUpMs;  // connect + upgrade
    return options;
  }

  std::unique_ptr<TestClient> Connect(const std::string& shard) {
    auto client = TestClient::Connect(ClientOpts(), shard);
    EXPECT_TRUE(client.ok()) << client.status().ToString();
    if (!client.ok()) return nullptr;
    return std::move(client).value();
  }

  // Connects and joins; null (with a failure) if that did not work.
  std::unique_ptr<TestClient> Join(const std::string& shard,
                                   const std::string& subscriber) {
    auto client = Connect(shard);
    if (client == nullptr) return nullptr;
    auto welcome = client->Join(Ticket(shard, subscriber), kGiveUpMs);
    EXPECT_TRUE(welcome.ok()) << welcome.status().ToString();
    if (!welcome.ok()) return nullptr;
    return client;
  }

  // Expects the client to be closed with `code` and a reason containing
  // `reason`.
  void ExpectClose(TestClient& client, int code, const std::string& reason) {
    Result<CloseInfo> close = client.WaitClose(kGiveUpMs);
    ASSERT_TRUE(close.ok()) << close.status().ToString();
    EXPECT_EQ(close->code, code) << close->reason;
    EXPECT_THAT(close->reason, HasSubstr(reason));
  }

  // Reads frames until `n` have arrived; their ticks strictly increase.
  void ExpectFrames(TestClient& client, int n) {
    uint64_t last_tick = 0;
    for (int i = 0; i < n; ++i) {
      auto frame = client.ReadUntil<v1::Frame>(kGiveUpMs);
      ASSERT_TRUE(frame.ok()) << frame.status().ToString();
      EXPECT_GT(frame->tick, last_tick);
      last_tick = frame->tick;
    }
  }

  shard::KindRegistry kinds_;
  FakeHttp http_;
  Metrics metrics_;
  shard::ShardObservers observers_;  // the server's shards() once started
  Router router_;
  std::unique_ptr<ShardHostGateway> gateway_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<shard::ShardHost> host_;
};

}  // namespace server_test
}  // namespace tessera::net

#endif  // TESSERA_TESTS_NET_SERVER_FIXTURE_H_
