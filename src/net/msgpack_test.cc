// The MessagePack codec, cross-checked against nlohmann::json's independent
// to_msgpack/from_msgpack implementation.
#include "net/msgpack.h"

#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <vector>

namespace tessera::net::msgpack {
namespace {

using nlohmann::json;

std::vector<uint8_t> Bytes(const std::string& s) {
  return std::vector<uint8_t>(s.begin(), s.end());
}

std::string Str(const std::vector<uint8_t>& v) {
  return std::string(v.begin(), v.end());
}

template <typename F>
std::string Written(F&& write) {
  std::string out;
  Writer w(&out);
  write(w);
  return out;
}

TEST(MsgpackWriter, UnsignedUsesTheSmallestEncodingLikeNlohmann) {
  const uint64_t values[] = {
      0,     1,     127,           128,        255,        256,
      65535, 65536, 0xffffffffull, 1ull << 32, 1ull << 53, ~0ull};
  for (uint64_t v : values) {
    SCOPED_TRACE(v);
    EXPECT_EQ(Written([&](Writer& w) { w.Uint(v); }),
              Str(json::to_msgpack(json(v))));
  }
  EXPECT_EQ(Written([](Writer& w) { w.Uint(127); }), "\x7f");
  EXPECT_EQ(Written([](Writer& w) { w.Uint(128); }), "\xcc\x80");
  EXPECT_EQ(Written([](Writer& w) { w.Uint(256); }).size(), 3u);
  EXPECT_EQ(Written([](Writer& w) { w.Uint(65536); }).size(), 5u);
  EXPECT_EQ(Written([](Writer& w) { w.Uint(1ull << 32); }).size(), 9u);
}

TEST(MsgpackWriter, SignedUsesTheSmallestEncodingLikeNlohmann) {
  const int64_t values[] = {0,
                            5,
                            300,
                            -1,
                            -32,
                            -33,
                            -128,
                            -129,
                            -32768,
                            -32769,
                            std::numeric_limits<int32_t>::min(),
                            int64_t{std::numeric_limits<int32_t>::min()} - 1,
                            std::numeric_limits<int64_t>::min(),
                            std::numeric_limits<int64_t>::max()};
  for (int64_t v : values) {
    SCOPED_TRACE(v);
    EXPECT_EQ(Written([&](Writer& w) { w.Int(v); }),
              Str(json::to_msgpack(json(v))));
  }
  EXPECT_EQ(Written([](Writer& w) { w.Int(-1); }), "\xff");
  EXPECT_EQ(Written([](Writer& w) { w.Int(-33); }), "\xd0\xdf");
}

TEST(MsgpackWriter, StrAndBinLikeNlohmann) {
  for (size_t n : {0, 1, 31, 32, 255, 256, 65535, 65536}) {
    SCOPED_TRACE(n);
    const std::string s(n, 'x');
    EXPECT_EQ(Written([&](Writer& w) { w.Str(s); }),
              Str(json::to_msgpack(json(s))));
    const std::vector<uint8_t> bin(n, 0xab);
    EXPECT_EQ(Written([&](Writer& w) { w.Bin(Str(bin)); }),
              Str(json::to_msgpack(json::binary(bin))));
  }
}

TEST(MsgpackWriter, ContainerHeadersLikeNlohmann) {
  for (size_t n : {0, 1, 15, 16, 65535, 65536}) {
    SCOPED_TRACE(n);
    std::string ours = Written([&](Writer& w) {
      w.ArrayHeader(n);
      for (size_t i = 0; i < n; ++i) w.Nil();
    });
    EXPECT_EQ(ours, Str(json::to_msgpack(json::array_t(n, nullptr))));
    ours = Written([&](Writer& w) {
      w.MapHeader(n);
      for (size_t i = 0; i < n; ++i) {
        w.Str(std::to_string(1000000 + i));  // sorted like json's std::map
        w.Nil();
      }
    });
    json map = json::object();
    for (size_t i = 0; i < n; ++i) map[std::to_string(1000000 + i)] = nullptr;
    EXPECT_EQ(ours, Str(json::to_msgpack(map)));
  }
}

TEST(MsgpackWriter, ScalarsDecodeWithNlohmann) {
  const std::string bytes = Written([](Writer& w) {
    w.ArrayHeader(7);
    w.Nil();
    w.Bool(true);
    w.Bool(false);
    w.Double(0.1);
    w.Double(-1e300);
    w.Str("héllo");
    w.Int(-7);
  });
  json j = json::from_msgpack(Bytes(bytes));
  EXPECT_EQ(j, json::parse(R"([null,true,false,0.1,-1e300,"héllo",-7])"));
}

TEST(MsgpackReader, ReadsWhatNlohmannWrites) {
  json doc = json::parse(R"([0, 1, 127, 128, 65536, 4294967296,
      18446744073709551615, -1, -33, -129, -40000, -3000000000,
      -9223372036854775808, 1.5, 0.1, "", "abc", true, false, null,
      {"k": [1, {"x": null}]}])");
  doc.push_back(json::binary({1, 2, 3}));
  const std::vector<uint8_t> bytes = json::to_msgpack(doc);
  Reader r(bytes);
  auto n = r.ReadArrayHeader();
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, doc.size());
  for (int i = 0; i < 7; ++i) {
    auto v = r.ReadUint();
    ASSERT_TRUE(v.ok()) << v.status().ToString();
    EXPECT_EQ(*v, doc[i].get<uint64_t>());
  }
  for (int i = 7; i < 13; ++i) {
    auto v = r.ReadInt();
    ASSERT_TRUE(v.ok()) << v.status().ToString();
    EXPECT_EQ(*v, doc[i].get<int64_t>());
  }
  EXPECT_EQ(r.ReadDouble().value(), 1.5);  // nlohmann writes it as float32
  EXPECT_EQ(r.ReadDouble().value(), 0.1);
  EXPECT_EQ(r.ReadStr().value(), "");
  EXPECT_EQ(r.ReadStr().value(), "abc");
  EXPECT_EQ(r.ReadBool().value(), true);
  EXPECT_EQ(r.ReadBool().value(), false);
  EXPECT_TRUE(r.ReadNil().ok());
  EXPECT_EQ(r.PeekType().value(), Type::kMap);
  EXPECT_TRUE(r.Skip().ok());
  EXPECT_EQ(r.ReadBin().value(), std::string("\1\2\3", 3));
  EXPECT_TRUE(r.AtEnd());
}

