// The WebTransport byte layouts: varints, TLVs, SETTINGS, the stream and
// datagram prefixes, the close capsule, the request stream, and the tick
// datagrams' split and reassembly.
#include "net/webtransport/wt_wire.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "net/webtransport/h3_request.h"
#include "net/webtransport/tick_datagrams.h"

namespace tessera::net::wt {
namespace {

std::span<const uint8_t> B(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

TEST(WtWire, VarintsRoundTripAtEveryWidth) {
  for (uint64_t v : {uint64_t{0}, uint64_t{63}, uint64_t{64}, uint64_t{16383},
                     uint64_t{16384}, (uint64_t{1} << 30) - 1,
                     uint64_t{1} << 30, kMaxVarint}) {
    std::string out;
    AppendVarint(out, v);
    EXPECT_EQ(out.size(), VarintSize(v));
    Reader r(B(out));
    uint64_t back = 0;
    ASSERT_TRUE(r.Varint(&back));
    EXPECT_EQ(back, v);
    EXPECT_EQ(r.remaining(), 0u);
  }
  // RFC 9000's example: 0x9d7f3e7d is 494878333.
  const std::string four = "\x9d\x7f\x3e\x7d";
  Reader r(B(four));
  uint64_t v = 0;
  ASSERT_TRUE(r.Varint(&v));
  EXPECT_EQ(v, 494878333u);
  Reader cut(B(four).first(3));
  EXPECT_FALSE(cut.Varint(&v));
  EXPECT_EQ(cut.consumed(), 0u);
}

TEST(WtWire, TlvReaderWaitsForWholeFramesAndRefusesHugeOnes) {
  std::string frames = EncodeTlv(7, B(std::string("abc"))) +
                       EncodeTlv(0x21, B(std::string(300, 'x')));
  TlvReader reader(1024);
  Tlv tlv;
  std::string error;
  reader.Feed(B(frames).first(4));
  EXPECT_EQ(reader.Take(&tlv, &error), TlvReader::Next::kNeedMore);
  reader.Feed(B(frames).subspan(4));
  ASSERT_EQ(reader.Take(&tlv, &error), TlvReader::Next::kTlv);
  EXPECT_EQ(tlv.type, 7u);
  EXPECT_EQ(tlv.payload, "abc");
  ASSERT_EQ(reader.Take(&tlv, &error), TlvReader::Next::kTlv);
  EXPECT_EQ(tlv.payload.size(), 300u);
  EXPECT_EQ(reader.Take(&tlv, &error), TlvReader::Next::kNeedMore);

  TlvReader small(16);
  small.Feed(B(EncodeTlv(1, B(std::string(17, 'y')))));
  EXPECT_EQ(small.Take(&tlv, &error), TlvReader::Next::kError);
  EXPECT_NE(error.find("17 bytes"), std::string::npos);
}

TEST(WtWire, ControlStreamAdvertisesEveryWebTransportDialect) {
  const std::string pre = ServerControlStreamPreamble();
  ASSERT_EQ(pre[0], '\0');  // the control stream's type
  TlvReader reader(1024);
  reader.Feed(B(pre).subspan(1));
  Tlv tlv;
  std::string error;
  ASSERT_EQ(reader.Take(&tlv, &error), TlvReader::Next::kTlv);
  EXPECT_EQ(tlv.type, kFrameSettings);
  Result<Settings> s = ParseSettings(B(tlv.payload));
  ASSERT_TRUE(s.ok());
  auto value = [&](uint64_t id) -> int64_t {
    for (auto [k, v] : s.value()) {
      if (k == id) return static_cast<int64_t>(v);
    }
    return -1;
  };
  EXPECT_EQ(value(kSettingH3Datagram), 1);
  EXPECT_EQ(value(kSettingEnableWebTransport), 1);
  EXPECT_EQ(value(kSettingEnableConnectProtocol), 1);
  EXPECT_GT(value(kSettingWebTransportMaxSessionsDraft07), 0);
  EXPECT_GT(value(kSettingWtMaxSessions), 0);
  EXPECT_EQ(value(kSettingQpackMaxTableCapacity), 0);

  std::string repeated;
  AppendVarint(repeated, 8);
  AppendVarint(repeated, 1);
  AppendVarint(repeated, 8);
  AppendVarint(repeated, 0);
  EXPECT_FALSE(ParseSettings(B(repeated)).ok());
  EXPECT_FALSE(ParseSettings(B(std::string("\x08", 1))).ok());
}

TEST(WtWire, BidiStartTellsSessionStreamsFromRequests) {
  std::string wt;
  AppendVarint(wt, kWtBidiSignal);
  AppendVarint(wt, 4);
  wt += "hello";
  std::optional<BidiStart> s = ParseBidiStart(B(wt));
  ASSERT_TRUE(s.has_value());
  EXPECT_TRUE(s->webtransport);
  EXPECT_EQ(s->session_id, 4u);
  EXPECT_EQ(wt.substr(s->consumed), "hello");
  EXPECT_FALSE(ParseBidiStart(B(wt).first(2)).has_value());  // signal only
  std::optional<BidiStart> req = ParseBidiStart(B(std::string("\x01\x05")));
  ASSERT_TRUE(req.has_value());
  EXPECT_FALSE(req->webtransport);
}

TEST(WtWire, DatagramPrefixIsTheQuarterStreamId) {
  std::string d = DatagramPrefix(8) + "xy";
  Result<Datagram> parsed = ParseDatagram(B(d));
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed.value().session_id, 8u);
  EXPECT_EQ(parsed.value().payload.size(), 2u);
  EXPECT_FALSE(ParseDatagram({}).ok());
  std::string huge;
  AppendVarint(huge, kMaxVarint);
  EXPECT_FALSE(ParseDatagram(B(huge)).ok());
}

TEST(WtWire, CloseCapsuleRoundTrips) {
  const std::string capsule = EncodeCloseSession(4001, "ticket invalid");
  TlvReader reader(2048);
  reader.Feed(B(capsule));
  Tlv tlv;
  std::string error;
  ASSERT_EQ(reader.Take(&tlv, &error), TlvReader::Next::kTlv);
  EXPECT_EQ(tlv.type, kCapsuleCloseSession);
  Result<CloseSession> c = ParseCloseSession(B(tlv.payload));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c.value().code, 4001u);
  EXPECT_EQ(c.value().reason, "ticket invalid");
  EXPECT_FALSE(ParseCloseSession(B(std::string("\x00\x01", 2))).ok());
  EXPECT_FALSE(ParseCloseSession(B(std::string(1029, 'r'))).ok());
}

TEST(WtWire, RequestStreamDecodesConnectThenSkipsGreaseAndSeesClose) {
  H3Codec codec;
  // A request's field section as a client's encoder makes it: our own
  // encoder's response block decodes through the same decoder API, so
  // build the request with literal fields by hand (static table off).
  // Required insert count 0, base 0, then literal field lines with
  // literal names (0x20 | H=0 | name length 3-bit prefix...).
  auto literal = [](std::string_view name, std::string_view value) {
    std::string out;
    // 001NHxxx: literal name, N=0, H=0, 3-bit length prefix.
    if (name.size() < 7) {
      out.push_back(static_cast<char>(0x20 | name.size()));
    } else {
      out.push_back(static_cast<char>(0x27));
      out.push_back(static_cast<char>(name.size() - 7));
    }
    out.append(name);
    out.push_back(static_cast<char>(value.size()));  // H=0, 7-bit prefix
    out.append(value);
    return out;
  };
  std::string block("\x00\x00", 2);
  block += literal(":method", "CONNECT");
  block += literal(":protocol", "webtransport");
  block += literal(":path", "/shard/arena-1");
  std::string stream = EncodeTlv(kFrameHeaders, B(block));
  stream += EncodeTlv(0x21, B(std::string("grease")));  // a reserved frame
  std::string capsules = EncodeTlv(0x17, B(std::string("??")));  // unknown
  capsules += EncodeCloseSession(7, "bye");
  stream += EncodeTlv(kFrameData, B(capsules));

  H3RequestStream req;
  H3RequestStream::Events first = req.Feed(codec, B(stream).first(5), 0);
  EXPECT_FALSE(first.headers.has_value());
  H3RequestStream::Events rest = req.Feed(codec, B(stream).subspan(5), 0);
  ASSERT_TRUE(rest.headers.has_value()) << rest.error;
  EXPECT_EQ(rest.headers->method, "CONNECT");
  EXPECT_EQ(rest.headers->protocol, "webtransport");
  EXPECT_EQ(rest.headers->path, "/shard/arena-1");
  EXPECT_TRUE(rest.close);
  ASSERT_TRUE(rest.close_info.has_value());
  EXPECT_EQ(rest.close_info->code, 7u);

  H3RequestStream bad;
  H3RequestStream::Events ev =
      bad.Feed(codec, B(EncodeTlv(kFrameData, B(std::string("x")))), 0);
  EXPECT_EQ(ev.error_code, kH3FrameUnexpected);
  // The response decodes as a HEADERS frame.
  EXPECT_EQ(codec.ResponseHeaders(0, 200)[0], '\x01');
}

std::vector<std::string_view> Parts(const std::string& a,
                                    const std::string& b) {
  return {a, b};
}

TEST(TickDatagrams, SplitsLargeTicksAndReassemblesThemInAnyOrder) {
  const std::string head = "HEAD";
  std::string body(5000, '\0');
  for (size_t i = 0; i < body.size(); ++i) body[i] = static_cast<char>(i * 7);
  const std::vector<std::string_view> parts = Parts(head, body);
  const std::string prefix = DatagramPrefix(0);
  std::vector<std::string> d = SplitTick(42, parts, prefix, 1200);
  ASSERT_EQ(d.size(), 5u);
  for (const std::string& x : d) {
    EXPECT_LE(x.size(), 1200u);
    EXPECT_EQ(x.substr(0, prefix.size()), prefix);
  }
  TickReassembler r;
  // Reverse order; the tick is whole only with its last datagram.
  for (size_t i = d.size(); i-- > 1;) {
    EXPECT_EQ(r.Add(B(d[i]).subspan(prefix.size())).outcome,
              TickReassembler::Outcome::kPartial);
  }
  TickReassembler::Added whole = r.Add(B(d[0]).subspan(prefix.size()));
  ASSERT_EQ(whole.outcome, TickReassembler::Outcome::kWhole);
  EXPECT_EQ(whole.tick, 42u);
  EXPECT_EQ(whole.message, head + body);
  // A repeat of a whole tick is stale.
  EXPECT_EQ(r.Add(B(d[1]).subspan(prefix.size())).outcome,
            TickReassembler::Outcome::kStale);
}

TEST(TickDatagrams, ALostDatagramLosesItsTickButNotTheNext) {
  const std::string head = "H";
  const std::string body(3000, 'b');
  TickReassembler r;
  std::vector<std::string> t1 = SplitTick(1, Parts(head, body), "", 1200);
  std::vector<std::string> t2 = SplitTick(2, Parts(head, body), "", 1200);
  ASSERT_EQ(t1.size(), 3u);
  EXPECT_EQ(r.Add(B(t1[0])).outcome, TickReassembler::Outcome::kPartial);
  // t1[1] is lost.
  EXPECT_EQ(r.Add(B(t1[2])).outcome, TickReassembler::Outcome::kPartial);
  for (size_t i = 0; i + 1 < t2.size(); ++i) (void)r.Add(B(t2[i]));
  TickReassembler::Added a = r.Add(B(t2.back()));
  ASSERT_EQ(a.outcome, TickReassembler::Outcome::kWhole);
  EXPECT_EQ(a.tick, 2u);
  EXPECT_EQ(r.pending(), 0u);  // tick 1 was given up
  // Tick 1's missing datagram arriving late is stale now.
  EXPECT_EQ(r.Add(B(t1[1])).outcome, TickReassembler::Outcome::kStale);
}

TEST(TickDatagrams, RefusesMalformedHeadersAndOversizedTicks) {
  TickReassembler r(4, 100);
  EXPECT_EQ(r.Add({}).outcome, TickReassembler::Outcome::kMalformed);
  std::string index_past_count;
  AppendVarint(index_past_count, 5);
  AppendVarint(index_past_count, 2);
  AppendVarint(index_past_count, 2);
  EXPECT_EQ(r.Add(B(index_past_count)).outcome,
            TickReassembler::Outcome::kMalformed);
  std::string big;
  AppendVarint(big, 6);
  AppendVarint(big, 1);
  AppendVarint(big, 0);
  big += std::string(101, 'z');
  EXPECT_EQ(r.Add(B(big)).outcome, TickReassembler::Outcome::kMalformed);
  // Too many chunks: the caller sends the tick on the stream instead.
  const std::string body(kMaxTickChunks * 1200, 'q');
  EXPECT_TRUE(SplitTick(1, Parts("", body), "", 1200).empty());
  // A small tick is one datagram.
  EXPECT_EQ(SplitTick(1, Parts("x", "y"), "", 1200).size(), 1u);
}

}  // namespace
}  // namespace tessera::net::wt
