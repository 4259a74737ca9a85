// The MessagePack form of patches (patch.h EncodePatch / DecodePatch) and
// key interning (KeyTable): exact bytes, round trips, interning across
// patches.
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "realm/patch.h"
#include "realm/patch_testing.h"

namespace tessera::realm {
namespace {

using patch_testing::AppendOp;
using patch_testing::Bytes;
using patch_testing::DeleteOp;
using patch_testing::PatchGenerator;
using patch_testing::SetOp;

std::string Hex(const std::string& bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    if (!out.empty()) out += ' ';
    out += kDigits[c >> 4];
    out += kDigits[c & 0xf];
  }
  return out;
}

TEST(RealmKeyTableTest, DenseIdsInOrderOfFirstUse) {
  KeyTable keys;
  bool added = false;
  EXPECT_EQ(keys.Intern("a", &added), 0u);
  EXPECT_TRUE(added);
  EXPECT_EQ(keys.Intern("b", &added), 1u);
  EXPECT_EQ(keys.Intern("a", &added), 0u);
  EXPECT_FALSE(added);
  EXPECT_EQ(keys.size(), 2u);
  ASSERT_NE(keys.Find(1), nullptr);
  EXPECT_EQ(*keys.Find(1), "b");
  EXPECT_EQ(keys.Find(2), nullptr);
  EXPECT_EQ(keys.IdOf("b"), 1u);
  EXPECT_EQ(keys.IdOf("c"), std::nullopt);
}

TEST(RealmKeyTableTest, LearnTakesOnlyTheNextIdAndNewKeys) {
  KeyTable keys;
  EXPECT_TRUE(keys.Learn(0, "a").ok());
  EXPECT_EQ(keys.Learn(2, "b").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(keys.Learn(1, "a").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(keys.size(), 1u);
  EXPECT_TRUE(keys.Learn(1, "b").ok());
  EXPECT_EQ(*keys.Find(1), "b");
}

// The byte format of docs/realms.md "Patches", pinned.
TEST(RealmCodecTest, ExactBytes) {
  const Patch patch = {SetOp({"a", int64_t{1}}, Json::parse(R"({"a":true})")),
                       DeleteOp({"b"}), AppendOp({}, -3)};
  KeyTable keys;
  const std::string first = EncodePatch(patch, &keys);
  EXPECT_EQ(Hex(first),
            "93 "                                // three ops
            "93 00 92 92 00 a1 61 fe 81 00 c3 "  // set [[0,"a"], ~1] {0: true}
            "92 01 91 92 01 a1 62 "              // delete [[1,"b"]]
            "93 02 90 fd");                      // append [] -3
  const std::string second = EncodePatch(patch, &keys);
  EXPECT_EQ(Hex(second), "93 93 00 92 00 fe 81 00 c3 92 01 91 01 93 02 90 fd");
}

// EncodePatchTo writes what EncodePatch does, into a reused buffer.
TEST(RealmCodecTest, EncodePatchToReusesItsBuffer) {
  const Patch patch = {SetOp({"a", int64_t{1}}, Json::parse(R"({"a":true})")),
                       DeleteOp({"b"}), AppendOp({}, -3)};
  KeyTable keys, again;
  std::string out(1000, 'x');
  EncodePatchTo(patch, &keys, nullptr, &out);
  EXPECT_EQ(out, EncodePatch(patch, &again));
  EXPECT_GE(out.capacity(), 1000u);
  EncodePatchTo(patch, &keys, nullptr, &out);
  EXPECT_EQ(Hex(out), "93 93 00 92 00 fe 81 00 c3 92 01 91 01 93 02 90 fd");
}

TEST(RealmCodecTest, WideNumbersAndStrings) {
  const Patch patch = {
      SetOp({"k", int64_t{1} << 40},
            Json::array({std::numeric_limits<uint64_t>::max(),
                         std::numeric_limits<int64_t>::min(), -33, 200, 70000,
                         1.5, std::string(300, 'z'), "naïve"}))};
  KeyTable enc;
  KeyTable dec;
  const std::string bytes = EncodePatch(patch, &enc);
  Result<Patch> back = DecodePatch(Bytes(bytes), &dec);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, patch);
  EXPECT_EQ(PatchToJson(*back).dump(), PatchToJson(patch).dump());
}

TEST(RealmCodecTest, RandomPatchesRoundTripOnOneTablePair) {
  PatchGenerator gen(20261202);
  KeyTable enc;
  KeyTable dec;
  for (int i = 0; i < 2000; ++i) {
    const Patch patch = gen.Next();
    const std::string bytes = EncodePatch(patch, &enc);
    Result<Patch> back = DecodePatch(Bytes(bytes), &dec);
    ASSERT_TRUE(back.ok()) << i << ": " << back.status().ToString();
    ASSERT_EQ(*back, patch) << i;
    ASSERT_EQ(dec.size(), enc.size()) << i;
    // As the patch log stores it: a fresh table, decodable on its own.
    KeyTable log_enc;
    KeyTable log_dec;
    const std::string logged = EncodePatch(patch, &log_enc);
    Result<Patch> replayed = DecodePatch(Bytes(logged), &log_dec);
    ASSERT_TRUE(replayed.ok()) << i << ": " << replayed.status().ToString();
    ASSERT_EQ(*replayed, patch) << i;
  }
  for (uint32_t id = 0; id < enc.size(); ++id) {
    ASSERT_EQ(*dec.Find(id), *enc.Find(id));
  }
}

// A broadcast plans each commit's keys once on the instance's shared
// table; every reader's encoder, whatever its own table holds, writes with
// the plan exactly the bytes it writes without one.
TEST(RealmCodecTest, AKeyPlanChangesNoByteForAnyReader) {
  PatchGenerator gen(20261203);
  KeyTable shared;
  const uint64_t source = NewKeySource();
  // Readers that joined at different times (their tables differ), one
  // encoding with plans and its twin without.
  constexpr int kReaders = 4;
  KeyTable planned[kReaders], plain[kReaders], dec[kReaders];
  for (int i = 0; i < 1500; ++i) {
    const Patch patch = gen.Next();
    const KeyPlan plan = PlanKeys(patch, &shared, source);
    EXPECT_EQ(plan.source, source);
    for (int r = 0; r < kReaders; ++r) {
      if (i < r * 300) continue;  // not joined yet
      const std::string with = EncodePatch(patch, &planned[r], &plan);
      ASSERT_EQ(with, EncodePatch(patch, &plain[r])) << i << " reader " << r;
      Result<Patch> back = DecodePatch(Bytes(with), &dec[r]);
      ASSERT_TRUE(back.ok()) << back.status().ToString();
      ASSERT_EQ(*back, patch);
    }
  }
  // Another shared table (a new instance): the reader's own ids stay, the
  // first table's are forgotten, and the bytes still match.
  KeyTable other;
  const uint64_t other_source = NewKeySource();
  EXPECT_NE(other_source, source);
  for (int i = 0; i < 200; ++i) {
    const Patch patch = gen.Next();
    const KeyPlan plan = PlanKeys(patch, &other, other_source);
    ASSERT_EQ(EncodePatch(patch, &planned[0], &plan),
              EncodePatch(patch, &plain[0]))
        << i;
  }
  // No plan, or a plan without a source: the plain path.
  const Patch patch = gen.Next();
  const KeyPlan none;
  EXPECT_EQ(EncodePatch(patch, &planned[1], &none),
            EncodePatch(patch, &plain[1], nullptr));
}

TEST(RealmCodecTest, SecondPatchSendsKeyIdsOnly) {
  const Patch patch = {
      SetOp({"players", "p-17", "pos"}, Json::parse(R"({"x":1,"y":2})")),
      AppendOp({"players", "p-17", "inventory"},
               Json::parse(R"({"name":"sword","weight":3})"))};
  KeyTable enc;
  KeyTable dec;
  const std::string first = EncodePatch(patch, &enc);
  const size_t keys_after_first = enc.size();
  const std::string second = EncodePatch(patch, &enc);
  EXPECT_EQ(enc.size(), keys_after_first);  // nothing new to announce
  // Each key's text went once; the second patch has one byte per key ref.
  EXPECT_LT(second.size() + 40, first.size())
      << first.size() << " then " << second.size();
  EXPECT_EQ(second.find("players"), std::string::npos);
  for (const std::string& bytes : {first, second}) {
    Result<Patch> back = DecodePatch(Bytes(bytes), &dec);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(*back, patch);
  }
  EXPECT_EQ(dec.size(), keys_after_first);
  // The second patch alone means nothing to a fresh table.
  KeyTable fresh;
  Result<Patch> alone = DecodePatch(Bytes(second), &fresh);
  EXPECT_EQ(alone.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(alone.status().message().find("unknown key id"), std::string::npos);
  EXPECT_EQ(fresh.size(), 0u);
}

TEST(RealmCodecTest, KeyUsedTwiceInOnePatchIsAnnouncedOnce) {
  const Patch patch = {SetOp({"hp"}, Json::parse(R"({"hp":{"hp":1}})"))};
  KeyTable enc;
  const std::string bytes = EncodePatch(patch, &enc);
  EXPECT_EQ(bytes.find("hp"), bytes.rfind("hp"));
  KeyTable dec;
  Result<Patch> back = DecodePatch(Bytes(bytes), &dec);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, patch);
  EXPECT_EQ(dec.size(), 1u);
}

TEST(RealmCodecTest, TheEmptyKeyAndKeysBackAfterManyOthersKeepTheirIds) {
  // More distinct keys than the encoder remembers between lookups, then
  // the first ones again, and "" (which must not pass for a default).
  const Patch patch = {
      SetOp({"a", "", "b"}, Json::parse(R"({"c":1,"d":2,"e":3,"":4})")),
      SetOp({"a", "f", "g"}, Json::parse(R"({"h":1,"a":2,"":3,"b":4})")),
      SetOp({"", "a"}, 5)};
  KeyTable enc;
  KeyTable dec;
  for (int round = 0; round < 2; ++round) {
    Result<Patch> back = DecodePatch(Bytes(EncodePatch(patch, &enc)), &dec);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(*back, patch) << "round " << round;
  }
  EXPECT_EQ(enc.size(), 9u);  // a, "", b, c, d, e, f, g, h
  EXPECT_EQ(*enc.Find(1), "");
}

}  // namespace
}  // namespace tessera::realm
