// Native tests of the guest SDK's codecs: round trips in both codecs, exact
// bytes for small messages, and refusal of malformed or mistyped input with
// errors that name the field.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "tessera/shard_sdk.h"

namespace sdk_test {

using namespace std::string_literals;

struct Point {
  float x = 0;
  float y = 0;
};
TESSERA_FIELDS(Point, x, y);

struct MoveTo {
  float x = 0;
  float y = 0;
};
TESSERA_FIELDS(MoveTo, x, y);

struct Stop {};
TESSERA_FIELDS(Stop);

struct SetName {
  std::string name;
};
TESSERA_FIELDS(SetName, name);

using Input = std::variant<MoveTo, Stop, SetName>;

struct Everything {
  bool flag = false;
  std::int8_t i8 = 0;
  std::uint8_t u8 = 0;
  std::int16_t i16 = 0;
  std::uint16_t u16 = 0;
  std::int32_t i32 = 0;
  std::uint32_t u32 = 0;
  std::int64_t i64 = 0;
  std::uint64_t u64 = 0;
  float f = 0;
  double d = 0;
  std::string text;
  std::vector<std::int32_t> numbers;
  std::vector<bool> bits;
  std::optional<std::string> maybe;
  std::optional<std::int32_t> absent;
  Point at;
  std::vector<Point> path;
  std::map<std::string, std::int32_t> scores;
  Input last;
  std::vector<Input> history;
};
TESSERA_FIELDS(Everything, flag, i8, u8, i16, u16, i32, u32, i64, u64, f, d,
               text, numbers, bits, maybe, absent, at, path, scores, last,
               history);

bool operator==(const Point& a, const Point& b) {
  return a.x == b.x && a.y == b.y;
}
bool operator==(const MoveTo& a, const MoveTo& b) {
  return a.x == b.x && a.y == b.y;
}
bool operator==(const Stop&, const Stop&) { return true; }
bool operator==(const SetName& a, const SetName& b) { return a.name == b.name; }

Everything MakeEverything() {
  Everything e;
  e.flag = true;
  e.i8 = -128;
  e.u8 = 255;
  e.i16 = -32768;
  e.u16 = 65535;
  e.i32 = std::numeric_limits<std::int32_t>::min();
  e.u32 = std::numeric_limits<std::uint32_t>::max();
  e.i64 = std::numeric_limits<std::int64_t>::min();
  e.u64 = std::numeric_limits<std::uint64_t>::max();
  e.f = 0.1f;
  e.d = -1234.5678e-90;
  e.text = "h\xc3\xa9llo \"w\"\n\t\\ \xf0\x9f\x98\x80 \x01";
  e.numbers = {0, -1, 127, 128, -32, -33, 255, 256, 65535, 65536, -129};
  e.bits = {true, false, true};
  e.maybe = std::string(300, 'z');
  e.at = {1.5f, -2.25f};
  e.path = {{1, 2}, {3, 4}};
  e.scores = {{"ann", 3}, {"bob", -7}};
  e.last = SetName{"zed"};
  e.history = {MoveTo{1, 2}, Stop{}, SetName{"q"}};
  return e;
}

void ExpectSame(const Everything& a, const Everything& b) {
  EXPECT_EQ(a.flag, b.flag);
  EXPECT_EQ(a.i8, b.i8);
  EXPECT_EQ(a.u8, b.u8);
  EXPECT_EQ(a.i16, b.i16);
  EXPECT_EQ(a.u16, b.u16);
  EXPECT_EQ(a.i32, b.i32);
  EXPECT_EQ(a.u32, b.u32);
  EXPECT_EQ(a.i64, b.i64);
  EXPECT_EQ(a.u64, b.u64);
  EXPECT_EQ(a.f, b.f);
  EXPECT_EQ(a.d, b.d);
  EXPECT_EQ(a.text, b.text);
  EXPECT_EQ(a.numbers, b.numbers);
  EXPECT_EQ(a.bits, b.bits);
  EXPECT_EQ(a.maybe, b.maybe);
  EXPECT_EQ(a.absent, b.absent);
  EXPECT_EQ(a.at, b.at);
  EXPECT_EQ(a.path, b.path);
  EXPECT_EQ(a.scores, b.scores);
  EXPECT_EQ(a.last, b.last);
  EXPECT_EQ(a.history, b.history);
}

// Re-encodes one JSON value as MessagePack (appended to `out`), so a case
// written as JSON text can be run in both codecs.
bool Transcode(tessera::json::Reader& r, std::string& out) {
  tessera::msgpack::Writer w(out);
  switch (r.peek()) {
    case tessera::Kind::kNull:
      w.null();
      return r.read_null();
    case tessera::Kind::kBool: {
      bool b = false;
      if (!r.read_bool(b)) return false;
      w.boolean(b);
      return true;
    }
    case tessera::Kind::kInteger: {
      std::int64_t i = 0;
      tessera::json::Reader probe = r;
      if (probe.read_int64(i)) {
        r = probe;
        w.int64(i);
        return true;
      }
      std::uint64_t u = 0;
      if (!r.read_uint64(u)) return false;
      w.uint64(u);
      return true;
    }
    case tessera::Kind::kFloat: {
      double d = 0;
      if (!r.read_double(d)) return false;
      w.float64(d);
      return true;
    }
    case tessera::Kind::kString: {
      std::string s;
      if (!r.read_string(s)) return false;
      w.string(s);
      return true;
    }
    case tessera::Kind::kArray:
    case tessera::Kind::kObject: {
      const bool is_array = r.peek() == tessera::Kind::kArray;
      std::string body;
      std::size_t count = 0;
      std::string key;
      if (!(is_array ? r.begin_array() : r.begin_object())) return false;
      while (is_array ? r.array_next() : r.object_next(key)) {
        if (!is_array) tessera::msgpack::Writer(body).key(key);
        if (!Transcode(r, body)) return false;
        ++count;
      }
      if (r.failed()) return false;
      if (is_array) {
        w.begin_array(count);
      } else {
        w.begin_object(count);
      }
      out += body;
      return true;
    }
    default:
      return false;
  }
}

class BothCodecs : public ::testing::TestWithParam<tessera::Codec> {
 protected:
  // `json` in the codec under test.
  std::string Bytes(std::string_view json) {
    if (GetParam() == tessera::abi::kCodecJson) return std::string(json);
    std::string out;
    tessera::json::Reader r(json);
    EXPECT_TRUE(Transcode(r, out) && r.finish()) << r.error();
    return out;
  }
};

TEST_P(BothCodecs, RoundTripsEverySupportedType) {
  const Everything original = MakeEverything();
  std::string bytes;
  tessera::encode(GetParam(), original, bytes);
  Everything decoded;
  const tessera::Status status = tessera::decode(GetParam(), bytes, decoded);
  ASSERT_TRUE(status.ok()) << status.message();
  ExpectSame(original, decoded);
}

TEST_P(BothCodecs, MissingFieldsKeepDefaultsAndUnknownOnesAreSkipped) {
  Point p{5, 6};
  const tessera::Status status = tessera::decode(
      GetParam(),
      Bytes(R"({"junk":[{"move_to":{"x":1}},{"a":[[{}],null,"s",1e5,-3]}],)"
            R"("x":7})"),
      p);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(p.x, 7);
  EXPECT_EQ(p.y, 6);
}

TEST_P(BothCodecs, WrongTypesNameTheField) {
  struct Case {
    const char* json;
    const char* error;
  };
  const Case cases[] = {
      {R"({"path":[{"x":1,"y":2},{"x":"left"}]})",
       "field \"path[1].x\": expected a number, found a string"},
      {R"({"history":[{"stop":{}},{"move_to":{"y":[]}}]})",
       "field \"history[1].move_to.y\": expected a number, found an array"},
      {R"({"i8":128})", "field \"i8\": integer out of range for int8"},
      {R"({"u8":-1})", "field \"u8\": integer out of range"},
      {R"({"u16":65536})", "field \"u16\": integer out of range for uint16"},
      {R"({"i64":9223372036854775808})", "field \"i64\": integer out of range"},
      {R"({"i32":1.5})",
       "field \"i32\": expected an integer, found a number with a fraction"},
      {R"({"f":1e39})", "field \"f\": number out of range for float"},
      {R"({"flag":1})", "field \"flag\": expected a boolean, found an integer"},
      {R"({"text":5})", "field \"text\": expected a string, found an integer"},
      {R"({"numbers":{}})",
       "field \"numbers\": expected an array, found an object"},
      {R"({"numbers":[1,2,null]})",
       "field \"numbers[2]\": expected an integer, found null"},
      {R"({"at":[]})", "field \"at\": expected an object, found an array"},
      {R"({"maybe":false})",
       "field \"maybe\": expected a string, found a boolean"},
      {R"({"scores":{"ann":"x"}})",
       "field \"scores.ann\": expected an integer, found a string"},
      {R"([])", "expected an object, found an array"},
  };
  for (const Case& c : cases) {
    Everything e;
    const tessera::Status status =
        tessera::decode(GetParam(), Bytes(c.json), e);
    ASSERT_FALSE(status.ok()) << c.json;
    EXPECT_EQ(status.message(), c.error) << c.json;
  }
}

TEST_P(BothCodecs, WholeFloatsAreIntegersAndBigIntegersAreExact) {
  Everything e;
  const tessera::Status status = tessera::decode(
      GetParam(), Bytes(R"({"i32":2.0,"u64":18446744073709551615,"i8":-1})"),
      e);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(e.i32, 2);
  EXPECT_EQ(e.u64, std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(e.i8, -1);
}

TEST_P(BothCodecs, DecodesExternallyTaggedInputs) {
  Input in;
  ASSERT_TRUE(
      tessera::decode(GetParam(), Bytes(R"({"move_to":{"x":1,"y":2}})"), in)
          .ok());
  ASSERT_TRUE(std::holds_alternative<MoveTo>(in));
  EXPECT_EQ(std::get<MoveTo>(in), (MoveTo{1, 2}));
  EXPECT_EQ(tessera::tag_of(in), "move_to");

  for (const char* unit : {R"("stop")", R"({"stop":{}})", R"({"stop":null})"}) {
    Input stop = MoveTo{};
    ASSERT_TRUE(tessera::decode(GetParam(), Bytes(unit), stop).ok()) << unit;
    EXPECT_TRUE(std::holds_alternative<Stop>(stop)) << unit;
  }
}

TEST_P(BothCodecs, RejectsBadInputTags) {
  struct Case {
    const char* json;
    const char* error;
  };
  const Case cases[] = {
      {R"({"jump":{}})",
       "unknown variant \"jump\", expected one of: move_to, stop, set_name"},
      {R"("fly")",
       "unknown variant \"fly\", expected one of: move_to, stop, set_name"},
      {R"({})", "expected one key naming the variant, found an empty object"},
      {R"({"stop":{},"move_to":{}})",
       "expected one key naming the variant, found a second key \"move_to\""},
      {R"([1])",
       "expected an object with one key naming the variant, found an array"},
      {R"({"move_to":{"x":true}})",
       "field \"move_to.x\": expected a number, found a boolean"},
  };
  for (const Case& c : cases) {
    Input in;
    const tessera::Status status =
        tessera::decode(GetParam(), Bytes(c.json), in);
    ASSERT_FALSE(status.ok()) << c.json;
    EXPECT_EQ(status.message(), c.error) << c.json;
  }
  // Untrusted tags are cut short in the error text.
  Input in;
  const tessera::Status status = tessera::decode(
      GetParam(), Bytes("\"" + std::string(1000, 'a') + "\""), in);
  ASSERT_FALSE(status.ok());
  EXPECT_LT(status.message().size(), 200u);
}

TEST_P(BothCodecs, RefusesDeepNesting) {
  // {"junk": [[[...]]]} 100 levels deep.
  std::string bytes;
  if (GetParam() == tessera::abi::kCodecJson) {
    bytes = R"({"junk":)" + std::string(100, '[') + std::string(100, ']') + "}";
  } else {
    bytes = "\x81\xa4junk" + std::string(100, '\x91') + "\xc0";
  }
  Point p;
  const tessera::Status status = tessera::decode(GetParam(), bytes, p);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("nested too deeply"), std::string::npos)
      << status.message();
}

TEST_P(BothCodecs, EveryTruncationFailsCleanly) {
  std::string bytes;
  tessera::encode(GetParam(), MakeEverything(), bytes);
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    Everything e;
    EXPECT_FALSE(tessera::decode(GetParam(), bytes.substr(0, n), e).ok()) << n;
  }
}

