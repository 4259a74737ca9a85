// Decoder: hand-built payloads, and refusal of malformed ones.
#include "replication/decoder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "replication/bit_io.h"

namespace tessera::replication {
namespace {

using ::testing::StartsWith;

std::string Baseline(double precision = 0.5) {
  std::string p(1, '\x01');
  PutF64(p, precision);
  return p;
}

// A baseline spawning ids 3 and 7 at q = (1, 2, 3) and (-4, 0, 0); 7 has
// component 2 = "hi".
std::string TwoEntities() {
  std::string p = Baseline();
  PutVarint(p, 0);  // despawns
  PutVarint(p, 2);  // spawns
  PutVarint(p, 3);
  PutVarint(p, ZigZag(1));
  PutVarint(p, ZigZag(2));
  PutVarint(p, ZigZag(3));
  PutVarint(p, 0);
  PutVarint(p, 7 - 3 - 1);
  PutVarint(p, ZigZag(-4));
  PutVarint(p, 0);
  PutVarint(p, 0);
  PutVarint(p, 1);
  p.push_back(2);
  PutVarint(p, 2);
  p += "hi";
  PutVarint(p, 0);  // updates
  return p;
}

// An update payload header (flags 0, no despawns or spawns) with `count`
// records and the given bit section.
std::string Updates(uint64_t count, const std::string& bits, int k = 0) {
  std::string p(1, '\0');
  PutVarint(p, 0);
  PutVarint(p, 0);
  PutVarint(p, count);
  for (int a = 0; a < 3; ++a) p.push_back(static_cast<char>(k));
  PutVarint(p, bits.size());
  p += bits;
  return p;
}

TEST(DecoderTest, AppliesHandBuiltPayloads) {
  Decoder d;
  ASSERT_TRUE(d.Apply(TwoEntities()).ok());
  ASSERT_EQ(d.entities().size(), 2u);
  EXPECT_EQ(d.precision(), 0.5);
  EXPECT_EQ(d.entered(), (std::vector<uint64_t>{3, 7}));
  const DecodedEntity* e = d.Find(3);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(d.Coordinate(*e, 2), 1.5);
  ASSERT_EQ(d.Find(7)->components.size(), 1u);
  EXPECT_EQ(d.Find(7)->components[0].bytes, "hi");

  // Update 3: x += 2 (mask X only) and 7: set component 2 to "" and add
  // component 9 = "z" (mask C).
  std::string bits;
  BitWriter w(&bits);
  w.WriteExpGolomb(3, 0);          // id 3
  w.Write(0, 1);                   // new mask
  w.Write(0x8, 4);                 // X
  w.WriteExpGolomb(ZigZag(2), 0);  // dx
  w.WriteExpGolomb(7 - 3 - 1, 0);  // id 7
  w.Write(0, 1);
  w.Write(0x1, 4);  // C
  w.Flush();
  std::string p = Updates(2, bits);
  PutVarint(p, 2);
  p.push_back(2);
  PutVarint(p, 1);  // len 0
  p.push_back(9);
  PutVarint(p, 2);
  p += "z";
  ASSERT_TRUE(d.Apply(p).ok()) << d.Apply(p).ToString();
  EXPECT_EQ(d.Find(3)->q[0], 3);
  ASSERT_EQ(d.Find(7)->components.size(), 2u);
  EXPECT_EQ(d.Find(7)->components[0].bytes, "");
  EXPECT_EQ(d.Find(7)->components[1].bytes, "z");
  EXPECT_TRUE(d.entered().empty());

  // Despawn 7, spawn 7 again (reused), remove nothing else.
  std::string q(1, '\0');
  PutVarint(q, 1);
  PutVarint(q, 7);
  PutVarint(q, 1);
  PutVarint(q, 7);
  for (int a = 0; a < 4; ++a) PutVarint(q, 0);
  PutVarint(q, 0);
  ASSERT_TRUE(d.Apply(q).ok());
  EXPECT_EQ(d.left(), std::vector<uint64_t>{7});
  EXPECT_EQ(d.entered(), std::vector<uint64_t>{7});
  EXPECT_TRUE(d.Find(7)->components.empty());

  // A baseline: 3 is not spawned again, so it has left.
  std::string b = Baseline(0.25);
  PutVarint(b, 0);
  PutVarint(b, 1);
  PutVarint(b, 7);
  for (int a = 0; a < 4; ++a) PutVarint(b, 0);
  PutVarint(b, 0);
  ASSERT_TRUE(d.Apply(b).ok());
  EXPECT_EQ(d.left(), std::vector<uint64_t>{3});
  EXPECT_EQ(d.entered(), std::vector<uint64_t>{7});
  EXPECT_EQ(d.precision(), 0.25);
}

TEST(DecoderTest, IgnoresPayloadsBeforeTheFirstBaseline) {
  Decoder d;
  std::string p(1, '\0');
  PutVarint(p, 0);
  PutVarint(p, 0);
  PutVarint(p, 0);
  Status s = d.Apply(p);
  EXPECT_TRUE(Decoder::Ignored(s));
  EXPECT_THAT(s.message(), StartsWith("waiting for a baseline"));
  EXPECT_FALSE(d.has_baseline());
  ASSERT_TRUE(d.Apply(TwoEntities()).ok());
  EXPECT_TRUE(d.Apply(p).ok());
}

struct BadCase {
  const char* name;
  std::string payload;
  const char* message;  // what the message starts with, after the prefix
};

std::vector<BadCase> BadCases() {
  std::vector<BadCase> out;
  const std::string valid = TwoEntities();
  out.push_back({"empty", "", "truncated"});
  out.push_back({"flag bits", "\x04" + valid.substr(1), "flags bits 2-7"});
  out.push_back(
      {"short precision", valid.substr(0, 5), "truncated: precision"});
  for (double bad : {0.0, -1.0, std::nan("")}) {
    std::string p = Baseline(bad);
    p += std::string(3, '\0');
    out.push_back({"bad precision", p, "precision is not a finite number"});
  }
  out.push_back({"trailing", valid + "x", "trailing bytes"});
  out.push_back({"truncated", valid.substr(0, valid.size() - 3), "truncated"});
  {
    std::string p = Baseline();
    PutVarint(p, 1);
    PutVarint(p, 3);
    PutVarint(p, 0);
    PutVarint(p, 0);
    out.push_back(
        {"despawn unknown", p, "despawn of entity id 3, which is not held"});
  }
  {
    std::string p = Baseline();
    PutVarint(p, 0);
    PutVarint(p, 1);
    PutVarint(p, uint64_t{1} << 53);
    for (int a = 0; a < 4; ++a) PutVarint(p, 0);
    PutVarint(p, 0);
    out.push_back({"spawn id range", p, "spawn id out of range"});
  }
  {
    std::string p = Baseline();
    PutVarint(p, 0);
    PutVarint(p, 2);
    PutVarint(p, 5);
    for (int a = 0; a < 4; ++a) PutVarint(p, 0);
    PutVarint(p, ~uint64_t{0});  // wraps around to id 5 again
    for (int a = 0; a < 4; ++a) PutVarint(p, 0);
    PutVarint(p, 0);
    out.push_back({"spawn id wraps", p, "spawn id out of range"});
  }
  {
    std::string p = Baseline();
    PutVarint(p, 0);
    PutVarint(p, 1);
    PutVarint(p, 5);
    PutVarint(p, ZigZag((int64_t{1} << 52) + 1));
    for (int a = 0; a < 3; ++a) PutVarint(p, 0);
    PutVarint(p, 0);
    out.push_back({"q range", p, "spawn of entity id 5: |q| above 2^52"});
  }
  {
    std::string p = Baseline();
    PutVarint(p, 0);
    PutVarint(p, 1);
    PutVarint(p, 5);
    for (int a = 0; a < 3; ++a) PutVarint(p, 0);
    PutVarint(p, 2);
    for (int c : {4, 4}) {
      p.push_back(static_cast<char>(c));
      PutVarint(p, 0);
    }
    PutVarint(p, 0);
    out.push_back(
        {"component order", p, "spawn of entity id 5: component ids"});
  }
  return out;
}

TEST(DecoderTest, RefusesMalformedPayloads) {
  for (const BadCase& c : BadCases()) {
    Decoder d;
    ASSERT_TRUE(d.Apply(TwoEntities()).ok());
    Status s = d.Apply(c.payload);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << c.name;
    EXPECT_THAT(
        s.message(),
        StartsWith(std::string("malformed entities payload: ") + c.message))
        << c.name;
    // It then waits for a baseline again.
    EXPECT_FALSE(d.has_baseline()) << c.name;
    EXPECT_TRUE(d.entities().empty()) << c.name;
  }
}

// Update payloads applied on top of TwoEntities().
TEST(DecoderTest, RefusesMalformedUpdates) {
  struct Case {
    const char* name;
    std::string payload;
    const char* message;
  };
  std::vector<Case> cases;
  auto bits = [](auto write) {
    std::string b;
    BitWriter w(&b);
    write(w);
    w.Flush();
    return b;
  };
  cases.push_back({"unknown id", Updates(1, bits([](BitWriter& w) {
                                           w.WriteExpGolomb(4, 0);
                                           w.Write(1, 1);
                                           w.WriteExpGolomb(0, 0);
                                           w.WriteExpGolomb(0, 0);
                                         })),
                   "update of entity id 4, which is not held"});
  {
    std::string p = Updates(1, bits([](BitWriter& w) {
                              w.WriteExpGolomb(3, 0);
                              w.Write(1, 1);
                              w.WriteExpGolomb(0, 0);
                              w.WriteExpGolomb(0, 0);
                            }),
                            33);
    cases.push_back({"order", p, "Exp-Golomb order 33 above 32"});
  }
  cases.push_back({"too many records", Updates(2, bits([](BitWriter& w) {
                                                 w.WriteExpGolomb(3, 0);
                                                 w.Write(1, 1);
                                                 w.WriteExpGolomb(0, 0);
                                                 w.WriteExpGolomb(0, 0);
                                               })),
                   "truncated: update record 1"});
  cases.push_back({"count above the section",
                   Updates(9, std::string(2, '\xff')),
                   "truncated: bit section records"});
  cases.push_back({"bit section trailing", Updates(1, bits([](BitWriter& w) {
                                                     w.WriteExpGolomb(3, 0);
                                                     w.Write(1, 1);
                                                     w.WriteExpGolomb(0, 0);
                                                     w.WriteExpGolomb(0, 0);
                                                     w.Write(0, 8);
                                                   })),
                   "trailing bytes in the bit section"});
  cases.push_back({"q overflow", Updates(1, bits([](BitWriter& w) {
                                           w.WriteExpGolomb(3, 0);
                                           w.Write(0, 1);
                                           w.Write(0x8, 4);
                                           w.WriteExpGolomb(
                                               ZigZag(int64_t{1} << 52), 0);
                                         })),
                   "update of entity id 3: |q| above 2^52"});
  cases.push_back({"component section missing",
                   Updates(1, bits([](BitWriter& w) {
                             w.WriteExpGolomb(7, 0);
                             w.Write(0, 1);
                             w.Write(0x1, 4);
                           })),
                   "truncated: component changes"});
  {
    std::string p = Updates(1, bits([](BitWriter& w) {
                              w.WriteExpGolomb(7, 0);
                              w.Write(0, 1);
                              w.Write(0x1, 4);
                            }));
    PutVarint(p, 1);
    p.push_back(2);
    PutVarint(p, 10);
    p += "short";
    cases.push_back({"component bytes", p, "truncated: component bytes"});
  }
  {
    std::string p = Updates(0, "");
    p.resize(4);  // update_count 0 and nothing after it
    p += "zz";
    cases.push_back({"trailing after updates", p, "trailing bytes"});
  }
  for (const Case& c : cases) {
    Decoder d;
    ASSERT_TRUE(d.Apply(TwoEntities()).ok());
    Status s = d.Apply(c.payload);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << c.name;
    EXPECT_THAT(
        s.message(),
        StartsWith(std::string("malformed entities payload: ") + c.message))
        << c.name;
  }
}

}  // namespace
}  // namespace tessera::replication
