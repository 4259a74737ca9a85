// The blocking protocol-v1 client (blocking_client.h) against
// fake_shard_server: join, inputs, reads that time out and continue,
// refusals, closes by either side, TLS.
#include "net/client/blocking_client.h"

#include <gtest/gtest.h>

#include <boost/asio/ssl/context.hpp>

#include "net/client/fake_shard_server.h"

namespace tessera::net::client {
namespace {

using testing::FakeServerOptions;
using testing::FakeShardServer;

std::string Ticket(const std::string& secret) {
  return testing::FakeTicket(secret, "s", "p1");
}

ClientOptions Options(const FakeShardServer& server) {
  ClientOptions o;
  o.port = server.port();
  return o;
}

TEST(BlockingClientTest, JoinsSendsAndReads) {
  FakeShardServer server(FakeServerOptions{});
  auto c = BlockingClient::Connect(Options(server), "s");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  Result<v1::Welcome> welcome = (*c)->Join(Ticket("fake-secret"));
  ASSERT_TRUE(welcome.ok()) << welcome.status().ToString();
  EXPECT_EQ(welcome->subscriber_id, "p1");
  EXPECT_EQ(welcome->flags, 0u);

  // Nothing to read yet: the read times out and stays pending.
  EXPECT_EQ((*c)->ReadMessage(20).status().code(),
            StatusCode::kDeadlineExceeded);
  ASSERT_TRUE((*c)->SendInput(1, "\x80").ok());
  Result<v1::Frame> frame = (*c)->ReadUntil<v1::Frame>();
  ASSERT_TRUE(frame.ok()) << frame.status().ToString();
  EXPECT_EQ(frame->last_seq, 1u);
  Result<v1::Ack> ack = (*c)->ReadUntil<v1::Ack>();
  ASSERT_TRUE(ack.ok()) << ack.status().ToString();
  EXPECT_EQ(ack->seq, 1u);

  ASSERT_TRUE((*c)->SendPing(3).ok());
  Result<v1::Pong> pong = (*c)->ReadUntil<v1::Pong>();
  ASSERT_TRUE(pong.ok()) << pong.status().ToString();
  EXPECT_EQ(pong->nonce, 3u);

  EXPECT_TRUE((*c)->Close().ok());
  EXPECT_TRUE((*c)->closed());
  Result<ClientEvent> after = (*c)->Read();
  ASSERT_TRUE(after.ok());
  EXPECT_TRUE(after->closed);
  EXPECT_EQ(after->close.code, 1000);
  EXPECT_FALSE((*c)->SendInput(2, "\x80").ok());
}

TEST(BlockingClientTest, FrameAcksAreAskedForWithTheHelloFlags) {
  FakeShardServer server(FakeServerOptions{});
  ClientOptions o = Options(server);
  o.hello_flags = v1::kHelloFrameAcks;
  auto c = BlockingClient::Connect(o, "s");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  Result<v1::Welcome> welcome = (*c)->Join(Ticket("fake-secret"));
  ASSERT_TRUE(welcome.ok()) << welcome.status().ToString();
  EXPECT_EQ(welcome->flags, v1::kHelloFrameAcks);
}

TEST(BlockingClientTest, RefusalsAndServerCloses) {
  FakeServerOptions options;
  options.close_after_inputs = 1;
  options.close_code = 4006;
  FakeShardServer server(options);
  auto c = BlockingClient::Connect(Options(server), "s");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  Result<v1::Welcome> refused = (*c)->Join(Ticket("wrong"));
  EXPECT_EQ(refused.status().code(), StatusCode::kIo);
  EXPECT_EQ(refused.status().message(), "closed 4001: bye");

  c = BlockingClient::Connect(Options(server), "s");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_TRUE((*c)->Join(Ticket("fake-secret")).ok());
  ASSERT_TRUE((*c)->SendInput(1, "\x80").ok());
  Result<CloseInfo> close = (*c)->WaitClose();
  ASSERT_TRUE(close.ok()) << close.status().ToString();
  EXPECT_EQ(close->code, 4006);
  EXPECT_EQ(close->reason, "bye");
  EXPECT_TRUE((*c)->closed());
}

TEST(BlockingClientTest, ConnectFailures) {
  FakeShardServer server(FakeServerOptions{});
  // The fake server drops any other path without an answer.
  auto c = BlockingClient::ConnectTarget(Options(server), "/elsewhere");
  EXPECT_EQ(c.status().code(), StatusCode::kIo);
  const uint16_t port = server.port();
  server.Stop();
  ClientOptions o;
  o.port = port;
  c = BlockingClient::Connect(o, "s");
  EXPECT_EQ(c.status().code(), StatusCode::kIo);
  EXPECT_EQ(c.status().message().rfind("connect: ", 0), 0u)
      << c.status().message();
}

TEST(BlockingClientTest, OverTls) {
  FakeServerOptions options;
  options.tls = true;
  FakeShardServer server(options);
  boost::asio::ssl::context tls(boost::asio::ssl::context::tls_client);
  tls.add_certificate_authority(boost::asio::buffer(
      server.certificate_pem().data(), server.certificate_pem().size()));
  tls.set_verify_mode(boost::asio::ssl::verify_peer);
  ClientOptions o = Options(server);
  o.host = "localhost";
  o.tls = &tls;
  auto c = BlockingClient::Connect(o, "s");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_TRUE((*c)->Join(Ticket("fake-secret")).ok());
  ASSERT_TRUE((*c)->SendInput(1, "\x80").ok());
  EXPECT_TRUE((*c)->ReadUntil<v1::Ack>().ok());
  EXPECT_TRUE((*c)->Close().ok());
}

}  // namespace
}  // namespace tessera::net::client