TEST_P(BothCodecs, RandomBytesNeverCrash) {
  std::string bytes;
  tessera::encode(GetParam(), MakeEverything(), bytes);
  std::uint64_t seed = 0x9e3779b97f4a7c15;
  for (int round = 0; round < 20000; ++round) {
    std::string mutated = bytes;
    for (int k = 0; k < 3; ++k) {
      seed ^= seed << 13;
      seed ^= seed >> 7;
      seed ^= seed << 17;
      mutated[seed % mutated.size()] = static_cast<char>(seed >> 56);
    }
    Everything e;
    (void)tessera::decode(GetParam(), mutated, e);
  }
}

INSTANTIATE_TEST_SUITE_P(Codecs, BothCodecs,
                         ::testing::Values(tessera::abi::kCodecMsgpack,
                                           tessera::abi::kCodecJson));

// --- MessagePack ------------------------------------------------------------

std::string Msgpack(const auto& value) {
  std::string out;
  tessera::encode(tessera::abi::kCodecMsgpack, value, out);
  return out;
}

TEST(Msgpack, PicksTheSmallestEncodings) {
  EXPECT_EQ(Msgpack(std::int64_t{0}), std::string("\x00", 1));
  EXPECT_EQ(Msgpack(std::int64_t{127}), "\x7f");
  EXPECT_EQ(Msgpack(std::int64_t{128}), "\xcc\x80");
  EXPECT_EQ(Msgpack(std::int64_t{-32}), "\xe0");
  EXPECT_EQ(Msgpack(std::int64_t{-33}), "\xd0\xdf");
  EXPECT_EQ(Msgpack(std::int64_t{-129}), "\xd1\xff\x7f");
  EXPECT_EQ(Msgpack(std::uint64_t{65536}),
            std::string("\xce\x00\x01\x00\x00", 5));
  EXPECT_EQ(Msgpack(1.5f), std::string("\xca\x3f\xc0\x00\x00", 5));
  EXPECT_EQ(Msgpack(std::string(31, 'a')), "\xbf" + std::string(31, 'a'));
  EXPECT_EQ(Msgpack(std::string(32, 'a')), "\xd9\x20" + std::string(32, 'a'));
  EXPECT_EQ(Msgpack(std::optional<bool>()), "\xc0");
  // {"x": 1.5, "y": 2} with float32 members.
  EXPECT_EQ(Msgpack(Point{1.5f, 2}),
            "\x82\xa1x\xca\x3f\xc0\x00\x00\xa1y\xca\x40\x00\x00\x00"s);
}

