// The realm protocol's messages (wire.h): exact bytes of the encoders, the
// round trip of every message, the wider forms and trailing elements a
// decoder accepts, and a refusal with a short reason for each malformed
// form.
#include "realm/wire.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "realm/patch.h"
#include "realm/patch_testing.h"

namespace tessera::realm::wire {
namespace {

using patch_testing::Bytes;
using patch_testing::SetOp;

std::string H(std::string_view hex) { return patch_testing::FromHex(hex); }

std::string_view View(std::span<const uint8_t> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

constexpr size_t kMaxCloseReason = 123;  // WebSocket close frame payload

// Expects both decoders to refuse `bytes` as kInvalidArgument with a reason
// fit for a close frame; returns the client decoder's reason (or the
// server's, with `server`).
std::string Refused(const std::string& bytes, bool server = false) {
  std::string reason;
  if (server) {
    Result<ServerMessage> msg = DecodeServerMessage(Bytes(bytes));
    EXPECT_FALSE(msg.ok());
    reason = msg.status().message();
    EXPECT_EQ(msg.status().code(), StatusCode::kInvalidArgument);
  } else {
    Result<ClientMessage> msg = DecodeClientMessage(Bytes(bytes));
    EXPECT_FALSE(msg.ok());
    reason = msg.status().message();
    EXPECT_EQ(msg.status().code(), StatusCode::kInvalidArgument);
  }
  EXPECT_FALSE(reason.empty());
  EXPECT_LE(reason.size(), kMaxCloseReason) << reason;
  return reason;
}

template <typename T>
T Client(const std::string& bytes) {
  Result<ClientMessage> msg = DecodeClientMessage(Bytes(bytes));
  EXPECT_TRUE(msg.ok()) << msg.status().ToString();
  if (!msg.ok() || !std::holds_alternative<T>(*msg)) {
    ADD_FAILURE() << "decoded as another message";
    return T{};
  }
  return std::get<T>(*msg);
}

template <typename T>
T Server(const std::string& bytes) {
  Result<ServerMessage> msg = DecodeServerMessage(Bytes(bytes));
  EXPECT_TRUE(msg.ok()) << msg.status().ToString();
  if (!msg.ok() || !std::holds_alternative<T>(*msg)) {
    ADD_FAILURE() << "decoded as another message";
    return T{};
  }
  return std::get<T>(*msg);
}

const Json kLimits = {{"maxFrameBytes", 65536},
                      {"maxPatchesPerFrame", 64},
                      {"writeRateBurst", 200},
                      {"offset", -70000}};

TEST(RealmWire, ExactBytes) {
  EXPECT_EQ(EncodePing(5), H("92 03 05"));
  EXPECT_EQ(EncodePong(0), H("92 04 00"));
  EXPECT_EQ(EncodeHello("t", 0, 0), H("95 01 01 a1 74 00 00"));
  EXPECT_EQ(EncodeWrite(300, ""), H("93 02 cd 01 2c c4 00"));
  EXPECT_EQ(EncodeAck(kMaxInteger, 70000),
            H("93 13 cf 00 20 00 00 00 00 00 00 ce 00 01 11 70"));
  EXPECT_EQ(EncodeHydrate(1, 2, "ann", Json{{"b", -1}, {"a", 1}}, "\x90"),
            H("96 10 01 02 a3 61 6e 6e 82 a1 61 01 a1 62 ff c4 01 90"));
  EXPECT_EQ(EncodeResume(3, 4, 200, "", Json::object()),
            H("96 11 03 04 cc c8 a0 80"));
  EXPECT_EQ(EncodeCommit(5, "\x90", 9), H("94 12 05 c4 01 90 09"));
  EXPECT_EQ(EncodeCommit(5, "\x90"), H("93 12 05 c4 01 90"));
  EXPECT_EQ(EncodeReject(1, "invalid_patch", "x"),
            H("94 14 01 ad 69 6e 76 61 6c 69 64 5f 70 61 74 63 68 a1 78"));
}

TEST(RealmWire, ShortestForms) {
  // The integer after [19, ...] in ACK.
  const std::vector<std::pair<uint64_t, std::string>> ints = {
      {127, "7f"},
      {128, "cc 80"},
      {255, "cc ff"},
      {256, "cd 01 00"},
      {65535, "cd ff ff"},
      {65536, "ce 00 01 00 00"},
      {0xffffffff, "ce ff ff ff ff"},
      {uint64_t{1} << 32, "cf 00 00 00 01 00 00 00 00"}};
  for (const auto& [v, hex] : ints) {
    EXPECT_EQ(EncodeAck(v, 0), H("93 13") + H(hex) + H("00")) << v;
  }
  // str and bin headers at each width's edges.
  const std::vector<std::pair<size_t, std::string>> strs = {
      {31, "bf"},        {32, "d9 20"},       {255, "d9 ff"},
      {256, "da 01 00"}, {65535, "da ff ff"}, {65536, "db 00 01 00 00"}};
  for (const auto& [n, hex] : strs) {
    EXPECT_EQ(EncodeHello(std::string(n, 'x'), 0, 0),
              H("95 01 01") + H(hex) + std::string(n, 'x') + H("00 00"))
        << n;
  }
  const std::vector<std::pair<size_t, std::string>> bins = {
      {0, "c4 00"},
      {255, "c4 ff"},
      {256, "c5 01 00"},
      {65535, "c5 ff ff"},
      {65536, "c6 00 01 00 00"}};
  for (const auto& [n, hex] : bins) {
    EXPECT_EQ(EncodeWrite(1, std::string(n, 'p')),
              H("93 02 01") + H(hex) + std::string(n, 'p'))
        << n;
  }
  // Limits: a map16 past 15 entries.
  Json many = Json::object();
  for (int k = 0; k < 16; ++k)
    many["k" + std::to_string(k / 10) + std::to_string(k % 10)] = k;
  const std::string resume = EncodeResume(0, 0, 0, "", many);
  EXPECT_EQ(resume.substr(0, 9), H("96 11 00 00 00 a0 de 00 10"));
}

TEST(RealmWire, ClientMessagesRoundTrip) {
  const std::string ticket = "tk.\xc3\xa9\xe2\x82\xac.sig";  // é, €
  // Client messages are views into the decoded buffer: keep it alive.
  const std::string hello_bytes =
      EncodeHello(ticket, kMaxInteger, kMaxInteger - 1, 7);
  const Hello hello = Client<Hello>(hello_bytes);
  EXPECT_EQ(hello.protocol, 7u);
  EXPECT_EQ(hello.ticket, ticket);
  EXPECT_EQ(hello.epoch, kMaxInteger);
  EXPECT_EQ(hello.version, kMaxInteger - 1);
  EXPECT_EQ(Client<Hello>(EncodeHello("", 0, 0)).protocol, kProtocol);

  // A real patch travels untouched and decodes on the far side.
  const Patch patch = {SetOp({"players", "p-1"}, Json{{"x", 1.5}}),
                       SetOp({"round"}, 3)};
  KeyTable enc;
  const std::string encoded = EncodePatch(patch, &enc);
  const std::string write_bytes = EncodeWrite(kMaxInteger, encoded);
  const Write write = Client<Write>(write_bytes);
  EXPECT_EQ(write.seq, kMaxInteger);
  EXPECT_EQ(View(write.patch), encoded);
  KeyTable dec;
  Result<Patch> back = DecodePatch(write.patch, &dec);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, patch);
  // The view points into the decoded buffer.
  EXPECT_EQ(write.patch.data(),
            Bytes(write_bytes).data() + write_bytes.size() - encoded.size());

  const std::string big(70000, '\x90');
  const std::string big_bytes = EncodeWrite(0, big);
  EXPECT_EQ(View(Client<Write>(big_bytes).patch), big);
  EXPECT_TRUE(Client<Write>(EncodeWrite(0, "")).patch.empty());
  EXPECT_EQ(Client<Ping>(EncodePing(kMaxInteger)).nonce, kMaxInteger);
  EXPECT_EQ(Client<Pong>(EncodePong(42)).nonce, 42u);
}

TEST(RealmWire, ServerMessagesRoundTrip) {
  const Hydrate hydrate =
      Server<Hydrate>(EncodeHydrate(2, kMaxInteger, "ann", kLimits, "\x90"));
  EXPECT_EQ(hydrate.epoch, 2u);
  EXPECT_EQ(hydrate.version, kMaxInteger);
  EXPECT_EQ(hydrate.avatar, "ann");
  EXPECT_EQ(hydrate.limits, kLimits);
  EXPECT_EQ(hydrate.state, "\x90");

  const Resume resume =
      Server<Resume>(EncodeResume(9, 10, 300, "b\xc3\xa9", Json::object()));
  EXPECT_EQ(resume.epoch, 9u);
  EXPECT_EQ(resume.from, 10u);
  EXPECT_EQ(resume.head, 300u);
  EXPECT_EQ(resume.avatar, "b\xc3\xa9");
  EXPECT_EQ(resume.limits, Json::object());

  const Commit plain = Server<Commit>(EncodeCommit(11, std::string(300, 'x')));
  EXPECT_EQ(plain.version, 11u);
  EXPECT_EQ(plain.patch, std::string(300, 'x'));
  EXPECT_FALSE(plain.seq.has_value());
  const Commit sliced = Server<Commit>(EncodeCommit(12, "", kMaxInteger));
  EXPECT_EQ(sliced.seq, kMaxInteger);

  const Ack ack = Server<Ack>(EncodeAck(4, 5));
  EXPECT_EQ(ack.seq, 4u);
  EXPECT_EQ(ack.version, 5u);
  const Reject reject =
      Server<Reject>(EncodeReject(6, "permission_denied", "no \"a\" for you"));
  EXPECT_EQ(reject.seq, 6u);
  EXPECT_EQ(reject.code, "permission_denied");
  EXPECT_EQ(reject.message, "no \"a\" for you");
  EXPECT_EQ(Server<Ping>(EncodePing(1)).nonce, 1u);
  EXPECT_EQ(Server<Pong>(EncodePong(2)).nonce, 2u);
}

TEST(RealmWire, WiderFormsAreReadByValue) {
  // WRITE as array16, type as int64, seq as uint64, patch as bin32.
  const std::string write_bytes =
      H("dc 00 03 d3 00 00 00 00 00 00 00 02 cf 00 00 00 00 00 00 00 07 "
        "c6 00 00 00 01 90");
  const Write write = Client<Write>(write_bytes);
  EXPECT_EQ(write.seq, 7u);
  EXPECT_EQ(View(write.patch), "\x90");
  // HELLO: protocol as int8, ticket as str32, epoch as uint16, version as
  // int32.
  const std::string hello_bytes =
      H("dd 00 00 00 05 01 d0 01 db 00 00 00 01 74 cd 00 05 d2 00 00 00 06");
  const Hello hello = Client<Hello>(hello_bytes);
  EXPECT_EQ(hello.protocol, 1u);
  EXPECT_EQ(hello.ticket, "t");
  EXPECT_EQ(hello.epoch, 5u);
  EXPECT_EQ(hello.version, 6u);
  // Limits with str8 keys and wide integers.
  const Resume resume = Server<Resume>(
      H("96 11 00 00 00 a0 81 d9 01 61 d3 ff ff ff ff ff ff ff fe"));
  EXPECT_EQ(resume.limits, (Json{{"a", -2}}));
}

TEST(RealmWire, TrailingElementsAreIgnored) {
  // WRITE [2, 7, bin, {"x": [1, nil, 1.5]}, fixext, ext8, bin8, [[[]]]].
  const std::string bytes =
      H("98 02 07 c4 01 90 81 a1 78 93 01 c0 cb 3f f8 00 00 00 00 00 00 "
        "d4 01 00 c7 02 05 aa bb c4 01 00 91 91 90");
  const Write write = Client<Write>(bytes);
  EXPECT_EQ(write.seq, 7u);
  EXPECT_EQ(View(write.patch), "\x90");
  EXPECT_EQ(Client<Ping>(H("93 03 05 a3 61 62 63")).nonce, 5u);
  // COMMIT's fourth element is its seq; a fifth is ignored.
  EXPECT_EQ(Server<Commit>(H("95 12 01 c4 00 02 c0")).seq, 2u);
}

TEST(RealmWire, RefusesWhatIsNotAMessage) {
  EXPECT_EQ(Refused(""), "not a MessagePack array");
  EXPECT_EQ(Refused(H("a1 78")), "not a MessagePack array");
  EXPECT_EQ(Refused(H("c1")), "not a MessagePack array");
  EXPECT_EQ(Refused(H("81 01 02")), "not a MessagePack array");
  EXPECT_EQ(Refused(H("dc 00")), "not a MessagePack array");  // truncated
  EXPECT_EQ(Refused(H("90")), "empty array: no message type");
  EXPECT_EQ(Refused(H("91 09")), "unknown message type 9");
  EXPECT_EQ(Refused(H("92 cd 01 2c 05")), "unknown message type 300");
  EXPECT_EQ(Refused(H("91 00")), "unknown message type 0");
  // A server message sent by a client, and the other way round.
  EXPECT_EQ(Refused(H("93 13 01 02")), "unknown message type 19");
  EXPECT_EQ(Refused(H("92 02 07 c4 00"), true), "unknown message type 2");
  EXPECT_EQ(Refused(H("91 a1 31")),
            "the message type must be a positive integer");
  EXPECT_EQ(Refused(H("91 ff")), "the message type must be a positive integer");
  EXPECT_EQ(Refused(H("92 03 05 c0")), "trailing bytes after the message");
  EXPECT_EQ(Refused(EncodePing(1) + EncodePing(2)),
            "trailing bytes after the message");
}

TEST(RealmWire, RefusesMissingAndWronglyTypedElements) {
  EXPECT_EQ(Refused(H("91 03")), "PING: nonce is missing");
  EXPECT_EQ(Refused(H("91 04")), "PONG: nonce is missing");
  EXPECT_EQ(Refused(H("92 02 07")), "WRITE: patch is missing");
  EXPECT_EQ(Refused(H("91 02")), "WRITE: seq is missing");
  EXPECT_EQ(Refused(H("94 01 01 a1 74 00")), "HELLO: version is missing");
  EXPECT_EQ(Refused(H("92 01 01")), "HELLO: ticket is missing");
  EXPECT_EQ(Refused(H("92 03 c0")),
            "PING: nonce must be an integer in 0..2^53");
  EXPECT_EQ(Refused(H("93 02 c3 c4 00")),
            "WRITE: seq must be an integer in 0..2^53");
  // Text where bin is expected, and other non-bin patches.
  EXPECT_EQ(Refused(H("93 02 07 a1 90")),
            "WRITE: patch must be bin, not string");
  EXPECT_EQ(Refused(H("93 02 07 90")), "WRITE: patch must be bin, not array");
  EXPECT_EQ(Refused(H("93 02 07 d4 01 00")),
            "WRITE: patch must be bin, not ext");
  EXPECT_EQ(Refused(H("95 01 01 05 00 00")), "HELLO: ticket must be a string");
  EXPECT_EQ(Refused(H("95 01 01 c4 01 74 00 00")),
            "HELLO: ticket must be a string");
  EXPECT_EQ(Refused(H("95 01 ff a1 74 00 00")),
            "HELLO: protocol must be a non-negative integer");
  EXPECT_EQ(Refused(H("95 01 01 a1 74 00 a1 30")),
            "HELLO: version must be an integer in 0..2^53");
  // Not UTF-8: a bad continuation, an overlong '/', a surrogate.
  EXPECT_EQ(Refused(H("95 01 01 a2 c3 28 00 00")),
            "HELLO: ticket is not valid UTF-8");
  EXPECT_EQ(Refused(H("95 01 01 a2 c0 af 00 00")),
            "HELLO: ticket is not valid UTF-8");
  EXPECT_EQ(Refused(H("95 01 01 a3 ed a0 80 00 00")),
            "HELLO: ticket is not valid UTF-8");
}

TEST(RealmWire, RefusesOutOfRangeIntegers) {
  const std::string over = "cf 00 20 00 00 00 00 00 01";  // 2^53 + 1
  const std::string reason = "must be an integer in 0..2^53";
  for (const std::string& bytes :
       {H("92 03 ") + H(over), H("92 04 ff"),
        H("92 03 d3 80 00 00 00 00 00 00 00"),
        H("92 03 cf ff ff ff ff ff ff ff ff"),
        H("92 03 cb 3f f0 00 00 00 00 00 00"),  // 1.0: a float
        H("93 02 d0 fe c4 00"), H("93 02 ") + H(over) + H("c4 00"),
        H("95 01 01 a0 ") + H(over) + H("00"), H("95 01 01 a0 00 e0")}) {
    EXPECT_NE(Refused(bytes).find(reason), std::string::npos) << Refused(bytes);
  }
  EXPECT_EQ(Client<Ping>(H("92 03 cf 00 20 00 00 00 00 00 00")).nonce,
            kMaxInteger);
  // The protocol is any non-negative integer (4009 is the server's call).
  EXPECT_EQ(
      Client<Hello>(H("95 01 cf ff ff ff ff ff ff ff ff a0 00 00")).protocol,
      UINT64_MAX);
  EXPECT_NE(Refused(H("94 13 01 ") + H(over), true)
                .find("ACK: version must be an integer in 0..2^53"),
            std::string::npos);
}

TEST(RealmWire, RefusesHugeDeclaredLengths) {
  // Each claims far more than the bytes hold; none may allocate for it.
  EXPECT_EQ(Refused(H("93 02 07 c6 ff ff ff ff 90")),
            "WRITE: patch truncated: a payload of 4294967295 bytes, 1 left");
  EXPECT_EQ(Refused(H("95 01 01 db ff ff ff ff 41")),
            "HELLO: ticket truncated: a payload of 4294967295 bytes, 1 left");
  EXPECT_EQ(
      Refused(H("dd ff ff ff ff 02 07 c4 00")),
      "WRITE: truncated: 4294967292 more elements announced, 0 bytes left");
  EXPECT_EQ(Refused(H("94 03 05 dd ff ff ff ff 00")),
            "PING: trailing element truncated: 4294967295 items announced, 1 "
            "bytes left");
  EXPECT_EQ(Refused(H("93 03 05 df ff ff ff ff")),
            "PING: trailing element truncated: 8589934590 items announced, 0 "
            "bytes left");
  EXPECT_NE(Refused(H("93 03 05 c9 ff ff ff ff 01")).find("PING: trailing"),
            std::string::npos);
  EXPECT_NE(Refused(H("96 10 01 02 a1 61 df ff ff ff ff a1 61 01 c4 00"), true)
                .find("HYDRATE: limits truncated: 4294967295 entries"),
            std::string::npos);
  // Nested deeper than any recursion could go: skipped iteratively.
  std::string deep = H("93 03 05");
  deep.append(200000, '\x91');
  deep.push_back('\x90');
  EXPECT_EQ(Client<Ping>(deep).nonce, 5u);
  deep.pop_back();
  EXPECT_NE(Refused(deep).find("PING: trailing element truncated"),
            std::string::npos);
  EXPECT_EQ(Refused(H("93 03 05 c1")),
            "PING: trailing element invalid MessagePack byte 0xc1");
}

TEST(RealmWire, RefusesMalformedServerMessages) {
  const std::string head = "96 10 01 02 a1 61 ";  // HYDRATE 1, 2, "a"
  EXPECT_EQ(Refused(H(head + "90 c4 00"), true),
            "HYDRATE: limits must be a map");
  EXPECT_EQ(
      Refused(H(head + "81 a1 6b cb 3f f0 00 00 00 00 00 00 c4 00"), true),
      "HYDRATE: limits values must be integers");
  EXPECT_EQ(Refused(H(head + "81 a1 6b c0 c4 00"), true),
            "HYDRATE: limits values must be integers");
  EXPECT_EQ(Refused(H(head + "81 01 01 c4 00"), true),
            "HYDRATE: limits keys must be strings");
  EXPECT_EQ(Refused(H(head + "82 a1 6b 01 a1 6b 02 c4 00"), true),
            "HYDRATE: limits has a duplicate key");
  EXPECT_EQ(Refused(H(head + "81 a1 ff 01 c4 00"), true),
            "HYDRATE: limits key is not valid UTF-8");
  EXPECT_EQ(Refused(H(head + "80 a1 90"), true),
            "HYDRATE: state must be bin, not string");
  EXPECT_EQ(Refused(H("95 10 01 02 a1 61 80"), true),
            "HYDRATE: state is missing");
  EXPECT_NE(Refused(H(head + "80"), true).find("HYDRATE: state truncated"),
            std::string::npos);
  EXPECT_EQ(Refused(H("96 10 01 02 a1 ff 80 c4 00"), true),
            "HYDRATE: avatar is not valid UTF-8");
  EXPECT_EQ(Refused(H("95 11 01 02 03 a0"), true), "RESUME: limits is missing");
  EXPECT_EQ(Refused(H("94 12 01 c4 00 c0"), true),
            "COMMIT: seq must be an integer in 0..2^53");
  EXPECT_EQ(Refused(H("93 12 01 a0"), true),
            "COMMIT: patch must be bin, not string");
  EXPECT_EQ(Refused(H("94 14 01 05 a0"), true),
            "REJECT: code must be a string");
  EXPECT_EQ(Refused(H("93 14 01 a0"), true), "REJECT: message is missing");
  // A non-integer limit never round-trips silently.
  EXPECT_EQ(Refused(EncodeResume(0, 0, 0, "", Json{{"x", 1.5}}), true),
            "RESUME: limits values must be integers");
}

TEST(RealmWire, RefusesEveryTruncation) {
  KeyTable keys;
  const std::string patch = EncodePatch({SetOp({"a"}, 1)}, &keys);
  const std::vector<std::string> client = {
      EncodeHello("ticket", 3, 300), EncodeWrite(70000, patch), EncodePing(1),
      EncodePong(kMaxInteger)};
  const std::vector<std::string> server = {
      EncodeHydrate(1, 2, "ann", kLimits, patch),
      EncodeResume(1, 2, 3, "ann", kLimits),
      EncodeCommit(4, patch, 5),
      EncodeCommit(4, patch),
      EncodeAck(1, 2),
      EncodeReject(1, "limits_exceeded", "too many")};
  for (const std::string& bytes : client) {
    ASSERT_TRUE(DecodeClientMessage(Bytes(bytes)).ok());
    for (size_t n = 0; n < bytes.size(); ++n) Refused(bytes.substr(0, n));
  }
  for (const std::string& bytes : server) {
    ASSERT_TRUE(DecodeServerMessage(Bytes(bytes)).ok());
    // The array header counts the elements, so a COMMIT cut before its
    // seq is refused, not read as one without.
    for (size_t n = 0; n < bytes.size(); ++n) {
      Refused(bytes.substr(0, n), true);
    }
  }
}

// Every single-byte change of valid messages: decoded or refused with a
// short reason, never anything else (the fuzz target goes further).
TEST(RealmWire, SurvivesEveryByteChange) {
  const std::vector<std::string> messages = {
      EncodeHello("t.k", 1, 2), EncodeWrite(3, H("91 92 01 91 92 00 a1 61")),
      EncodeHydrate(1, 2, "a", kLimits, "\x90"), EncodeCommit(1, "\x90", 2)};
  for (const std::string& original : messages) {
    for (size_t at = 0; at < original.size(); ++at) {
      for (int b = 0; b < 256; ++b) {
        std::string bytes = original;
        bytes[at] = static_cast<char>(b);
        for (bool server : {false, true}) {
          const Status status =
              server ? DecodeServerMessage(Bytes(bytes)).status()
                     : DecodeClientMessage(Bytes(bytes)).status();
          if (status.ok()) continue;
          EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
          EXPECT_LE(status.message().size(), kMaxCloseReason);
        }
      }
    }
  }
}

}  // namespace
}  // namespace tessera::realm::wire