TEST(MsgpackReader, AcceptsEveryIntegerWidth) {
  // 5 as uint8, uint16, uint32, uint64, int8, int16, int32, int64.
  const std::vector<uint8_t> bytes = {
      0xcc, 5, 0xcd, 0, 5, 0xce, 0, 0, 0, 5, 0xcf, 0, 0, 0, 0, 0, 0, 0, 5,
      0xd0, 5, 0xd1, 0, 5, 0xd2, 0, 0, 0, 5, 0xd3, 0, 0, 0, 0, 0, 0, 0, 5};
  Reader r(bytes);
  for (int i = 0; i < 8; ++i) {
    ASSERT_EQ(r.PeekType().value(), Type::kUint);
    EXPECT_EQ(r.ReadUint().value(), 5u);
  }
  EXPECT_TRUE(r.AtEnd());
  const std::vector<uint8_t> negative = {0xd1, 0xff, 0xfe};  // -2 as int16
  Reader n(negative);
  EXPECT_EQ(n.PeekType().value(), Type::kNegInt);
  EXPECT_EQ(n.ReadUint().status().message(),
            "expected an unsigned integer, got negative integer");
  EXPECT_EQ(n.ReadInt().value(), -2);
}

TEST(MsgpackReader, RangeAndTypeErrorsLeaveThePositionUnchanged) {
  const std::vector<uint8_t> big = {0xcf, 0xff, 0xff, 0xff, 0xff,
                                    0xff, 0xff, 0xff, 0xff};
  Reader r(big);
  EXPECT_EQ(r.ReadInt().status().message(),
            "integer 18446744073709551615 out of int64 range");
  EXPECT_EQ(r.offset(), 0u);
  EXPECT_EQ(r.ReadStr().status().message(),
            "expected a str, got unsigned integer");
  EXPECT_EQ(r.offset(), 0u);
  EXPECT_EQ(r.ReadUint().value(), ~0ull);
  EXPECT_EQ(r.offset(), 9u);
}