TEST(Msgpack, RejectsMalformedBytes) {
  struct Case {
    std::string bytes;
    const char* error;
  };
  const Case cases[] = {
      {"", "malformed MessagePack at byte 0: truncated"},
      {"\xc1", "malformed MessagePack at byte 0: invalid type byte"},
      {"\x81\xa1x", "field \"x\": malformed MessagePack at byte 3: truncated"},
      // A map claiming 2^32-1 pairs in 5 bytes: refused before allocating.
      {"\xdf\xff\xff\xff\xff", "malformed MessagePack at byte 5: truncated"},
      {"\x81\x01\x02",
       "malformed MessagePack at byte 1: object keys must be "
       "strings"},
      {"\x80\x80",
       "malformed MessagePack at byte 1: unexpected bytes after "
       "the value"},
      {"\x81\xa4text\xa2\xff\xfe",
       "field \"text\": malformed MessagePack at byte 7: invalid UTF-8 in "
       "string"},
      {"\x81\xa1"
       "d\xcb\x7f\xf0\x00\x00\x00\x00\x00\x00"s,
       "field \"d\": expected a finite number"},
  };
  for (const Case& c : cases) {
    Everything e;
    const tessera::Status status =
        tessera::decode(tessera::abi::kCodecMsgpack, c.bytes, e);
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.message(), c.error);
  }
}

