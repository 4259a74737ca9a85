// The asynchronous protocol-v1 client (v1_client.h) against
// fake_shard_server: join, inputs answered by ACK/REJECT or by frame acks,
// PINGs answered, refused tickets, server closes, TRANSFER, TLS.
#include "net/client/v1_client.h"

#include <gtest/gtest.h>

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ssl/context.hpp>
#include <optional>
#include <vector>

#include "net/client/fake_shard_server.h"

namespace tessera::net::client {
namespace {

namespace asio = boost::asio;
using testing::FakeServerOptions;
using testing::FakeShardServer;

std::string Ticket(const std::string& secret, const std::string& shard) {
  return testing::FakeTicket(secret, shard, "bot-1");
}

// The fake server's shard "s", as localhost.
WsTarget ShardS(const FakeShardServer& server) {
  WsTarget target;
  target.endpoint = asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"),
                                            server.port());
  target.host = "localhost";
  target.host_header = "localhost:" + std::to_string(server.port());
  target.path = "/shard/s";
  return target;
}

// What one session saw.
struct Seen {
  std::optional<Status> connected;
  bool welcomed = false;
  std::string subscriber;
  int frames = 0;
  int acks = 0;
  int rejects = 0;
  int errors = 0;
  std::optional<int> close_code;
  std::string close_reason;
  uint64_t pending = 0;  // unanswered at the end
};

// Plays one session: joins `shard`, sends `inputs` inputs on WELCOME and
// closes once all are answered. Runs until the connection ended.
Seen Play(const FakeShardServer& server, int inputs, uint64_t flags,
          const std::string& ticket, asio::ssl::context* tls = nullptr) {
  asio::io_context ioc;
  Seen seen;
  std::shared_ptr<V1Client> client;
  V1Client::Events events;
  events.welcome = [&](const v1::Welcome& w) {
    seen.welcomed = true;
    seen.subscriber = w.subscriber_id;
    for (int i = 0; i < inputs; ++i) client->SendInput("\x80");
    if (inputs == 0) client->Close();
  };
  events.received = [&](bool frame, size_t bytes) {
    EXPECT_GT(bytes, 0u);
    if (frame) ++seen.frames;
  };
  events.answered = [&](uint64_t seq, V1Client::SteadyClock::duration rtt,
                        const v1::Reject* reject) {
    EXPECT_GE(rtt.count(), 0);
    EXPECT_LE(seq, static_cast<uint64_t>(inputs));
    ++(reject != nullptr ? seen.rejects : seen.acks);
    if (reject != nullptr) {
      EXPECT_EQ(reject->error, "nope");
    }
    if (seen.acks + seen.rejects == inputs) client->Close();
  };
  events.error = [&](const std::string& what) {
    ADD_FAILURE() << what;
    ++seen.errors;
  };
  events.closed = [&](int code, const std::string& reason) {
    seen.close_code = code;
    seen.close_reason = reason;
  };
  client = V1Client::Create(ioc, tls, std::move(events));
  const WsTarget target = ShardS(server);
  client->Connect(target, std::chrono::seconds(5), ticket, flags,
                  [&](Status s) { seen.connected = s; });
  ioc.run();
  EXPECT_TRUE(client->ended());
  seen.pending = client->pending();
  return seen;
}

TEST(V1ClientTest, InputsAnsweredByAcksAndRejects) {
  FakeServerOptions options;
  options.reject_every = 4;
  FakeShardServer server(options);
  const Seen seen = Play(server, 8, 0, Ticket("fake-secret", "s"));
  ASSERT_TRUE(seen.connected.has_value() && seen.connected->ok());
  EXPECT_TRUE(seen.welcomed);
  EXPECT_EQ(seen.subscriber, "bot-1");
  EXPECT_EQ(seen.acks, 6);
  EXPECT_EQ(seen.rejects, 2);
  EXPECT_EQ(seen.frames, 8);
  EXPECT_EQ(seen.close_code, 1000);
  EXPECT_EQ(seen.pending, 0u);
  EXPECT_EQ(server.inputs(), 8u);
}

TEST(V1ClientTest, FrameAcksAnswerInputs) {
  FakeServerOptions options;
  options.reject_every = 4;
  FakeShardServer server(options);
  const Seen seen =
      Play(server, 8, v1::kHelloFrameAcks, Ticket("fake-secret", "s"));
  EXPECT_EQ(seen.acks, 6) << "answered by FRAMEs";
  EXPECT_EQ(seen.rejects, 2);
  EXPECT_EQ(seen.close_code, 1000);
}

TEST(V1ClientTest, AnswersPings) {
  FakeServerOptions options;
  options.ping_before_welcome = true;
  FakeShardServer server(options);
  // The PONG goes out before the input sent on WELCOME, so the server has
  // counted it once that input is answered.
  const Seen seen = Play(server, 1, 0, Ticket("fake-secret", "s"));
  EXPECT_EQ(seen.acks, 1);
  EXPECT_EQ(server.pongs(), 1u);
}

TEST(V1ClientTest, RefusedTicketAndServerClose) {
  FakeServerOptions options;
  options.close_after_inputs = 2;
  options.close_code = 4006;
  FakeShardServer server(options);
  Seen seen = Play(server, 1, 0, Ticket("wrong", "s"));
  ASSERT_TRUE(seen.connected.has_value() && seen.connected->ok());
  EXPECT_FALSE(seen.welcomed);
  EXPECT_EQ(seen.close_code, 4001);
  EXPECT_EQ(seen.close_reason, "bye");

  seen = Play(server, 3, 0, Ticket("fake-secret", "s"));
  EXPECT_TRUE(seen.welcomed);
  EXPECT_EQ(seen.close_code, 4006);
  EXPECT_EQ(seen.acks, 2);
  EXPECT_EQ(seen.pending, 1u) << "the third input was never answered";
}

// A TRANSFER is reported with its shard and ticket, then the 4011 close;
// the ticket joins the target (the client following it, as bots do).
TEST(V1ClientTest, ReportsATransferAndItsTicketJoinsTheTarget) {
  FakeServerOptions options;
  options.close_after_inputs = 2;
  options.transfer_to = "t";
  FakeShardServer server(options);
  asio::io_context ioc;
  std::shared_ptr<V1Client> client, follower;
  std::optional<v1::Transfer> transfer;
  std::optional<int> close_code;
  std::optional<v1::Welcome> target_welcome;
  int answered = 0;
  V1Client::Events events;
  events.welcome = [&](const v1::Welcome&) {
    client->SendInput("\x80");
    client->SendInput("\x80");
  };
  events.answered = [&](uint64_t, V1Client::SteadyClock::duration,
                        const v1::Reject*) { ++answered; };
  events.transfer = [&](const v1::Transfer& t) { transfer = t; };
  events.error = [&](const std::string& what) { ADD_FAILURE() << what; };
  events.closed = [&](int code, const std::string&) {
    close_code = code;
    if (!transfer) return;
    V1Client::Events follow;
    follow.welcome = [&](const v1::Welcome& w) {
      target_welcome = w;
      follower->Close();
    };
    follower = V1Client::Create(ioc, nullptr, std::move(follow));
    WsTarget target = ShardS(server);
    target.path = "/shard/" + transfer->shard_id;
    follower->Connect(target, std::chrono::seconds(5), transfer->ticket, 0,
                      [](Status s) { EXPECT_TRUE(s.ok()) << s.ToString(); });
  };
  client = V1Client::Create(ioc, nullptr, std::move(events));
  client->Connect(ShardS(server), std::chrono::seconds(5),
                  Ticket("fake-secret", "s"), 0,
                  [](Status s) { EXPECT_TRUE(s.ok()) << s.ToString(); });
  ioc.run();
  EXPECT_EQ(answered, 2);
  ASSERT_TRUE(transfer.has_value());
  EXPECT_EQ(transfer->shard_id, "t");
  EXPECT_EQ(client->transfer()->shard_id, "t");
  EXPECT_EQ(close_code, 4011);
  ASSERT_TRUE(target_welcome.has_value()) << "the ticket did not join \"t\"";
  EXPECT_EQ(target_welcome->shard_id, "t");
  EXPECT_EQ(target_welcome->subscriber_id, "bot-1");
}

TEST(V1ClientTest, ConnectFailures) {
  uint16_t port;
  {
    FakeShardServer server(FakeServerOptions{});
    port = server.port();
  }
  asio::io_context ioc;
  auto client = V1Client::Create(ioc, nullptr, {});
  WsTarget target;
  target.endpoint =
      asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), port);
  target.host_header = "127.0.0.1";
  target.path = "/shard/s";
  std::optional<Status> connected;
  client->Connect(target, std::chrono::seconds(5), "t", 0,
                  [&](Status s) { connected = s; });
  ioc.run();
  ASSERT_TRUE(connected.has_value());
  EXPECT_EQ(connected->code(), StatusCode::kIo);
  EXPECT_EQ(connected->message().rfind("connect: ", 0), 0u)
      << connected->message();
}

