// The network server in-process: plain HTTP, ports, metrics and io
// threads. Fixture: server_fixture.h.
#include <thread>

#include "tests/net/server_fixture.h"

namespace tessera::net {
namespace server_test {
namespace {
TEST_F(ServerTest, HttpRequestsGoToTheHandlerWithKeepAlive) {
  StartServer();
  auto conn = HttpConnection::Connect("127.0.0.1", server_->port(), kGiveUpMs);
  ASSERT_TRUE(conn.ok()) << conn.status().ToString();
  auto r1 = (*conn)->Request("GET", "/healthz?x=1", "",
                             {{"X-Custom", "A"}, {"Authorization", "Bearer t"}},
                             /*keep_alive=*/true, kGiveUpMs);
  ASSERT_TRUE(r1.ok()) << r1.status().ToString();
  EXPECT_EQ(r1->status, 200);
  EXPECT_EQ(r1->body, "hello /healthz?x=1");
  EXPECT_EQ(r1->headers["x-test"], "yes");
  EXPECT_EQ(r1->headers["content-type"], "text/plain");
  auto r2 = (*conn)->Request("POST", "/api/shards", "{\"kind\":\"counter\"}",
                             {}, /*keep_alive=*/true, kGiveUpMs);
  ASSERT_TRUE(r2.ok()) << r2.status().ToString();
  EXPECT_EQ(r2->status, 200);

  std::vector<HttpRequest> seen = http_.requests();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].method, "GET");
  EXPECT_EQ(seen[0].target, "/healthz?x=1");
  EXPECT_EQ(seen[0].headers["x-custom"], "A");
  EXPECT_EQ(seen[0].headers["authorization"], "Bearer t");
  EXPECT_EQ(seen[0].remote_address, "127.0.0.1");
  EXPECT_EQ(seen[1].method, "POST");
  EXPECT_EQ(seen[1].body, "{\"kind\":\"counter\"}");
}

TEST_F(ServerTest, HttpBodyOverTheLimitIs413) {
  StartServer();
  auto r = HttpCall("127.0.0.1", server_->port(), "POST", "/api/shards",
                    std::string(2 << 20, 'x'), {}, kGiveUpMs);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 413);
  EXPECT_TRUE(http_.requests().empty());
  // Exactly at the limit is fine.
  auto ok = HttpCall("127.0.0.1", server_->port(), "POST", "/x",
                     std::string(1 << 20, 'x'), {}, kGiveUpMs);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->status, 200);
}

TEST_F(ServerTest, BadShardPathIsRefused) {
  StartServer();
  auto client = TestClient::ConnectTarget(ClientOpts(), "/shard/%zz");
  ASSERT_FALSE(client.ok());
  EXPECT_THAT(client.status().message(), HasSubstr("400"));
}

TEST_F(ServerTest, PortInUseIsAnError) {
  StartServer();
  ServerOptions options = Options();
  options.port = server_->port();
  Router router;
  Server second(options, kSecret, router, nullptr, nullptr);
  Status started = second.Start();
  EXPECT_EQ(started.code(), StatusCode::kIo) << started.ToString();
}

TEST_F(ServerTest, MetricsCountTraffic) {
  StartServer();
  CreateShard("a");
  auto client = Join("a", "alice");
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(client->SendInput(1, AddInput(1)).ok());
  ASSERT_TRUE(client->ReadUntil<v1::Ack>(kGiveUpMs).ok());
  ASSERT_TRUE(client->SendInput(2, AddInput(-1)).ok());
  ASSERT_TRUE(client->ReadUntil<v1::Reject>(kGiveUpMs).ok());
  std::string text = metrics_.Render();
  EXPECT_THAT(text, HasSubstr("tessera_connections 1"));
  EXPECT_THAT(text, HasSubstr("tessera_inputs_submitted_total 2"));
  EXPECT_THAT(text, HasSubstr("tessera_inputs_accepted_total 1"));
  EXPECT_THAT(text,
              HasSubstr("tessera_inputs_refused_total{reason=\"module\"} 1"));
  EXPECT_THAT(text, HasSubstr("tessera_ws_messages_in_total 3"));
  EXPECT_THAT(text, HasSubstr("tessera_ws_bytes_out_total"));
}

// Each io thread runs its own context and every connection lives on one
// of them: frames, answers and the shutdown work the same.
TEST_F(ServerTest, ManyIoThreads) {
  ServerOptions options = Options();
  options.io_threads = 4;
  StartServer(options);
  CreateShard("a");
  std::vector<std::unique_ptr<TestClient>> clients;
  for (int i = 0; i < 8; ++i) {
    clients.push_back(Join("a", "p" + std::to_string(i % 3)));
    ASSERT_NE(clients.back(), nullptr);
  }
  for (size_t i = 0; i < clients.size(); ++i) {
    ASSERT_TRUE(clients[i]->SendInput(1, AddInput(1)).ok());
  }
  for (auto& client : clients) {
    auto ack = client->ReadUntil<v1::Ack>(kGiveUpMs);
    ASSERT_TRUE(ack.ok()) << ack.status().ToString();
    EXPECT_EQ(ack->seq, 1u);
    ExpectFrames(*client, 2);
  }
  auto frame = clients[0]->ReadUntil<v1::Frame>(kGiveUpMs);
  ASSERT_TRUE(frame.ok());
  EXPECT_EQ(FromMsgpack(frame->snapshot)["value"], 8);
  std::thread stopper([&] { server_->Stop(); });
  for (auto& client : clients) {
    Result<CloseInfo> close = client->WaitClose(kGiveUpMs);
    ASSERT_TRUE(close.ok()) << close.status().ToString();
    EXPECT_EQ(close->code, kCloseGoingAway);
  }
  stopper.join();
  EXPECT_EQ(server_->shards().ConnectionCount(), 0u);
}

}  // namespace
}  // namespace server_test
}  // namespace tessera::net