TEST(MsgpackReader, ErrorsOnMalformedInput) {
  auto error = [](std::vector<uint8_t> bytes) {
    Reader r(bytes);
    Status s = r.Skip();
    if (s.ok()) {
      EXPECT_TRUE(r.AtEnd());
      return std::string("ok");
    }
    EXPECT_EQ(r.offset(), 0u);
    return s.message();
  };
  EXPECT_EQ(error({}), "truncated MessagePack data: no value at byte 0");
  EXPECT_EQ(error({0xc1}), "invalid MessagePack byte 0xc1 at byte 0");
  EXPECT_EQ(error({0xa3, 'a', 'b'}),
            "truncated MessagePack data: str at byte 0 needs 3 bytes, 2 left");
  EXPECT_EQ(error({0xda, 0x01}),
            "truncated MessagePack data: str at byte 0 needs 2 bytes, 1 left");
  EXPECT_EQ(error({0xc6, 0xff, 0xff, 0xff, 0xff, 0}),
            "truncated MessagePack data: bin at byte 0 needs 4294967295 "
            "bytes, 1 left");
  EXPECT_EQ(error({0xcb, 0, 0}),
            "truncated MessagePack data: float64 at byte 0 needs 8 bytes, 2 "
            "left");
  EXPECT_EQ(error({0xdd, 0xff, 0xff, 0xff, 0xff, 1, 2}),
            "truncated MessagePack data: array of 4294967295 elements at "
            "byte 0 with 2 bytes left");
  EXPECT_EQ(error({0x82, 1, 2, 3}),
            "truncated MessagePack data: map of 2 elements at byte 0 with 3 "
            "bytes left");
  EXPECT_EQ(error({0x92, 0x91, 0xc1, 0}),
            "invalid MessagePack byte 0xc1 at byte 2");
  EXPECT_EQ(error({0xd4, 1}),
            "truncated MessagePack data: fixext at byte 0 needs 2 bytes, 1 "
            "left");
  EXPECT_EQ(error({0xd4, 1, 2}), "ok");
  EXPECT_EQ(error({0xc7, 2, 9, 1, 2}), "ok");  // ext8: type byte + 2 bytes
  EXPECT_EQ(error({0xc7, 2, 9, 1}),
            "truncated MessagePack data: ext at byte 0 needs 3 bytes, 2 left");
}

TEST(MsgpackReader, DepthLimit) {
  auto nested = [](int depth) {
    std::vector<uint8_t> v(depth, 0x91);
    v.push_back(0x01);
    return v;
  };
  {
    const std::vector<uint8_t> ok = nested(64);
    Reader r(ok);
    EXPECT_TRUE(r.Skip().ok());
    EXPECT_TRUE(r.AtEnd());
  }
  {
    const std::vector<uint8_t> deep = nested(65);
    Reader r(deep);
    EXPECT_EQ(r.Skip().message(),
              "MessagePack nesting deeper than 64 at byte 64");
    EXPECT_EQ(r.offset(), 0u);
  }
  {
    const std::vector<uint8_t> deep = nested(3);
    Reader r(deep, /*max_depth=*/2);
    EXPECT_FALSE(r.Skip().ok());
  }
  {
    const std::vector<uint8_t> huge = nested(100000);
    Reader r(huge, /*max_depth=*/1000000);  // clamped to kMaxDepth
    EXPECT_FALSE(r.Skip().ok());
  }
}

TEST(MsgpackReader, SkipMatchesNlohmannOnNestedDocuments) {
  json doc = json::parse(R"({"a": [1, 2.5, "x", {"b": [[], {}, [null]]}],
      "c": -100000, "d": {"e": {"f": {"g": "h"}}}})");
  doc["bin"] = json::binary({0, 1, 2, 3, 4, 5, 6, 7}, 42);  // fixext8
  const std::vector<uint8_t> bytes = json::to_msgpack(doc);
  Reader r(bytes);
  ASSERT_TRUE(r.Skip().ok());
  EXPECT_TRUE(r.AtEnd());
}

// Every strict prefix of a complete value is incomplete, so reading it must
// fail; the buffer is exact-size heap memory so ASan sees any overread.
TEST(MsgpackReader, NeverReadsPastTheEndOfTruncations) {
  json doc = json::parse(R"([1, "two", [3, {"four": 4.5}], -6, null, true,
      "a string that is longer than thirty-one bytes", 4294967296])");
  doc.push_back(json::binary(std::vector<uint8_t>(300, 7)));
  doc.push_back(std::string(70000, 's'));
  const std::vector<uint8_t> full = json::to_msgpack(doc);
  std::mt19937 rng(42);
  std::vector<size_t> cuts;
  for (size_t i = 0; i < 400 && i < full.size(); ++i) cuts.push_back(i);
  for (int i = 0; i < 200; ++i) cuts.push_back(rng() % full.size());
  for (size_t cut : cuts) {
    std::vector<uint8_t> prefix(full.begin(), full.begin() + cut);
    Reader r(prefix);
    EXPECT_FALSE(r.Skip().ok()) << "cut at " << cut;
  }
  Reader r(full);
  EXPECT_TRUE(r.Skip().ok());
  EXPECT_TRUE(r.AtEnd());
}

TEST(MsgpackReader, RandomBytesNeverCrash) {
  std::mt19937 rng(7);
  for (int i = 0; i < 20000; ++i) {
    std::vector<uint8_t> bytes(rng() % 24);
    for (auto& b : bytes) b = static_cast<uint8_t>(rng());
    Reader r(bytes);
    while (!r.AtEnd() && r.Skip().ok()) {
    }
    EXPECT_LE(r.offset(), bytes.size());
  }
}

}  // namespace
}  // namespace tessera::net::msgpack
