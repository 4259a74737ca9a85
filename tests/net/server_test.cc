// The network server in-process: WebSocket sessions (joining, inputs,
// tickets, hostile messages, limits, closes). Fixture: server_fixture.h.
#include <future>

#include "common/clock.h"
#include "net/notify_fanout.h"
#include "tessera/compute_abi.h"
#include "tests/net/server_fixture.h"

namespace tessera::net {
namespace server_test {
namespace {

// Runs server->Stop() on another thread; true if it returned within
// kGiveUpMs (a give-up, not a bound on how fast it is). If not, waits for
// it anyway.
bool StopsWithinGiveUp(Server* server) {
  std::future<void> stopped =
      std::async(std::launch::async, [server] { server->Stop(); });
  const bool in_time = stopped.wait_for(std::chrono::milliseconds(kGiveUpMs)) ==
                       std::future_status::ready;
  stopped.get();
  return in_time;
}

TEST_F(ServerTest, JoinGetsWelcomeThenFrames) {
  StartServer();
  const std::string shard = "room/1 é";  // percent-encoded in the URL
  CreateShard(shard, 5);
  auto connected = TestClient::Connect(ClientOpts("tessera.v1"), shard);
  ASSERT_TRUE(connected.ok()) << connected.status().ToString();
  auto& client = *connected;
  EXPECT_EQ(client->subprotocol(), "tessera.v1");

  auto welcome = client->Join(Ticket(shard, "alice"));
  ASSERT_TRUE(welcome.ok()) << welcome.status().ToString();
  EXPECT_EQ(welcome->shard_id, shard);
  EXPECT_EQ(welcome->subscriber_id, "alice");
  EXPECT_EQ(welcome->flags, 0u);
  EXPECT_EQ(welcome->tick_rate, kTickRate);
  EXPECT_EQ(welcome->codec, "msgpack");

  auto frame = client->ReadUntil<v1::Frame>(kGiveUpMs);
  ASSERT_TRUE(frame.ok()) << frame.status().ToString();
  EXPECT_GE(frame->tick, welcome->tick);
  EXPECT_EQ(frame->last_seq, 0u);
  json snapshot = FromMsgpack(frame->snapshot);
  EXPECT_EQ(snapshot["value"], 5);
  ExpectFrames(*client, 3);

  EXPECT_THAT(server_->shards().Subscribers(shard), ElementsAre("alice"));
  EXPECT_EQ(server_->shards().ConnectionCount(), 1u);
  EXPECT_TRUE(WaitFor([&] { return host_->Get(shard)->subscribers == 1; }));

  ASSERT_TRUE(client->Close().ok());
  EXPECT_TRUE(
      WaitFor([&] { return server_->shards().ConnectionCount() == 0; }));
  EXPECT_TRUE(server_->shards().Subscribers(shard).empty());
  EXPECT_TRUE(WaitFor([&] { return host_->Get(shard)->subscribers == 0; }));
}

// A compute module's NOTIFY over real sockets: the joined connections of
// the channel get it in their stream of frames; others do not.
TEST_F(ServerTest, NotifyReachesTheJoinedConnectionsOfItsChannel) {
  StartServer();
  CreateShard("n1");
  CreateShard("n2");
  ShardHostNotifyShards shards(*host_);
  NotifyFanout notify(server_->shards().fanout(), &shards);
  auto alice = Join("n1", "alice");
  auto bob = Join("n2", "bob");
  ASSERT_NE(alice, nullptr);
  ASSERT_NE(bob, nullptr);
  EXPECT_EQ(notify.SessionCount(), 2u);
  const std::string payload("{\"rain\":true}\x00", 14);
  compute::HostCallResult r = notify.NotifyChannel(
      compute::Notification{"weather", "kind:counter", payload, "f-9"});
  ASSERT_EQ(r.code, 2) << r.message;
  for (TestClient* client : {alice.get(), bob.get()}) {
    auto note = client->ReadUntil<v1::Notify>(kGiveUpMs);
    ASSERT_TRUE(note.ok()) << note.status().ToString();
    EXPECT_EQ(note->module, "weather");
    EXPECT_EQ(note->channel, "kind:counter");
    EXPECT_EQ(note->payload, payload);
    EXPECT_EQ(note->flow_id, "f-9");
  }
  // Only bob's; frames keep flowing around it.
  r = notify.NotifyChannel(
      compute::Notification{"weather", "player:bob", "b", "f-10"});
  ASSERT_EQ(r.code, 1) << r.message;
  auto note = bob->ReadUntil<v1::Notify>(kGiveUpMs);
  ASSERT_TRUE(note.ok()) << note.status().ToString();
  EXPECT_EQ(note->channel, "player:bob");
  ExpectFrames(*bob, 2);
  // The counter module gives no interest areas: spatial reaches nobody.
  r = notify.NotifySpatial("n1", 0, 0, 1000,
                           compute::Notification{"weather", "", "s", "f-11"});
  EXPECT_EQ(r.code, 0) << r.message;
  EXPECT_EQ(notify
                .NotifySpatial("nope", 0, 0, 1,
                               compute::Notification{"w", "", "s", "f"})
                .code,
            compute_abi::kErrNotFound);
}

// Spatial NOTIFY through the real host: the subscribers whose interest-area
// centre (zone_mini: their player) was within the radius at the last tick.
TEST_F(ServerTest, SpatialNotifyReachesThePlayersNearThePoint) {
  TESSERA_LOAD_GUEST(zone_mini, "zone_mini", 64);
  AddKind("zone", zone_mini);
  StartServer();
  ASSERT_TRUE(host_->Create("zone", "z", Msgpack({{"mode", "interest"}})).ok());
  ShardHostNotifyShards shards(*host_);
  NotifyFanout notify(server_->shards().fanout(), &shards);
  auto alice = Join("z", "alice");
  auto bob = Join("z", "bob");
  ASSERT_NE(alice, nullptr);
  ASSERT_NE(bob, nullptr);
  ASSERT_TRUE(alice->SendInput(1, Msgpack({{"join", json::object()}})).ok());
  ASSERT_TRUE(
      bob->SendInput(1, Msgpack({{"move_to", {{"x", 500}, {"y", 500}}}})).ok());
  // Both players exist once a tick has given both areas.
  ASSERT_TRUE(WaitFor([&] {
    auto near = host_->SubscribersWithin("z", 0, 0, 1e6f);
    return near.ok() && near->size() == 2;
  }));
  compute::HostCallResult r = notify.NotifySpatial(
      "z", 3, 4, 10, compute::Notification{"npc", "", "{\"roar\":1}", "f-s"});
  ASSERT_EQ(r.code, 1) << r.message;  // alice at (0, 0) only
  auto note = alice->ReadUntil<v1::Notify>(kGiveUpMs);
  ASSERT_TRUE(note.ok()) << note.status().ToString();
  EXPECT_EQ(note->channel, "spatial:z");
  EXPECT_EQ(note->payload, "{\"roar\":1}");
  // bob's first NOTIFY is the one sent to him afterwards, not the spatial.
  ASSERT_EQ(
      notify
          .NotifyChannel(compute::Notification{"npc", "player:bob", "b", "f-b"})
          .code,
      1);
  note = bob->ReadUntil<v1::Notify>(kGiveUpMs);
  ASSERT_TRUE(note.ok()) << note.status().ToString();
  EXPECT_EQ(note->channel, "player:bob");
}

TEST_F(ServerTest, NoSubprotocolWhenNotOffered) {
  StartServer();
  CreateShard("a");
  auto client = Connect("a");
  ASSERT_NE(client, nullptr);
  EXPECT_EQ(client->subprotocol(), "");
  EXPECT_TRUE(client->Join(Ticket("a", "alice")).ok());
}

TEST_F(ServerTest, InputIsAckedAfterTheFrameThatShowsIt) {
  StartServer();
  CreateShard("a", 10);
  auto client = Join("a", "alice");
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(client->SendInput(1, AddInput(3)).ok());
  bool saw_frame = false;
  for (;;) {
    auto msg = client->ReadMessage(kGiveUpMs);
    ASSERT_TRUE(msg.ok()) << msg.status().ToString();
    if (auto* frame = std::get_if<v1::Frame>(&msg.value())) {
      json snapshot = FromMsgpack(frame->snapshot);
      if (frame->last_seq == 1) {
        saw_frame = true;
        EXPECT_EQ(snapshot["value"], 13);
        EXPECT_EQ(snapshot["last_sid"], "alice");
      } else {
        EXPECT_EQ(snapshot["value"], 10);
      }
    } else if (auto* ack = std::get_if<v1::Ack>(&msg.value())) {
      EXPECT_EQ(ack->seq, 1u);
      EXPECT_TRUE(saw_frame) << "ACK before the FRAME of its tick";
      break;
    } else {
      ASSERT_FALSE(std::holds_alternative<v1::Reject>(msg.value()));
    }
  }
  // The next inputs too, with gaps in the seqs.
  ASSERT_TRUE(client->SendInput(5, AddInput(1), 3).ok());
  auto ack = client->ReadUntil<v1::Ack>(kGiveUpMs);
  ASSERT_TRUE(ack.ok()) << ack.status().ToString();
  EXPECT_EQ(ack->seq, 5u);
  auto frame = client->ReadUntil<v1::Frame>(kGiveUpMs);
  ASSERT_TRUE(frame.ok());
  EXPECT_EQ(frame->last_seq, 5u);
  EXPECT_EQ(FromMsgpack(frame->snapshot)["value"], 14);
}

// The round-trip pings are writes between the frames (a ping every
// millisecond against 50 frames a second): every frame arrives whole and in
// order, the round trip becomes known, and an input stamped with a
// fractional view tick goes through the real host like any other.
TEST_F(ServerTest, RoundTripPingsInterleaveWithFrames) {
  ServerOptions options = Options();
  options.ws_ping_interval_ms = 1;
  StartServer(options);
  CreateShard("a", 1);
  auto client = Join("a", "alice");
  ASSERT_NE(client, nullptr);
  ExpectFrames(*client, 40);
  Histogram* rtt =
      metrics_.GetHistogram("tessera_connection_rtt_seconds", "", {});
  // Reading answers the pings (by the client's WebSocket).
  EXPECT_TRUE(WaitFor([&] {
    (void)client->Read(/*timeout_ms=*/5);
    return rtt->count() >= 1;
  }));
  ASSERT_TRUE(client->SendInput(1, AddInput(2), 17.75).ok());
  auto ack = client->ReadUntil<v1::Ack>(kGiveUpMs);
  ASSERT_TRUE(ack.ok()) << ack.status().ToString();
  EXPECT_EQ(ack->seq, 1u);
  ExpectFrames(*client, 5);
  ASSERT_TRUE(client->Close().ok());
}

// A client that stops answering (it reads nothing, so its WebSocket
// answers no ping) is closed with 4015 once it has been silent for the
// timeout; one that keeps reading through the same time stays connected.
TEST_F(ServerTest, AClientSilentForTheTimeoutIsClosedUnresponsive) {
  static FakeClock clock;  // outlives the server (stopped after the body)
  ServerOptions options = Options();
  options.ws_ping_interval_ms = 5;
  options.ws_silence_timeout_ms = 1000;
  options.clock = &clock;
  StartServer(options);
  CreateShard("a");
  auto alice = Join("a", "alice");
  auto bob = Join("a", "bob");
  ASSERT_NE(alice, nullptr);
  ASSERT_NE(bob, nullptr);
  ExpectFrames(*bob, 3);
  // 1.5 s go by in steps of 100 ms; alice reads (answering the pings)
  // between the steps, bob reads nothing.
  for (int step = 0; step < 15; ++step) {
    clock.Advance(100'000);
    const auto until =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(40);
    while (std::chrono::steady_clock::now() < until) {
      auto event = alice->Read(/*timeout_ms=*/5);
      if (event.ok()) {
        ASSERT_FALSE(event->closed) << event->close.reason;
      }
    }
  }
  ExpectClose(*bob, kCloseUnresponsive, "unresponsive: nothing received");
  ExpectFrames(*alice, 5);
  ASSERT_TRUE(alice->SendInput(1, AddInput(1)).ok());
  auto ack = alice->ReadUntil<v1::Ack>(kGiveUpMs);
  ASSERT_TRUE(ack.ok()) << ack.status().ToString();
  ASSERT_TRUE(alice->Close().ok());
}

// With the HELLO flag the FRAME's last_seq is the ACK: no ACK messages,
// and a tick's REJECTs come before its FRAME.
TEST_F(ServerTest, FrameAcksCarryAcksInLastSeq) {
  StartServer();
  CreateShard("a");
  ClientOptions options = ClientOpts();
  options.hello_flags = v1::kHelloFrameAcks;
  auto connected = TestClient::Connect(options, "a");
  ASSERT_TRUE(connected.ok()) << connected.status().ToString();
  auto& client = *connected;
  auto welcome = client->Join(Ticket("a", "alice"));
  ASSERT_TRUE(welcome.ok()) << welcome.status().ToString();
  EXPECT_EQ(welcome->flags, v1::kHelloFrameAcks);  // honoured
  ASSERT_TRUE(client->SendInput(1, AddInput(2)).ok());
  ASSERT_TRUE(client->SendInput(2, AddInput(-1)).ok());
  ASSERT_TRUE(client->SendInput(3, AddInput(5)).ok());
  bool rejected = false;
  uint64_t last_seq = 0;
  while (last_seq < 3) {
    auto msg = client->ReadMessage(kGiveUpMs);
    ASSERT_TRUE(msg.ok()) << msg.status().ToString();
    ASSERT_FALSE(std::holds_alternative<v1::Ack>(*msg)) << "an ACK message";
    if (const auto* reject = std::get_if<v1::Reject>(&*msg)) {
      EXPECT_EQ(reject->seq, 2u);
      EXPECT_EQ(reject->error, "n must be positive");
      EXPECT_LT(last_seq, 2u) << "REJECT after a FRAME covering it";
      rejected = true;
    } else if (const auto* frame = std::get_if<v1::Frame>(&*msg)) {
      if (frame->last_seq >= 2) {
        EXPECT_TRUE(rejected);
      }
      last_seq = frame->last_seq;
      if (last_seq == 3) {
        EXPECT_EQ(FromMsgpack(frame->snapshot)["value"], 7);
      }
    }
  }
  // Nothing else is pending: no ACK message follows in the next ticks'
  // messages (counted in frames, not in milliseconds).
  for (int frames = 0; frames < 15;) {  // the 300 ms it once waited, at 50 Hz
    auto msg = client->ReadMessage(kGiveUpMs);
    ASSERT_TRUE(msg.ok()) << msg.status().ToString();
    ASSERT_FALSE(std::holds_alternative<v1::Ack>(*msg)) << "an ACK message";
    if (std::holds_alternative<v1::Frame>(*msg)) ++frames;
  }
}

TEST_F(ServerTest, RefusedInputGetsRejectWithTheModuleText) {
  StartServer();
  CreateShard("a");
  auto client = Join("a", "alice");
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(client->SendInput(1, AddInput(-1)).ok());
  auto reject = client->ReadUntil<v1::Reject>(kGiveUpMs);
  ASSERT_TRUE(reject.ok()) << reject.status().ToString();
  EXPECT_EQ(reject->seq, 1u);
  EXPECT_EQ(reject->error, "n must be positive");
  // A refused input still counts as applied for last_seq.
  auto frame = client->ReadUntil<v1::Frame>(kGiveUpMs);
  ASSERT_TRUE(frame.ok());
  EXPECT_EQ(frame->last_seq, 1u);
  EXPECT_EQ(FromMsgpack(frame->snapshot)["value"], 0);
}

TEST_F(ServerTest, TwoSubscribersSeeEachOther) {
  StartServer();
  CreateShard("a");
  auto alice = Join("a", "alice");
  auto bob = Join("a", "bob");
  ASSERT_NE(alice, nullptr);
  ASSERT_NE(bob, nullptr);
  EXPECT_THAT(server_->shards().Subscribers("a"),
              UnorderedElementsAre("alice", "bob"));
  ASSERT_TRUE(bob->SendInput(1, AddInput(7)).ok());
  ASSERT_TRUE(bob->ReadUntil<v1::Ack>(kGiveUpMs).ok());
  // Alice sees bob's input in her frames, with her own last_seq (0).
  for (;;) {
    auto frame = alice->ReadUntil<v1::Frame>(kGiveUpMs);
    ASSERT_TRUE(frame.ok()) << frame.status().ToString();
    EXPECT_EQ(frame->last_seq, 0u);
    json snapshot = FromMsgpack(frame->snapshot);
    if (snapshot["value"] == 7) {
      EXPECT_EQ(snapshot["last_sid"], "bob");
      break;
    }
  }
  ExpectFrames(*bob, 2);
}

TEST_F(ServerTest, ConnectionsOfOneSubscriberGetTheirOwnResults) {
  StartServer();
  CreateShard("a");
  auto tab1 = Join("a", "alice");
  auto tab2 = Join("a", "alice");
  ASSERT_NE(tab1, nullptr);
  ASSERT_NE(tab2, nullptr);
  EXPECT_THAT(server_->shards().Subscribers("a"), ElementsAre("alice"));
  // The same client seq on both connections.
  ASSERT_TRUE(tab1->SendInput(1, AddInput(2)).ok());
  ASSERT_TRUE(tab2->SendInput(1, AddInput(-2)).ok());
  auto ack = tab1->ReadUntil<v1::Ack>(kGiveUpMs);
  ASSERT_TRUE(ack.ok()) << ack.status().ToString();
  EXPECT_EQ(ack->seq, 1u);
  auto reject = tab2->ReadUntil<v1::Reject>(kGiveUpMs);
  ASSERT_TRUE(reject.ok()) << reject.status().ToString();
  EXPECT_EQ(reject->error, "n must be positive");
  // Neither got the other's result.
  for (int i = 0; i < 5; ++i) {
    auto m1 = tab1->ReadMessage(kGiveUpMs);
    auto m2 = tab2->ReadMessage(kGiveUpMs);
    ASSERT_TRUE(m1.ok() && m2.ok());
    EXPECT_TRUE(std::holds_alternative<v1::Frame>(m1.value()));
    EXPECT_TRUE(std::holds_alternative<v1::Frame>(m2.value()));
  }
  // The host counts distinct subscribers.
  EXPECT_EQ(host_->Get("a")->subscribers, 1u);
}

TEST_F(ServerTest, TicketsAreChecked) {
  StartServer();
  CreateShard("a");
  CreateShard("b");
  struct Case {
    std::string ticket;
    int code;
  };
  const std::vector<Case> cases = {
      {Ticket("a", "alice", 600, "another-secret"), kCloseTicketInvalid},
      {"v1.garbage.ticket", kCloseTicketInvalid},
      {"", kCloseTicketInvalid},
      {Ticket("a", "alice", -10), kCloseTicketExpired},
      {Ticket("b", "alice"), kCloseTicketWrongShard},
      {Ticket("a", ""), kCloseTicketInvalid},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.ticket);
    auto client = Connect("a");
    ASSERT_NE(client, nullptr);
    ASSERT_TRUE(client->SendHello(c.ticket).ok());
    Result<CloseInfo> close = client->WaitClose(kGiveUpMs);
    ASSERT_TRUE(close.ok()) << close.status().ToString();
    EXPECT_EQ(close->code, c.code) << close->reason;
    EXPECT_FALSE(close->reason.empty());
  }
  // A valid ticket for a shard that does not run.
  auto client = Connect("ghost");
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(client->SendHello(Ticket("ghost", "alice")).ok());
  ExpectClose(*client, kCloseShardNotFound, "ghost");

  std::string metrics = metrics_.Render();
  EXPECT_THAT(metrics, HasSubstr("tessera_ws_closes_total{code=\"4001\"} 4"));
  EXPECT_THAT(metrics, HasSubstr("tessera_ws_closes_total{code=\"4004\"} 1"));
}

// Inputs with an empty subscriber id are the server's own (a function's
// shards.send): a client holding a signed ticket for "" is refused at HELLO,
// and nothing it sends reaches the shard.
TEST_F(ServerTest, AClientCannotSendAsTheServer) {
  StartServer();
  CreateShard("a", 10);
  auto client = Connect("a");
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(client->SendHello(Ticket("a", "")).ok());
  (void)client->SendInput(1, AddInput(5));  // may already be closed
  ExpectClose(*client, kCloseTicketInvalid, "subscriber id is empty");
  EXPECT_EQ(host_->Get("a")->subscribers, 0u);
  // A player who joins afterwards sees the shard untouched.
  auto alice = Join("a", "alice");
  ASSERT_NE(alice, nullptr);
  auto frame = alice->ReadUntil<v1::Frame>(kGiveUpMs);
  ASSERT_TRUE(frame.ok()) << frame.status().ToString();
  json snapshot = FromMsgpack(frame->snapshot);
  EXPECT_EQ(snapshot["value"], 10);
  EXPECT_EQ(snapshot["last_sid"], "");
}

TEST_F(ServerTest, HelloRules) {
  ServerOptions options = Options();
  options.hello_timeout_ms = 200;
  StartServer(options);
  CreateShard("a");
  {
    auto client = Connect("a");
    ASSERT_NE(client, nullptr);
    ExpectClose(*client, kCloseHelloTimeout, "HELLO");
  }
  {
    auto client = Connect("a");
    ASSERT_NE(client, nullptr);
    ASSERT_TRUE(client->SendHello(Ticket("a", "alice"), 2).ok());
    ExpectClose(*client, kCloseUnsupportedVersion, "version 2");
  }
  {
    auto client = Connect("a");
    ASSERT_NE(client, nullptr);
    ASSERT_TRUE(client->SendPing(1).ok());
    ExpectClose(*client, kCloseHelloExpected, "HELLO");
  }
  {
    auto client = Join("a", "alice");
    ASSERT_NE(client, nullptr);
    ASSERT_TRUE(client->SendHello(Ticket("a", "alice")).ok());
    ExpectClose(*client, kCloseHelloExpected, "HELLO");
  }
}

TEST_F(ServerTest, PingPong) {
  ServerOptions options = Options();
  options.ping_interval_ms = 100;
  StartServer(options);
  CreateShard("a");
  auto client = Join("a", "alice");
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(client->SendPing(42).ok());
  auto pong = client->ReadUntil<v1::Pong>(kGiveUpMs);
  ASSERT_TRUE(pong.ok()) << pong.status().ToString();
  EXPECT_EQ(pong->nonce, 42u);
  auto ping = client->ReadUntil<v1::Ping>(kGiveUpMs);
  ASSERT_TRUE(ping.ok()) << ping.status().ToString();
  ASSERT_TRUE(client->SendPong(ping->nonce).ok());
  ExpectFrames(*client, 2);
}

TEST_F(ServerTest, MalformedMessagesCloseOnlyTheirConnection) {
  StartServer();
  CreateShard("a");
  auto bystander = Join("a", "bob");
  ASSERT_NE(bystander, nullptr);

  const std::string hello = v1::EncodeHello(Ticket("a", "alice"));
  struct Case {
    std::string name;
    std::string bytes;
    bool text = false;
    bool join_first = false;
    int code = kCloseBadFrame;
  };
  const std::vector<Case> cases = {
      {"garbage", std::string("\xc1\xff\x00\x13", 4)},
      {"truncated", hello.substr(0, hello.size() - 3)},
      {"not an array", std::string("\x05", 1)},
      {"unknown type", std::string("\x91\x09", 2)},
      {"empty", ""},
      {"text", "[1,1,\"x\"]", true},
      {"oversized", std::string(70 * 1024, '\x90'), false, false,
       kCloseMessageTooBig},
      {"far oversized", std::string(1 << 20, 'x'), false, false,
       kCloseMessageTooBig},
      {"garbage after join", std::string("\xc1", 1), false, true},
      {"text after join", "hi", true, true},
      {"oversized after join", std::string(65 * 1024 + 1, 'x'), false, true,
       kCloseMessageTooBig},
      {"input with wrong types after join", "\x93\x02\xa1x\xa1y", false, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto client = c.join_first ? Join("a", "alice") : Connect("a");
    ASSERT_NE(client, nullptr);
    Status sent = c.text ? client->SendText(c.bytes) : client->Send(c.bytes);
    ASSERT_TRUE(sent.ok()) << sent.ToString();
    Result<CloseInfo> close = client->WaitClose(kGiveUpMs);
    ASSERT_TRUE(close.ok()) << close.status().ToString();
    EXPECT_EQ(close->code, c.code) << close->reason;
    // The others are unaffected.
    ExpectFrames(*bystander, 1);
  }
  auto fresh = Join("a", "carol");
  ASSERT_NE(fresh, nullptr);
  ExpectFrames(*fresh, 3);
  ExpectFrames(*bystander, 3);
}

TEST_F(ServerTest, SeqsMustIncrease) {
  StartServer();
  CreateShard("a");
  {
    auto client = Join("a", "alice");
    ASSERT_NE(client, nullptr);
    ASSERT_TRUE(client->SendInput(2, AddInput(1)).ok());
    ASSERT_TRUE(client->SendInput(2, AddInput(1)).ok());
    ExpectClose(*client, kCloseBadFrame, "seq 2");
  }
  {
    auto client = Join("a", "alice");
    ASSERT_NE(client, nullptr);
    ASSERT_TRUE(client->SendInput(0, AddInput(1)).ok());
    ExpectClose(*client, kCloseBadFrame, "seq");
  }
  {
    auto client = Join("a", "alice");
    ASSERT_NE(client, nullptr);
    ASSERT_TRUE(client->SendInput((uint64_t{1} << 53) + 1, AddInput(1)).ok());
    ExpectClose(*client, kCloseBadFrame, "seq");
  }
}

TEST_F(ServerTest, InputFloodHitsTheStrikesLimitOthersKeepPlaying) {
  // The token buckets run on a clock that does not move: no token is
  // refilled while the flood is sent, however slowly. (Static: it outlives
  // the server, which the fixture stops after the test body.)
  static FakeClock clock;
  ServerOptions options = Options();
  options.input_rate_per_sec = 10;
  options.input_burst = 5;
  options.max_strikes = 3;
  options.clock = &clock;
  StartServer(options);
  CreateShard("a");
  auto flooder = Join("a", "mallory");
  auto player = Join("a", "alice");
  ASSERT_NE(flooder, nullptr);
  ASSERT_NE(player, nullptr);

  for (uint64_t seq = 1; seq <= 40; ++seq) {
    if (!flooder->SendInput(seq, AddInput(1)).ok()) break;  // closed already
  }
  int acks = 0;
  int rate_limited = 0;
  CloseInfo close;
  for (;;) {
    auto event = flooder->Read(kGiveUpMs);
    ASSERT_TRUE(event.ok()) << event.status().ToString();
    if (event->closed) {
      close = event->close;
      break;
    }
    auto msg = v1::DecodeServerMessage(std::span<const uint8_t>(
        reinterpret_cast<const uint8_t*>(event->bytes.data()),
        event->bytes.size()));
    ASSERT_TRUE(msg.ok());
    if (std::holds_alternative<v1::Ack>(msg.value())) ++acks;
    if (auto* reject = std::get_if<v1::Reject>(&msg.value())) {
      EXPECT_EQ(reject->error, "rate limited");
      ++rate_limited;
    }
  }
  EXPECT_EQ(close.code, kCloseRateLimited) << close.reason;
  EXPECT_THAT(close.reason, HasSubstr("strikes"));
  EXPECT_EQ(rate_limited, 3);
  EXPECT_LE(acks, 5);  // at most the burst (some may not be applied yet)

  // The other player keeps getting frames and acks.
  ExpectFrames(*player, 5);
  ASSERT_TRUE(player->SendInput(1, AddInput(1)).ok());
  EXPECT_TRUE(player->ReadUntil<v1::Ack>(kGiveUpMs).ok());
  EXPECT_THAT(
      metrics_.Render(),
      HasSubstr("tessera_inputs_refused_total{reason=\"rate_limited\"} 3"));
}

TEST_F(ServerTest, KickClosesThatSubscriberOnly) {
  StartServer();
  CreateShard("a");
  auto alice1 = Join("a", "alice");
  auto alice2 = Join("a", "alice");
  auto bob = Join("a", "bob");
  ASSERT_NE(alice1, nullptr);
  ASSERT_NE(alice2, nullptr);
  ASSERT_NE(bob, nullptr);
  EXPECT_EQ(server_->shards().CloseSubscriber("a", "alice", kCloseKicked,
                                              "kicked by an operator"),
            2u);
  ExpectClose(*alice1, kCloseKicked, "kicked by an operator");
  ExpectClose(*alice2, kCloseKicked, "kicked by an operator");
  ExpectFrames(*bob, 3);
  EXPECT_TRUE(WaitFor([&] {
    return server_->shards().Subscribers("a") ==
           std::vector<std::string>{"bob"};
  }));
  EXPECT_EQ(server_->shards().CloseSubscriber("a", "nobody", kCloseKicked, "x"),
            0u);
  EXPECT_EQ(server_->shards().CloseShard("a", kCloseShardStopped, "closed"),
            1u);
  ExpectClose(*bob, kCloseShardStopped, "closed");
}

TEST_F(ServerTest, StoppedShardClosesItsConnections) {
  StartServer();
  CreateShard("a");
  CreateShard("b");
  auto alice = Join("a", "alice");
  auto other = Join("b", "bob");
  ASSERT_NE(alice, nullptr);
  ASSERT_NE(other, nullptr);
  ASSERT_TRUE(host_->Stop("a").ok());
  Result<CloseInfo> close = alice->WaitClose(kGiveUpMs);
  ASSERT_TRUE(close.ok()) << close.status().ToString();
  EXPECT_EQ(close->code, kCloseShardStopped);
  EXPECT_THAT(close->reason, StartsWith("stopped"));
  ExpectFrames(*other, 3);

  // A module that finishes: "finished: <its reason>".
  ASSERT_TRUE(other->SendInput(1, Msgpack({{"finish", json::object()}})).ok());
  ExpectClose(*other, kCloseShardStopped, "finished: done");

  // Joining a stopped shard.
  auto late = Connect("a");
  ASSERT_NE(late, nullptr);
  ASSERT_TRUE(late->SendHello(Ticket("a", "alice")).ok());
  ExpectClose(*late, kCloseShardNotFound,
              "no running shard \"a\": it stopped (stopped");
}

TEST_F(ServerTest, StopClosesEveryConnectionWithGoingAway) {
  ServerOptions options = Options();
  options.close_timeout_ms = 120'000;
  options.stop_timeout_ms = 120'000;
  StartServer(options);
  CreateShard("a");
  auto alice = Join("a", "alice");
  auto bob = Join("a", "bob");
  auto lurker = Connect("a");  // not joined yet
  ASSERT_NE(alice, nullptr);
  ASSERT_NE(bob, nullptr);
  ASSERT_NE(lurker, nullptr);
  ASSERT_TRUE(
      WaitFor([&] { return server_->shards().ConnectionCount() == 3; }));

  // Stop returns once every client has answered its close: with both
  // timeouts far beyond the 30 s give-up, only the answers can end it.
  std::future<void> stopped =
      std::async(std::launch::async, [&] { server_->Stop(); });
  for (TestClient* client : {alice.get(), bob.get(), lurker.get()}) {
    Result<CloseInfo> close = client->WaitClose(kGiveUpMs);
    ASSERT_TRUE(close.ok()) << close.status().ToString();
    EXPECT_EQ(close->code, kCloseGoingAway);
    EXPECT_EQ(close->reason, "server shutting down");
  }
  EXPECT_EQ(stopped.wait_for(std::chrono::milliseconds(kGiveUpMs)),
            std::future_status::ready)
      << "Stop waited for its timeout although every client answered";
  stopped.get();
  EXPECT_EQ(server_->shards().ConnectionCount(), 0u);
  // Frames after Stop are dropped; connecting fails.
  server_->shards().OnFrame("a", 999, "x", {});
  EXPECT_FALSE(TestClient::Connect(ClientOpts(), "a").ok());
  server_->Stop();  // idempotent
}

TEST_F(ServerTest, StopDropsClientsThatDoNotAnswerTheClose) {
  // Only the close timeout can end alice's connection before the 30 s
  // give-up: Stop's own timeout is far beyond it.
  ServerOptions options = Options();
  options.close_timeout_ms = 300;
  options.stop_timeout_ms = 120'000;
  StartServer(options);
  CreateShard("a");
  auto alice = Join("a", "alice");
  ASSERT_NE(alice, nullptr);
  // alice does not read meanwhile.
  EXPECT_TRUE(StopsWithinGiveUp(server_.get()))
      << "Stop waited for a client that does not answer the close";
}

TEST_F(ServerTest, ClientThatDoesNotReadIsClosedAsTooSlow) {
  ServerOptions options = Options();
  options.max_queued_frames = 4;
  options.close_timeout_ms = 200;
  options.socket_send_buffer_bytes = 8192;
  StartServer(options);
  CreateShard("a");
  // The counter's snapshot carries the last sender's id: a long id (tickets
  // are at most 4 KiB) makes every frame ~2.5 KB, so a client that does not
  // read (with a small receive buffer) soon fills the socket buffers and
  // frames queue up on the server.
  const std::string big_id(2'500, 'm');
  ClientOptions slow_options = ClientOpts();
  slow_options.receive_buffer_bytes = 4096;
  auto connected = TestClient::Connect(slow_options, "a");
  ASSERT_TRUE(connected.ok()) << connected.status().ToString();
  auto& slow = *connected;
  auto welcome = slow->Join(Ticket("a", big_id));
  ASSERT_TRUE(welcome.ok()) << welcome.status().ToString();
  ASSERT_TRUE(slow->SendInput(1, AddInput(1)).ok());
  auto bystander = Join("a", "bob");
  ASSERT_NE(bystander, nullptr);

  // Meanwhile `slow` reads nothing; the bystander keeps reading.
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(kGiveUpMs);
  while (server_->shards().ConnectionCount() > 1 &&
         std::chrono::steady_clock::now() < deadline) {
    auto frame = bystander->ReadUntil<v1::Frame>(kGiveUpMs);
    ASSERT_TRUE(frame.ok()) << frame.status().ToString();
  }
  EXPECT_EQ(server_->shards().ConnectionCount(), 1u);
  EXPECT_THAT(metrics_.Render(),
              HasSubstr("tessera_ws_closes_total{code=\"1008\"} 1"));
  EXPECT_THAT(server_->shards().Subscribers("a"), ElementsAre("bob"));
  ExpectFrames(*bystander, 3);
}

TEST_F(ServerTest, PingFloodWithoutReadingDoesNotQueuePongs) {
  ServerOptions options = Options();
  options.socket_send_buffer_bytes = 8192;
  // This test is about PONGs; frames that queue up while the flood is sent
  // (slowly, under sanitizers) must not close the connection as too slow.
  options.max_queued_frames = 100000;
  StartServer(options);
  CreateShard("a");
  // A small receive buffer: 20,000 PONGs (4 bytes each at least, with the
  // WebSocket header) cannot all fit in the two socket buffers (8 KiB and
  // 4 KiB asked for), so however fast or slowly the flood is sent, some
  // must be coalesced.
  ClientOptions flooder_options = ClientOpts();
  flooder_options.receive_buffer_bytes = 4096;
  auto connected = TestClient::Connect(flooder_options, "a");
  ASSERT_TRUE(connected.ok()) << connected.status().ToString();
  auto& flooder = *connected;
  auto welcome = flooder->Join(Ticket("a", "mallory"));
  ASSERT_TRUE(welcome.ok()) << welcome.status().ToString();
  // The flooder reads nothing meanwhile: once the socket buffers are full,
  // the server keeps only the PONG of the latest PING.
  constexpr uint64_t kPings = 20'000;
  for (uint64_t nonce = 1; nonce <= kPings; ++nonce) {
    ASSERT_TRUE(flooder->SendPing(nonce).ok()) << nonce;
  }
  uint64_t pongs = 0;
  uint64_t last_nonce = 0;
  while (last_nonce != kPings) {
    auto pong = flooder->ReadUntil<v1::Pong>(15'000);
    ASSERT_TRUE(pong.ok()) << pong.status().ToString() << " after " << pongs;
    EXPECT_GT(pong->nonce, last_nonce);
    last_nonce = pong->nonce;
    ++pongs;
  }
  EXPECT_LT(pongs, kPings);
  ExpectFrames(*flooder, 2);  // still connected
}

}  // namespace
}  // namespace server_test
}  // namespace tessera::net
