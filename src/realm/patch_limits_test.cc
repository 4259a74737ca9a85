// DecodePatch on hostile bytes: each DecodeLimits breach, truncated and
// malformed input; none of them changes the KeyTable.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "realm/patch.h"
#include "realm/patch_testing.h"

namespace tessera::realm {
namespace {

using patch_testing::AppendOp;
using patch_testing::Bytes;
using patch_testing::DeleteOp;
using patch_testing::SetOp;

// A decoder table that already knows "a" (id 0) and "b" (id 1).
KeyTable KnownAB() {
  KeyTable keys;
  EXPECT_TRUE(keys.Learn(0, "a").ok());
  EXPECT_TRUE(keys.Learn(1, "b").ok());
  return keys;
}

// Decodes `bytes` with a table knowing "a" and "b", expects `code` and
// the table unchanged; returns the message.
std::string Breach(const std::string& bytes, StatusCode code,
                   const DecodeLimits& limits = {}) {
  KeyTable keys = KnownAB();
  Result<Patch> patch = DecodePatch(Bytes(bytes), &keys, limits);
  EXPECT_FALSE(patch.ok());
  EXPECT_EQ(patch.status().code(), code) << patch.status().ToString();
  EXPECT_EQ(keys.size(), 2u);
  EXPECT_EQ(keys.IdOf("a"), 0u);
  EXPECT_EQ(keys.IdOf("b"), 1u);
  return patch.status().message();
}

// Encodes on a table in step with KnownAB's: other keys are announced.
std::string Fresh(const Patch& patch) {
  KeyTable keys = KnownAB();
  return EncodePatch(patch, &keys);
}

// The bytes of a string literal, NULs included.
template <size_t N>
std::string B(const char (&text)[N]) {
  return std::string(text, N - 1);
}

bool Has(const std::string& text, const char* part) {
  return text.find(part) != std::string::npos;
}

void ExpectDecodes(const std::string& bytes, const DecodeLimits& limits) {
  KeyTable keys = KnownAB();
  Result<Patch> patch = DecodePatch(Bytes(bytes), &keys, limits);
  EXPECT_TRUE(patch.ok()) << patch.status().ToString();
}

TEST(RealmLimitsTest, MaxBytes) {
  const std::string bytes = Fresh({SetOp({"k"}, std::string(100, 'x'))});
  DecodeLimits limits;
  limits.max_bytes = bytes.size() - 1;
  EXPECT_TRUE(
      Has(Breach(bytes, StatusCode::kResourceExhausted, limits), "max_bytes"));
  limits.max_bytes = bytes.size();
  ExpectDecodes(bytes, limits);
}

TEST(RealmLimitsTest, MaxOps) {
  Patch patch(65, SetOp({"k"}, 1));
  EXPECT_TRUE(
      Has(Breach(Fresh(patch), StatusCode::kResourceExhausted), "max_ops"));
  patch.pop_back();
  ExpectDecodes(Fresh(patch), {});
  // A count the bytes cannot hold is refused before anything is reserved.
  EXPECT_TRUE(
      Has(Breach("\xdd\xff\xff\xff\xff", StatusCode::kResourceExhausted),
          "max_ops"));
}

TEST(RealmLimitsTest, MaxKeyLength) {
  const std::string key(129, 'k');
  const std::string why =
      Breach(Fresh({SetOp({key}, 1)}), StatusCode::kResourceExhausted);
  EXPECT_TRUE(Has(why, "max_key_length")) << why;
  EXPECT_TRUE(Has(why, "op 0 path")) << why;
  // Keys inside values too.
  Json value = Json::object();
  value[key] = 1;
  EXPECT_TRUE(
      Has(Breach(Fresh({SetOp({"k"}, value)}), StatusCode::kResourceExhausted),
          "max_key_length"));
  ExpectDecodes(Fresh({SetOp({std::string(128, 'k')}, 1)}), {});
}

TEST(RealmLimitsTest, MaxDepthOfPathsAndValues) {
  Path deep;
  for (int i = 0; i < 33; ++i) deep.emplace_back("k");
  EXPECT_TRUE(
      Has(Breach(Fresh({DeleteOp(deep)}), StatusCode::kResourceExhausted),
          "max_depth"));
  deep.pop_back();
  ExpectDecodes(Fresh({DeleteOp(deep)}), {});
  Json nested = 1;
  for (int i = 0; i < 33; ++i) nested = Json::array({nested});
  EXPECT_TRUE(
      Has(Breach(Fresh({SetOp({}, nested)}), StatusCode::kResourceExhausted),
          "max_depth"));
  // The path counts: 30 segments leave room for two levels of value.
  Json two = Json::array({Json::array({1})});
  Path thirty(30, PathSegment(int64_t{0}));
  ExpectDecodes(Fresh({SetOp(thirty, two)}), {});
  thirty.emplace_back(int64_t{0});
  EXPECT_TRUE(
      Has(Breach(Fresh({SetOp(thirty, two)}), StatusCode::kResourceExhausted),
          "max_depth"));
}

TEST(RealmLimitsTest, MaxExpandedLeaves) {
  Json flat = Json::array();
  for (int i = 0; i < 257; ++i) flat.push_back(i);
  EXPECT_TRUE(
      Has(Breach(Fresh({SetOp({"k"}, flat)}), StatusCode::kResourceExhausted),
          "max_expanded_leaves"));
  flat.erase(flat.end() - 1);
  ExpectDecodes(Fresh({SetOp({"k"}, flat)}), {});
  // Spread over nesting, with empty containers counted as leaves.
  Json spread = Json::array();
  for (int i = 0; i < 20; ++i) {
    Json row = Json::array({Json::array(), Json::object()});
    for (int j = 0; j < 11; ++j) row.push_back(j);
    spread.push_back(row);
  }
  EXPECT_TRUE(
      Has(Breach(Fresh({SetOp({"k"}, spread)}), StatusCode::kResourceExhausted),
          "max_expanded_leaves"));
  // The limit is per op: two ops of 200 leaves each are fine.
  Json two_hundred = Json::array();
  for (int i = 0; i < 200; ++i) two_hundred.push_back(i);
  ExpectDecodes(Fresh({SetOp({"k"}, two_hundred), SetOp({"j"}, two_hundred)}),
                {});
  // A huge announced count is refused from its header alone.
  EXPECT_TRUE(Has(Breach(B("\x91\x93\x00\x90\xdd\xff\xff\xff\xff"),
                         StatusCode::kResourceExhausted),
                  "max_expanded_leaves"));
}

TEST(RealmLimitsTest, HugeCountsUnderLooseLimitsAreTruncation) {
  DecodeLimits loose;
  loose.max_ops = ~size_t{0};
  loose.max_expanded_leaves = ~size_t{0};
  EXPECT_TRUE(
      Has(Breach("\xdd\xff\xff\xff\xff", StatusCode::kInvalidArgument, loose),
          "bytes left"));
  EXPECT_TRUE(Has(Breach(B("\x91\x93\x00\x90\xdf\xff\xff\xff\xff"),
                         StatusCode::kInvalidArgument, loose),
                  "bytes left"));
}

TEST(RealmLimitsTest, EveryTruncationIsInvalidAndLearnsNothing) {
  const std::string bytes = Fresh(
      {SetOp({"x", int64_t{1000}}, Json::parse(R"({"c":[1.5,"s",-70000]})")),
       AppendOp({"y"}, std::string(40, 'q')), DeleteOp({"x"})});
  for (size_t n = 0; n < bytes.size(); ++n) {
    Breach(bytes.substr(0, n), StatusCode::kInvalidArgument);
  }
  ExpectDecodes(bytes, {});
}

struct GarbageCase {
  std::string bytes;
  const char* message_part;
};

TEST(RealmLimitsTest, MalformedBytesAreInvalidAndLearnNothing) {
  const GarbageCase cases[] = {
      {B("\xc1"), "unsupported MessagePack type 0xc1"},
      {B("\x80"), "expected a list of ops, got map"},
      {B("\x91\x05"), "expected an op"},
      {B("\x91\x90"), "empty op"},
      {B("\x91\x93\x03\x90\xc0"), "expected an opcode"},
      {B("\x91\x93\x01\x90\xc0"), "delete takes 2 fields, got 3"},
      {B("\x91\x92\x00\x90"), "set takes 3 fields, got 2"},
      {B("\x91\x92\x01\x91\x07"), "unknown key id 7"},
      {B("\x91\x92\x01\x91\x92\x05\xa1z"), "expected the next id 2"},
      {B("\x91\x92\x01\x91\x92\x02\xa1\x61"), "\"a\" announced again"},
      {B("\x91\x92\x01\x92\x92\x02\xa1z\x92\x03\xa1z"),
       "\"z\" announced again"},
      {B("\x91\x92\x01\x91\xc0"), "expected a key"},
      {B("\x91\x92\x01\x91\x92\x02\x05"), "expected a string"},
      {B("\x91\x92\x01\x91\x92\x02\xa1\xff"), "not valid UTF-8"},
      {B("\x91\x93\x00\x90\xa2\xed\xa0"), "not valid UTF-8"},
      {B("\x91\x93\x00\x90\x82\x00\x01\x00\x02"), "duplicate key \"a\""},
      {B("\x91\x93\x00\x90\x81\xff\x01"), "expected a key"},
      {B("\x91\x93\x00\x90\xcb\x7f\xf8\x00\x00\x00\x00\x00\x00"), "not finite"},
      {B("\x91\x93\x00\x90\xc4\x01\x00"), "unsupported MessagePack type 0xc4"},
      {B("\x91\x93\x00\x90\xd4\x01\x00"), "unsupported MessagePack type 0xd4"},
      {B("\x91\x92\x01\x90\xc0"), "1 bytes after the last op"},
      {B("\x91\x92\x01\x90\x00"), "1 bytes after the last op"},
  };
  for (const GarbageCase& c : cases) {
    const std::string why = Breach(c.bytes, StatusCode::kInvalidArgument);
    EXPECT_TRUE(Has(why, c.message_part)) << why << " / " << c.message_part;
  }
}

TEST(RealmLimitsTest, AFailureLaterInAPatchForgetsItsEarlierAnnounces) {
  // Op 0 announces "fresh" (id 2); op 1 is broken.
  const std::string bytes("\x92\x92\x01\x91\x92\x02\xa5\x66resh\x92\x07\x90");
  Breach(bytes, StatusCode::kInvalidArgument);
  KeyTable keys = KnownAB();
  ASSERT_FALSE(DecodePatch(Bytes(bytes), &keys).ok());
  // The same announce decodes afterwards: the failed attempt left no trace.
  const std::string good("\x91\x92\x01\x91\x92\x02\xa5\x66resh");
  Result<Patch> patch = DecodePatch(Bytes(good), &keys);
  ASSERT_TRUE(patch.ok()) << patch.status().ToString();
  EXPECT_EQ(*patch, (Patch{DeleteOp({"fresh"})}));
  EXPECT_EQ(keys.IdOf("fresh"), 2u);
}

}  // namespace
}  // namespace tessera::realm