TEST(V1ClientTest, OverTls) {
  FakeServerOptions options;
  options.tls = true;
  FakeShardServer server(options);
  asio::ssl::context tls(asio::ssl::context::tls_client);
  tls.add_certificate_authority(asio::buffer(server.certificate_pem().data(),
                                             server.certificate_pem().size()));
  tls.set_verify_mode(asio::ssl::verify_peer);
  const Seen seen = Play(server, 3, 0, Ticket("fake-secret", "s"), &tls);
  EXPECT_EQ(seen.acks, 3);
  EXPECT_EQ(seen.close_code, 1000);
}

// With the `frame` event the FRAMEs are decoded and still answer inputs
// (frame acks); SendInputsAtRate skips the times make_input has nothing.
TEST(V1ClientTest, DecodedFramesAndSkippedSends) {
  FakeShardServer server(FakeServerOptions{});
  asio::io_context ioc;
  std::shared_ptr<V1Client> client;
  std::vector<uint64_t> ticks;
  int made = 0;
  int answered = 0;
  V1Client::Events events;
  events.welcome = [&](const v1::Welcome&) {
    client->SendInputsAtRate(
        500, V1Client::SteadyClock::now() + std::chrono::seconds(10), {},
        [&]() -> std::optional<V1Client::Outgoing> {
          // Nothing the first three times, then inputs with a view tick.
          if (++made <= 3) return std::nullopt;
          return V1Client::Outgoing{"\x80", 2.5};
        },
        /*max_inputs=*/3);
  };
  events.frame = [&](const v1::Frame& f) { ticks.push_back(f.tick); };
  events.answered = [&](uint64_t, V1Client::SteadyClock::duration,
                        const v1::Reject* reject) {
    EXPECT_EQ(reject, nullptr);
    if (++answered == 3) client->Close();
  };
  events.error = [&](const std::string& what) { ADD_FAILURE() << what; };
  client = V1Client::Create(ioc, nullptr, std::move(events));
  const WsTarget target = ShardS(server);
  client->Connect(target, std::chrono::seconds(5), Ticket("fake-secret", "s"),
                  v1::kHelloFrameAcks, [](Status s) { EXPECT_TRUE(s.ok()); });
  ioc.run();
  EXPECT_EQ(made, 6);
  EXPECT_EQ(server.inputs(), 3u);
  EXPECT_EQ(answered, 3) << "answered by the decoded FRAMEs";
  EXPECT_EQ(ticks.size(), 3u);
}

}  // namespace
}  // namespace tessera::net::client
