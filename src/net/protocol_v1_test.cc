// Wire protocol v1 (docs/protocol.md): round trips, the exact bytes of the
// spec's tables (checked with nlohmann::json's MessagePack as an
// independent implementation), and every decode error.
#include "net/protocol_v1.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <random>
#include <vector>

namespace tessera::net::v1 {
namespace {

using nlohmann::json;

// Exact-size heap copies, so ASan flags any read past the end.
std::vector<uint8_t> Bytes(std::string_view s) {
  return std::vector<uint8_t>(s.begin(), s.end());
}

std::string Pack(const json& j) {
  std::vector<uint8_t> v = json::to_msgpack(j);
  return std::string(v.begin(), v.end());
}

json Unpack(const std::string& s) { return json::from_msgpack(Bytes(s)); }

json Bin(std::string_view s) {
  return json::binary(std::vector<uint8_t>(s.begin(), s.end()));
}

std::string ClientError(std::string_view bytes) {
  std::vector<uint8_t> copy = Bytes(bytes);
  auto r = DecodeClientMessage(copy);
  if (r.ok()) return "ok";
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  return r.status().message();
}

std::string ServerError(std::string_view bytes) {
  std::vector<uint8_t> copy = Bytes(bytes);
  auto r = DecodeServerMessage(copy);
  return r.ok() ? "ok" : r.status().message();
}

// ---- Round trips ---------------------------------------------------------

TEST(ProtocolV1, HelloRoundTrip) {
  const std::string bytes = EncodeHello("v1.abc.def");
  EXPECT_EQ(Unpack(bytes), json::parse(R"([1, 1, "v1.abc.def"])"));
  std::vector<uint8_t> copy = Bytes(bytes);
  auto m = DecodeClientMessage(copy);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const Hello& hello = std::get<Hello>(*m);
  EXPECT_EQ(hello.version, 1u);
  EXPECT_EQ(hello.ticket, "v1.abc.def");
  // Other versions decode; refusing them (4009) is the server's job.
  copy = Bytes(EncodeHello("t", 7));
  EXPECT_EQ(std::get<Hello>(DecodeClientMessage(copy).value()).version, 7u);
}

TEST(ProtocolV1, InputRoundTrip) {
  const std::string payload("\x00\x01\xc1\xff", 4);
  std::string bytes = EncodeInput(42, payload, 1000);
  json expected = json::array({2, 42, Bin(payload), 1000});
  EXPECT_EQ(Unpack(bytes), expected);
  std::vector<uint8_t> copy = Bytes(bytes);
  auto m = DecodeClientMessage(copy);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const Input& input = std::get<Input>(*m);
  EXPECT_EQ(input.seq, 42u);
  EXPECT_EQ(input.payload, payload);
  EXPECT_EQ(input.view_tick, 1000.0);

  bytes = EncodeInput(uint64_t{1} << 53, std::string(70000, 'p'));
  EXPECT_EQ(Unpack(bytes)[3], nullptr);
  copy = Bytes(bytes);
  m = DecodeClientMessage(copy);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(std::get<Input>(*m).seq, uint64_t{1} << 53);
  EXPECT_EQ(std::get<Input>(*m).payload.size(), 70000u);
  EXPECT_FALSE(std::get<Input>(*m).view_tick.has_value());

  // view_tick absent.
  copy = Bytes(Pack(json::array({2, 3, Bin("x")})));
  m = DecodeClientMessage(copy);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_FALSE(std::get<Input>(*m).view_tick.has_value());
}

// The view tick the client drew: integral values go out as integers (as
// before fractions were allowed), others as float64.
TEST(ProtocolV1, InputViewTickIsANumber) {
  std::string bytes = EncodeInput(1, "p", 12.25);
  ASSERT_EQ(bytes.size(), 15u);
  EXPECT_EQ(static_cast<uint8_t>(bytes[6]), 0xcb);  // float64
  EXPECT_EQ(Unpack(bytes), json::array({2, 1, Bin("p"), 12.25}));
  std::vector<uint8_t> copy = Bytes(bytes);
  auto m = DecodeClientMessage(copy);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(std::get<Input>(*m).view_tick, 12.25);

  // Integral: an unsigned integer, also at the top of the range.
  EXPECT_EQ(Unpack(EncodeInput(1, "p", 7.0))[3], 7);
  const double top = static_cast<double>(kMaxViewTick);
  bytes = EncodeInput(1, "p", top);
  EXPECT_EQ(Unpack(bytes)[3], kMaxViewTick);
  copy = Bytes(bytes);
  EXPECT_EQ(std::get<Input>(DecodeClientMessage(copy).value()).view_tick, top);
  // 0 and a fraction just above it.
  EXPECT_EQ(Unpack(EncodeInput(1, "p", 0.0))[3], 0);
  copy = Bytes(EncodeInput(1, "p", 1e-9));
  EXPECT_EQ(std::get<Input>(DecodeClientMessage(copy).value()).view_tick, 1e-9);

  // What other encoders send: float32, a float64 that is integral, -0.0.
  // [2, 1, bin "p", 2.5 as float32]
  copy = Bytes(std::string("\x94\x02\x01\xc4\x01p\xca\x40\x20\x00\x00", 11));
  m = DecodeClientMessage(copy);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(std::get<Input>(*m).view_tick, 2.5);
  copy = Bytes(Pack(json::array({2, 1, Bin("p"), 40.0})));
  EXPECT_EQ(std::get<Input>(DecodeClientMessage(copy).value()).view_tick, 40.0);
  copy = Bytes(Pack(json::array({2, 1, Bin("p"), -0.0})));
  m = DecodeClientMessage(copy);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_TRUE(std::get<Input>(*m).view_tick.has_value());
  EXPECT_FALSE(std::signbit(*std::get<Input>(*m).view_tick));
}

TEST(ProtocolV1, PingPongRoundTripBothDirections) {
  for (uint64_t nonce : {uint64_t{0}, uint64_t{77}, ~uint64_t{0}}) {
    std::vector<uint8_t> ping = Bytes(EncodePing(nonce));
    std::vector<uint8_t> pong = Bytes(EncodePong(nonce));
    EXPECT_EQ(json::from_msgpack(ping), json::array({3, nonce}));
    EXPECT_EQ(json::from_msgpack(pong), json::array({4, nonce}));
    EXPECT_EQ(std::get<Ping>(DecodeClientMessage(ping).value()).nonce, nonce);
    EXPECT_EQ(std::get<Pong>(DecodeClientMessage(pong).value()).nonce, nonce);
    EXPECT_EQ(std::get<Ping>(DecodeServerMessage(ping).value()).nonce, nonce);
    EXPECT_EQ(std::get<Pong>(DecodeServerMessage(pong).value()).nonce, nonce);
  }
}

TEST(ProtocolV1, WelcomeRoundTrip) {
  const std::string bytes = EncodeWelcome("arena-1", "alice", 20, "msgpack", 9);
  EXPECT_EQ(Unpack(bytes),
            json::parse(R"([16, "arena-1", "alice", 20, "msgpack", 9])"));
  std::vector<uint8_t> copy = Bytes(bytes);
  auto m = DecodeServerMessage(copy);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const Welcome& w = std::get<Welcome>(*m);
  EXPECT_EQ(w.shard_id, "arena-1");
  EXPECT_EQ(w.subscriber_id, "alice");
  EXPECT_EQ(w.tick_rate, 20u);
  EXPECT_EQ(w.codec, "msgpack");
  EXPECT_EQ(w.tick, 9u);
}

TEST(ProtocolV1, HelloAndWelcomeFlags) {
  const std::string hello = EncodeHello("t", kVersion, kHelloFrameAcks);
  EXPECT_EQ(Unpack(hello), json::parse(R"([1, 1, "t", 1])"));
  std::vector<uint8_t> copy = Bytes(hello);
  auto h = DecodeClientMessage(copy);
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_EQ(std::get<Hello>(*h).flags, kHelloFrameAcks);
  // Absent or nil: 0; unknown bits are kept for the caller to ignore.
  copy = Bytes(EncodeHello("t"));
  EXPECT_EQ(std::get<Hello>(DecodeClientMessage(copy).value()).flags, 0u);
  copy = json::to_msgpack(json::parse(R"([1, 1, "t", null])"));
  EXPECT_EQ(std::get<Hello>(DecodeClientMessage(copy).value()).flags, 0u);
  copy = json::to_msgpack(json::parse(R"([1, 1, "t", 6])"));
  EXPECT_EQ(std::get<Hello>(DecodeClientMessage(copy).value()).flags, 6u);
  copy = json::to_msgpack(json::parse(R"([1, 1, "t", "x"])"));
  EXPECT_FALSE(DecodeClientMessage(copy).ok());
  copy = json::to_msgpack(json::parse(R"([1, 1, "t", -1])"));
  EXPECT_FALSE(DecodeClientMessage(copy).ok());

  const std::string welcome =
      EncodeWelcome("a", "b", 20, "json", 3, kHelloFrameAcks);
  EXPECT_EQ(Unpack(welcome),
            json::parse(R"([16, "a", "b", 20, "json", 3, 1])"));
  copy = Bytes(welcome);
  EXPECT_EQ(std::get<Welcome>(DecodeServerMessage(copy).value()).flags,
            kHelloFrameAcks);
}

TEST(ProtocolV1, AckRejectRoundTrip) {
  std::vector<uint8_t> ack = Bytes(EncodeAck(5));
  EXPECT_EQ(json::from_msgpack(ack), json::array({17, 5}));
  EXPECT_EQ(std::get<Ack>(DecodeServerMessage(ack).value()).seq, 5u);
  std::vector<uint8_t> reject = Bytes(EncodeReject(6, "outside the arena"));
  EXPECT_EQ(json::from_msgpack(reject),
            json::parse(R"([18, 6, "outside the arena"])"));
  auto m = DecodeServerMessage(reject);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(std::get<Reject>(*m).seq, 6u);
  EXPECT_EQ(std::get<Reject>(*m).error, "outside the arena");
}

TEST(ProtocolV1, TransferRoundTrip) {
  std::vector<uint8_t> bytes = Bytes(EncodeTransfer("zone-2", "v1.abc.def"));
  EXPECT_EQ(json::from_msgpack(bytes),
            json::parse(R"([20, "zone-2", "v1.abc.def"])"));
  auto m = DecodeServerMessage(bytes);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const Transfer& t = std::get<Transfer>(*m);
  EXPECT_EQ(t.shard_id, "zone-2");
  EXPECT_EQ(t.ticket, "v1.abc.def");
  // A server message only.
  EXPECT_EQ(ClientError(EncodeTransfer("zone-2", "t")),
            "unknown message type 20");
}

TEST(ProtocolV1, NotifyRoundTrip) {
  const std::string payload("{\"rain\":1}\x00\xff", 12);
  std::vector<uint8_t> bytes =
      Bytes(EncodeNotify("world-sim", "kind:zone", payload, "f-12ab"));
  EXPECT_EQ(
      json::from_msgpack(bytes),
      json::array({21, "world-sim", "kind:zone", Bin(payload), "f-12ab"}));
  auto m = DecodeServerMessage(bytes);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const Notify& n = std::get<Notify>(*m);
  EXPECT_EQ(n.module, "world-sim");
  EXPECT_EQ(n.channel, "kind:zone");
  EXPECT_EQ(n.payload, payload);
  EXPECT_EQ(n.flow_id, "f-12ab");
  // An empty payload is a zero-length bin.
  bytes = Bytes(EncodeNotify("m", "spatial:zone-1", "", ""));
  EXPECT_EQ(json::from_msgpack(bytes),
            json::array({21, "m", "spatial:zone-1", Bin(""), ""}));
  // A server message only.
  EXPECT_EQ(ClientError(EncodeNotify("m", "all", "p", "f")),
            "unknown message type 21");
}

TEST(ProtocolV1, NotifyErrors) {
  EXPECT_EQ(ServerError(Pack(json::array({21, "m", "all", Bin("p")}))),
            "NOTIFY needs 5 elements, got 4");
  EXPECT_EQ(ServerError(Pack(json::array({21, 7, "all", Bin("p"), "f"}))),
            "NOTIFY module must be a string");
  EXPECT_EQ(ServerError(Pack(json::array({21, "m", nullptr, Bin("p"), "f"}))),
            "NOTIFY channel must be a string");
  // The payload is bin, never str.
  EXPECT_EQ(ServerError(Pack(json::array({21, "m", "all", "p", "f"}))),
            "NOTIFY payload must be binary (bin)");
  EXPECT_EQ(ServerError(Pack(json::array({21, "m", "all", Bin("p"), 3}))),
            "NOTIFY flow_id must be a string");
  // Extension elements are skipped.
  auto m = DecodeServerMessage(
      Bytes(Pack(json::array({21, "m", "all", Bin("p"), "f", 9}))));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(std::get<Notify>(*m).flow_id, "f");
}

TEST(ProtocolV1, FrameHeaderPlusSharedSnapshotIsACompleteFrame) {
  for (size_t size : {0, 1, 255, 256, 65535, 65536, 1 << 20}) {
    SCOPED_TRACE(size);
    const std::string snapshot(size, '\x5a');
    for (uint64_t last_seq : {uint64_t{0}, uint64_t{3}, uint64_t{1} << 40}) {
      const std::string bytes =
          EncodeFrameHeader(1234, last_seq, snapshot.size()) + snapshot;
      EXPECT_EQ(Unpack(bytes),
                json::array({19, 1234, last_seq, Bin(snapshot)}));
      std::vector<uint8_t> copy = Bytes(bytes);
      auto m = DecodeServerMessage(copy);
      ASSERT_TRUE(m.ok()) << m.status().ToString();
      const Frame& f = std::get<Frame>(*m);
      EXPECT_EQ(f.tick, 1234u);
      EXPECT_EQ(f.last_seq, last_seq);
      EXPECT_EQ(f.snapshot, snapshot);
    }
  }
}

// ---- What other encoders may send ---------------------------------------

TEST(ProtocolV1, AcceptsAnyIntegerWidth) {
  // [2, seq=5 as uint64, bin "x", view_tick=9 as int16], type as uint16.
  const std::string bytes(
      "\x94\xcd\x00\x02\xcf\x00\x00\x00\x00\x00\x00\x00\x05\xc4\x01x"
      "\xd1\x00\x09",
      19);
  std::vector<uint8_t> copy = Bytes(bytes);
  auto m = DecodeClientMessage(copy);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(std::get<Input>(*m).seq, 5u);
  EXPECT_EQ(std::get<Input>(*m).view_tick, 9.0);
  // array16 header for a 2-element PING.
  EXPECT_EQ(ClientError(std::string("\xdc\x00\x02\x03\x07", 5)), "ok");
}

TEST(ProtocolV1, ReplicationFrameHasEntitiesAndAnOptionalSnapshot) {
  std::string with =
      EncodeViewFrameHeader(7, 3, 4) + "snap" + EncodeBinHeader(2) + "\x01\x02";
  std::vector<uint8_t> bytes = Bytes(with);
  auto m = DecodeServerMessage(bytes);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const auto& f = std::get<Frame>(*m);
  EXPECT_EQ(f.tick, 7u);
  EXPECT_EQ(f.last_seq, 3u);
  EXPECT_EQ(f.snapshot, "snap");
  EXPECT_FALSE(f.snapshot_nil);
  ASSERT_TRUE(f.entities.has_value());
  EXPECT_EQ(*f.entities, "\x01\x02");

  std::string nil =
      EncodeViewFrameHeader(8, 3, std::nullopt) + EncodeBinHeader(0);
  bytes = Bytes(nil);
  m = DecodeServerMessage(bytes);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_TRUE(std::get<Frame>(*m).snapshot_nil);
  EXPECT_EQ(std::get<Frame>(*m).entities, std::string());
  // A broadcast FRAME has no entities.
  std::string plain = EncodeFrameHeader(1, 0, 1) + "s";
  bytes = Bytes(plain);
  m = DecodeServerMessage(bytes);
  ASSERT_TRUE(m.ok());
  EXPECT_FALSE(std::get<Frame>(*m).entities.has_value());
}

TEST(ProtocolV1, ToleratesExtraTrailingElements) {
  json extra = json::parse(R"(["ext", [1, {"a": null}], 2.5])");
  json hello = json::parse(R"([1, 1, "t", 0])");  // extras after the flags
  hello.insert(hello.end(), extra.begin(), extra.end());
  EXPECT_EQ(ClientError(Pack(hello)), "ok");
  json input = json::array({2, 1, Bin("p"), nullptr, "more"});
  EXPECT_EQ(ClientError(Pack(input)), "ok");
  json frame = json::array({19, 1, 0, Bin("s"), Bin("e"), json::object()});
  EXPECT_EQ(ServerError(Pack(frame)), "ok");
  json welcome = json::parse(R"([16, "s", "u", 20, "json", 0, 1, true])");
  EXPECT_EQ(ServerError(Pack(welcome)), "ok");
  json transfer = json::parse(R"([20, "b", "t", {"later": 1}])");
  EXPECT_EQ(ServerError(Pack(transfer)), "ok");
}

// ---- Decode errors ---------------------------------------------------------

TEST(ProtocolV1, EnvelopeErrors) {
  EXPECT_EQ(ClientError(""), "empty message");
  EXPECT_EQ(ClientError("\x01"), "message is not a MessagePack array");
  EXPECT_EQ(ClientError(Pack(json::object({{"t", 1}}))),
            "message is not a MessagePack array");
  EXPECT_EQ(ClientError(Pack("hello")), "message is not a MessagePack array");
  EXPECT_EQ(ClientError("\x90"), "message array is empty");
  EXPECT_EQ(ClientError(Pack(json::array({9}))), "unknown message type 9");
  EXPECT_EQ(ClientError(Pack(json::array({0}))), "unknown message type 0");
  EXPECT_EQ(ClientError(Pack(json::array({16, "s"}))),
            "unknown message type 16");  // a server message
  EXPECT_EQ(ServerError(Pack(json::array({1, 1, "t"}))),
            "unknown message type 1");  // a client message
  EXPECT_EQ(ClientError(Pack(json::array({-1}))),
            "message type must be a positive integer");
  EXPECT_EQ(ClientError(Pack(json::array({"2"}))),
            "message type must be a positive integer");
  EXPECT_EQ(ClientError("\xc1"), "invalid MessagePack byte 0xc1 at byte 0");
  EXPECT_EQ(ClientError(EncodePing(1) + "x"),
            "trailing bytes after the message");
  EXPECT_EQ(ServerError(EncodeAck(1) + std::string(1, '\0')),
            "trailing bytes after the message");
  EXPECT_EQ(ClientError("\x93\x01\x01"),
            "truncated MessagePack data: array of 3 elements at byte 0 with 2 "
            "bytes left");
}

TEST(ProtocolV1, ClientElementErrors) {
  EXPECT_EQ(ClientError(Pack(json::array({1, 1}))),
            "HELLO needs 3 elements, got 2");
  EXPECT_EQ(ClientError(Pack(json::parse(R"([1, "1", "t"])"))),
            "HELLO version must be an unsigned integer");
  EXPECT_EQ(ClientError(Pack(json::array({1, 1, 5}))),
            "HELLO ticket must be a string");
  EXPECT_EQ(ClientError(Pack(json::array({1, 1, Bin("t")}))),
            "HELLO ticket must be a string");
  EXPECT_EQ(ClientError(Pack(json::array({2, 1}))),
            "INPUT needs 3 elements, got 2");
  EXPECT_EQ(ClientError(Pack(json::array({2, "a", Bin("p")}))),
            "INPUT seq must be an unsigned integer");
  EXPECT_EQ(ClientError(Pack(json::array({2, -1, Bin("p")}))),
            "INPUT seq must be an unsigned integer");
  EXPECT_EQ(ClientError(Pack(json::array({2, 1.0, Bin("p")}))),
            "INPUT seq must be an unsigned integer");
  EXPECT_EQ(ClientError(Pack(json::array({2, 0, Bin("p")}))),
            "INPUT seq must be between 1 and 2^53");
  EXPECT_EQ(
      ClientError(Pack(json::array({2, (uint64_t{1} << 53) + 1, Bin("p")}))),
      "INPUT seq must be between 1 and 2^53");
  EXPECT_EQ(ClientError(Pack(json::array({2, 1, "p"}))),
            "INPUT payload must be binary (bin)");
  EXPECT_EQ(ClientError(Pack(json::array({2, 1, Bin("p"), "x"}))),
            "INPUT view_tick must be a number or nil");
  EXPECT_EQ(ClientError(Pack(json::array({2, 1, Bin("p"), true}))),
            "INPUT view_tick must be a number or nil");
  constexpr char kViewRange[] =
      "INPUT view_tick must be a finite number between 0 and 2^53 or nil";
  EXPECT_EQ(ClientError(Pack(json::array({2, 1, Bin("p"), -4}))), kViewRange);
  EXPECT_EQ(ClientError(Pack(json::array({2, 1, Bin("p"), -0.5}))), kViewRange);
  EXPECT_EQ(ClientError(Pack(json::array({2, 1, Bin("p"), kMaxViewTick + 1}))),
            kViewRange);
  // 2^53 + 2 is a double; a little more than the largest view tick.
  EXPECT_EQ(ClientError(Pack(json::array(
                {2, 1, Bin("p"), static_cast<double>(kMaxViewTick) + 2}))),
            kViewRange);
  EXPECT_EQ(ClientError(Pack(json::array({2, 1, Bin("p"), ~uint64_t{0}}))),
            kViewRange);
  // NaN and the infinities, as float64 and float32 (nlohmann cannot pack
  // them into JSON values, so the bytes are written out).
  const std::string head("\x94\x02\x01\xc4\x01p", 6);
  for (const std::string& tail : {
           std::string("\xcb\x7f\xf8\0\0\0\0\0\0", 9),  // NaN
           std::string("\xcb\x7f\xf0\0\0\0\0\0\0", 9),  // +inf
           std::string("\xcb\xff\xf0\0\0\0\0\0\0", 9),  // -inf
           std::string("\xca\x7f\xc0\0\0", 5),          // NaN
           std::string("\xca\x7f\x80\0\0", 5),          // +inf
       }) {
    EXPECT_EQ(ClientError(head + tail), kViewRange) << Unpack(head + tail);
  }
  EXPECT_EQ(ClientError(Pack(json::array({3}))),
            "PING needs 2 elements, got 1");
  EXPECT_EQ(ClientError(Pack(json::array({3, 1.5}))),
            "PING nonce must be an unsigned integer");
  EXPECT_EQ(ClientError(Pack(json::array({4, nullptr}))),
            "PONG nonce must be an unsigned integer");
}

TEST(ProtocolV1, ServerElementErrors) {
  EXPECT_EQ(ServerError(Pack(json::parse(R"([16, "s", "u", 20, "json"])"))),
            "WELCOME needs 6 elements, got 5");
  EXPECT_EQ(ServerError(Pack(json::parse(R"([16, 1, "u", 20, "json", 0])"))),
            "WELCOME shard_id must be a string");
  EXPECT_EQ(ServerError(Pack(json::parse(R"([16, "s", "u", -1, "json", 0])"))),
            "WELCOME tick_rate must be an unsigned integer");
  EXPECT_EQ(ServerError(
                Pack(json::parse(R"([16, "s", "u", 4294967296, "json", 0])"))),
            "WELCOME tick_rate out of range");
  EXPECT_EQ(ServerError(Pack(json::parse(R"([16, "s", "u", 2, null, 0])"))),
            "WELCOME codec must be a string");
  EXPECT_EQ(ServerError(Pack(json::array({17}))),
            "ACK needs 2 elements, got 1");
  EXPECT_EQ(ServerError(Pack(json::array({18, 1, 2}))),
            "REJECT error must be a string");
  EXPECT_EQ(ServerError(Pack(json::array({19, 1, 2, "s"}))),
            "FRAME snapshot must be binary (bin) or nil");
  EXPECT_EQ(ServerError(Pack(json::array({19, 1, 2, nullptr, 5}))),
            "FRAME entities must be binary (bin)");
  EXPECT_EQ(ServerError(Pack(json::array({19, 1, "2", Bin("s")}))),
            "FRAME last_seq must be an unsigned integer");
  EXPECT_EQ(ServerError(Pack(json::array({20, "b"}))),
            "TRANSFER needs 3 elements, got 2");
  EXPECT_EQ(ServerError(Pack(json::array({20, 2, "t"}))),
            "TRANSFER shard_id must be a string");
  EXPECT_EQ(ServerError(Pack(json::array({20, "b", Bin("t")}))),
            "TRANSFER ticket must be a string");
}

// ---- Truncated and garbage input -------------------------------------------

std::vector<std::string> ValidClientMessages() {
  return {EncodeHello("v1.payload.signature"),
          EncodeInput(1, "payload", 3),
          EncodeInput(2, "payload", 3.75),
          EncodeInput(9, std::string(300, 'x')),
          EncodePing(123456789),
          EncodePong(0),
          Pack(json::array({2, 7, Bin("p"), nullptr, json::array({1, 2})}))};
}

std::vector<std::string> ValidServerMessages() {
  return {EncodeWelcome("shard", "sub", 30, "json", 1 << 20),
          EncodeAck(1),
          EncodeReject(2, "nope"),
          EncodeFrameHeader(5, 6, 3) + "abc",
          EncodeFrameHeader(5, 6, 70000) + std::string(70000, 'z'),
          EncodePing(1),
          EncodePong(2),
          EncodeTransfer("zone-2", "v1.payload.signature"),
          EncodeNotify("world-sim", "group:north", "{\"t\":1}", "f-1")};
}

TEST(ProtocolV1, EveryTruncationIsAnError) {
  for (const std::string& m : ValidClientMessages()) {
    ASSERT_EQ(ClientError(m), "ok");
    for (size_t cut = 0; cut < m.size(); ++cut) {
      EXPECT_NE(ClientError(m.substr(0, cut)), "ok") << "cut at " << cut;
    }
  }
  std::mt19937 rng(1);
  for (const std::string& m : ValidServerMessages()) {
    ASSERT_EQ(ServerError(m), "ok");
    for (int i = 0; i < 300; ++i) {
      const size_t cut =
          i < 64 ? std::min<size_t>(i, m.size() - 1) : rng() % m.size();
      EXPECT_NE(ServerError(m.substr(0, cut)), "ok") << "cut at " << cut;
    }
  }
}

TEST(ProtocolV1, RandomMutationsNeverCrash) {
  std::mt19937 rng(3);
  std::vector<std::string> seeds = ValidClientMessages();
  for (const std::string& m : ValidServerMessages()) {
    if (m.size() < 1000) seeds.push_back(m);
  }
  for (int i = 0; i < 20000; ++i) {
    std::string m = seeds[rng() % seeds.size()];
    const int flips = 1 + rng() % 4;
    for (int f = 0; f < flips; ++f)
      m[rng() % m.size()] = static_cast<char>(rng());
    std::vector<uint8_t> copy = Bytes(m);
    (void)DecodeClientMessage(copy);
    (void)DecodeServerMessage(copy);
  }
}

}  // namespace
}  // namespace tessera::net::v1