namespace tessera::realm::wire {
namespace {

TEST(RealmWireIntent, RoundTripsAndRefusesBadNames) {
  const std::string bytes = EncodeIntent(7, "move", R"({"cell":4})");
  // [5, 7, "move", "{\"cell\":4}"]
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x94\x05\x07\xa4move", 8));
  Result<ClientMessage> decoded = DecodeClientMessage(
      std::span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  const auto* intent = std::get_if<Intent>(&*decoded);
  ASSERT_NE(intent, nullptr);
  EXPECT_EQ(intent->seq, 7u);
  EXPECT_EQ(intent->name, "move");
  EXPECT_EQ(intent->args, R"({"cell":4})");
  for (const std::string& name : {std::string(), std::string(65, 'n')}) {
    const std::string bad = EncodeIntent(1, name, "{}");
    Result<ClientMessage> refused = DecodeClientMessage(
        std::span(reinterpret_cast<const uint8_t*>(bad.data()), bad.size()));
    EXPECT_EQ(refused.status().message(), "INTENT: name must be 1 to 64 bytes");
  }
  // args must be a string (JSON text).
  const std::string numeric("\x94\x05\x01\xa1m\x07", 6);
  Result<ClientMessage> wrong = DecodeClientMessage(std::span(
      reinterpret_cast<const uint8_t*>(numeric.data()), numeric.size()));
  EXPECT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("args"), std::string::npos)
      << wrong.status().message();
}

}  // namespace
}  // namespace tessera::realm::wire