// --- JSON -------------------------------------------------------------------

std::string Json(const auto& value) {
  std::string out;
  tessera::encode(tessera::abi::kCodecJson, value, out);
  return out;
}

TEST(Json, WritesCompactText) {
  EXPECT_EQ(Json(Point{1.5f, 2}), R"({"x":1.5,"y":2})");
  EXPECT_EQ(
      Json(MakeEverything().history),
      R"([{"move_to":{"x":1,"y":2}},{"stop":{}},{"set_name":{"name":"q"}}])");
  EXPECT_EQ(Json(0.1f), "0.1");
  EXPECT_EQ(Json(0.1), "0.1");
  EXPECT_EQ(Json(1.0 / 3), "0.3333333333333333");
  EXPECT_EQ(Json(1e300), "1e+300");
  EXPECT_EQ(Json(std::numeric_limits<double>::quiet_NaN()), "null");
  EXPECT_EQ(Json(std::numeric_limits<std::int64_t>::min()),
            "-9223372036854775808");
  EXPECT_EQ(Json(std::string("a\"\\\n\x01\x7f")), R"("a\"\\\n\u0001)"
                                                  "\x7f\"");
  // Invalid UTF-8 becomes U+FFFD so the output stays valid JSON.
  EXPECT_EQ(Json(std::string("\xff"
                             "a")),
            R"("\ufffda")");
  EXPECT_EQ(Json(std::vector<std::string>{}), "[]");
  EXPECT_EQ(Json(std::map<std::string, bool>{{"a", true}}), R"({"a":true})");
}

TEST(Json, DecodesEscapes) {
  SetName s;
  ASSERT_TRUE(tessera::decode(tessera::abi::kCodecJson,
                              R"({"name":"\u00e9\ud83d\ude00\n\/\"\\\t"})", s)
                  .ok());
  EXPECT_EQ(s.name, "\xc3\xa9\xf0\x9f\x98\x80\n/\"\\\t");
}

TEST(Json, RejectsMalformedText) {
  struct Case {
    const char* text;
    const char* error;
  };
  const Case cases[] = {
      {"", "malformed JSON at byte 0: unexpected end of input"},
      {"{", "malformed JSON at byte 1: unexpected end of input"},
      {R"({"x":1,})", "malformed JSON at byte 7: expected a string key"},
      {R"({"x" 1})", "malformed JSON at byte 5: expected ':'"},
      {R"({"x":1 "y":2})", "malformed JSON at byte 7: expected ',' or '}'"},
      {R"({"x":01})", "malformed JSON at byte 6: expected ',' or '}'"},
      {R"({"x":1.})", "field \"x\": malformed JSON at byte 5: invalid number"},
      {R"({"x":-})", "field \"x\": malformed JSON at byte 5: invalid number"},
      {R"({"x":NaN})",
       "field \"x\": malformed JSON at byte 5: expected a "
       "value"},
      {R"({"x":1e999})",
       "field \"x\": malformed JSON at byte 5: number out of range"},
      {R"({"x":1} x)",
       "malformed JSON at byte 8: unexpected text after the value"},
      {R"({"x":1}/**/)",
       "malformed JSON at byte 7: unexpected text after the value"},
      {R"({"a":tru})",
       "field \"a\": malformed JSON at byte 5: invalid literal"},
      {R"({"a":"x)",
       "field \"a\": malformed JSON at byte 7: unterminated "
       "string"},
      {"{\"a\":\"\x01\"}",
       "field \"a\": malformed JSON at byte 6: control character in string"},
      {"{\"a\":\"\xc0\xaf\"}",
       "field \"a\": malformed JSON at byte 6: invalid UTF-8 in string"},
      {R"({"a":"\x"})",
       "field \"a\": malformed JSON at byte 6: invalid escape"},
      {R"({"a":"\ud800"})",
       "field \"a\": malformed JSON at byte 12: unpaired surrogate"},
      {R"({"a":"\udc00"})",
       "field \"a\": malformed JSON at byte 12: unpaired surrogate"},
      {R"({"a":"\u12g4"})",
       "field \"a\": malformed JSON at byte 8: invalid \\u escape"},
      {R"({"a":[1,]})",
       "field \"a\": malformed JSON at byte 8: expected a value after ','"},
  };
  for (const Case& c : cases) {
    Everything e;
    const tessera::Status status =
        tessera::decode(tessera::abi::kCodecJson, c.text, e);
    ASSERT_FALSE(status.ok()) << c.text;
    EXPECT_EQ(status.message(), c.error) << c.text;
  }
}

TEST(Fields, TagsAreSnakeCase) {
  EXPECT_EQ(tessera::tag_of<MoveTo>(), "move_to");
  EXPECT_EQ(tessera::tag_of<Stop>(), "stop");
  EXPECT_EQ(tessera::tag_of<SetName>(), "set_name");
}

TEST(Match, DispatchesOnTheAlternative) {
  const Input in = MoveTo{3, 4};
  const float sum = tessera::match(
      in, [](const MoveTo& m) { return m.x + m.y; },
      [](const Stop&) { return 0.0f; }, [](const SetName&) { return -1.0f; });
  EXPECT_EQ(sum, 7.0f);
}

}  // namespace sdk_test
