// Ingress limits: parsing a kind's "limits", what a connection's write
// frames are refused for, the token bucket on a fake time, and breaches
// counted up to a forced detach.
#include "realm/limits.h"

#include <gtest/gtest.h>

#include <string>

namespace tessera::realm {
namespace {

constexpr int64_t kSecond = 1000000;

std::string ParseError(const char* text) {
  Result<RealmLimits> limits = ParseRealmLimits(Json::parse(text), "limits");
  EXPECT_FALSE(limits.ok()) << text;
  return limits.ok() ? "" : limits.status().message();
}

Patch Ops(size_t n) {
  Patch patch;
  for (size_t i = 0; i < n; ++i) {
    patch.push_back(Op{OpKind::kSet, {"k"}, static_cast<int64_t>(i)});
  }
  return patch;
}

RealmLimits Rate(int64_t per_second, int64_t burst) {
  RealmLimits l;
  l.write_rate_per_second = per_second;
  l.write_rate_burst = burst;
  return l;
}

bool StartsWith(const std::string& text, const std::string& prefix) {
  return text.rfind(prefix, 0) == 0;
}

TEST(RealmLimitsParse, EmptyIsTheDefaults) {
  Result<RealmLimits> l = ParseRealmLimits(Json::object(), "limits");
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->max_patches_per_frame, 64);
  EXPECT_EQ(l->max_frame_bytes, 65536);
  EXPECT_EQ(l->max_record_key_length, 128);
  EXPECT_EQ(l->max_expanded_leaves, 256);
  EXPECT_EQ(l->write_rate_per_second, 100);
  EXPECT_EQ(l->write_rate_burst, 200);
  EXPECT_EQ(l->max_breaches_before_detach, 10);
}

TEST(RealmLimitsParse, AKindMayLowerOrRaiseWithinTheCaps) {
  Result<RealmLimits> l = ParseRealmLimits(
      Json::parse(R"({"maxPatchesPerFrame": 8, "maxFrameBytes": 1048576,
                      "writeRatePerSecond": 1000, "writeRateBurst": 20000,
                      "maxBreachesBeforeDetach": 1})"),
      "limits");
  ASSERT_TRUE(l.ok()) << l.status().message();
  EXPECT_EQ(l->max_patches_per_frame, 8);
  EXPECT_EQ(l->max_frame_bytes, 1048576);
  EXPECT_EQ(l->write_rate_burst, 20000);
  EXPECT_EQ(l->max_breaches_before_detach, 1);
  EXPECT_EQ(l->max_record_key_length, 128);
}

TEST(RealmLimitsParse, RefusalsNameTheKey) {
  EXPECT_EQ(ParseError(R"({"maxPatchesPerFrame": 0})"),
            "limits.maxPatchesPerFrame: must be in 1..4096, got 0");
  EXPECT_EQ(ParseError(R"({"maxFrameBytes": -5})"),
            "limits.maxFrameBytes: must be in 1..4194304, got -5");
  EXPECT_EQ(ParseError(R"({"writeRateBurst": 20001})"),
            "limits.writeRateBurst: must be in 1..20000, got 20001");
  EXPECT_EQ(ParseError(R"({"maxExpandedLeaves": 18446744073709551615})"),
            "limits.maxExpandedLeaves: must be in 1..65536, got "
            "18446744073709551615");
  EXPECT_EQ(ParseError(R"({"maxRecordKeyLength": "128"})"),
            "limits.maxRecordKeyLength: expected an integer, got a string");
  EXPECT_EQ(ParseError(R"({"writeRatePerSecond": 2.5})"),
            "limits.writeRatePerSecond: expected an integer, got a "
            "fractional number");
  EXPECT_EQ(ParseError(R"({"maxBreaches": 3})"),
            "limits: unknown field \"maxBreaches\" (known: "
            "maxPatchesPerFrame, maxFrameBytes, maxRecordKeyLength, "
            "maxExpandedLeaves, writeRatePerSecond, writeRateBurst, "
            "maxBreachesBeforeDetach)");
  EXPECT_EQ(ParseError("[]"), "limits: expected an object, got an array");
}

TEST(RealmLimitsAdvertised, ClientsLearnTheLimitsTheyMustKeep) {
  RealmLimits l = Rate(50, 70);
  l.max_frame_bytes = 1000;
  EXPECT_EQ(AdvertisedLimits(l), Json::parse(R"({
    "maxPatchesPerFrame": 64, "maxFrameBytes": 1000,
    "maxRecordKeyLength": 128, "maxExpandedLeaves": 256,
    "writeRatePerSecond": 50, "writeRateBurst": 70})"));
  DecodeLimits d = l.ToDecodeLimits();
  EXPECT_EQ(d.max_bytes, 1000u);
  EXPECT_EQ(d.max_ops, 64u);
}

TEST(RealmIngress, OversizedFramesAreRefused) {
  ConnectionIngress in{RealmLimits{}};
  EXPECT_TRUE(in.Admit(65536, Ops(1), 0).ok());
  Status s = in.Admit(65537, Ops(1), 0);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(s.message(),
            "limits_exceeded: maxFrameBytes: the frame is 65537 bytes, at "
            "most 65536");
}

TEST(RealmIngress, TooManyOpsInOneFrameAreRefused) {
  ConnectionIngress in{RealmLimits{}};
  EXPECT_TRUE(in.Admit(10, Ops(64), 0).ok());
  Status s = in.Admit(10, Ops(65), 0);
  EXPECT_EQ(s.message(),
            "limits_exceeded: maxPatchesPerFrame: 65 ops in one frame, at "
            "most 64; split the write");
}

TEST(RealmIngress, LongKeysInPathsAndValuesAreRefused) {
  ConnectionIngress in{RealmLimits{}};
  const std::string ok_key(128, 'k');
  const std::string long_key(129, 'k');
  EXPECT_TRUE(in.Admit(10, {Op{OpKind::kSet, {ok_key}, 1}}, 0).ok());
  Status path = in.Admit(10, {Op{OpKind::kSet, {"a", long_key}, 1}}, 0);
  EXPECT_EQ(path.message(),
            "limits_exceeded: maxRecordKeyLength: op 0 has a key of 129 "
            "bytes, at most 128");
  Json nested = {{"a", {{"b", {{long_key, 1}}}}}};
  Patch patch = Ops(2);
  patch.push_back(Op{OpKind::kAppend, {"list"}, nested});
  Status value = in.Admit(10, patch, 0);
  EXPECT_TRUE(
      StartsWith(value.message(), "limits_exceeded: maxRecordKeyLength: op 2 "))
      << value.message();
}

TEST(RealmIngress, ValuesExpandingToTooManyLeavesAreRefused) {
  ConnectionIngress in{RealmLimits{}};
  Json fits = Json::array();
  for (int i = 0; i < 255; ++i) fits.push_back(i);
  fits.push_back(Json::object());  // an empty container is one leaf
  EXPECT_TRUE(in.Admit(10, {Op{OpKind::kSet, {"a"}, fits}}, 0).ok());
  Json over = {{"x", fits}, {"y", 1}};
  Status s = in.Admit(10, {Op{OpKind::kSet, {"a"}, over}}, 0);
  EXPECT_EQ(s.message(),
            "limits_exceeded: maxExpandedLeaves: op 0 expands to more than "
            "256 leaves");
}

TEST(RealmIngress, TheWriteRateIsATokenBucketOnThePassedInTime) {
  ConnectionIngress in{Rate(10, 3)};  // one token per 100 ms, three at most
  const int64_t t0 = 5 * kSecond;
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(in.Admit(10, Ops(1), t0).ok());
  Status s = in.Admit(10, Ops(1), t0);
  EXPECT_EQ(s.message(),
            "limits_exceeded: writeRatePerSecond: more than 10 writes/s "
            "(burst 3); retry in 100 ms");
  EXPECT_TRUE(StartsWith(in.Admit(10, Ops(1), t0 + 40000).message(),
                         "limits_exceeded: writeRatePerSecond"));
  EXPECT_TRUE(in.Admit(10, Ops(1), t0 + 100000).ok());
  EXPECT_FALSE(in.Admit(10, Ops(1), t0 + 100000).ok());
  // A long silence refills only up to the burst.
  const int64_t later = t0 + 3600 * kSecond;
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(in.Admit(10, Ops(1), later).ok());
  EXPECT_FALSE(in.Admit(10, Ops(1), later).ok());
  // Time going backwards refills nothing.
  EXPECT_FALSE(in.Admit(10, Ops(1), t0).ok());
}

TEST(RealmIngress, TheRateHintShrinksAsTokensRefill) {
  ConnectionIngress in{Rate(10, 1)};
  EXPECT_TRUE(in.Admit(10, Ops(1), 0).ok());
  EXPECT_TRUE(StartsWith(in.Admit(10, Ops(1), 60000).message(),
                         "limits_exceeded: writeRatePerSecond"));
  EXPECT_NE(in.Admit(10, Ops(1), 60000).message().find("retry in 40 ms"),
            std::string::npos);
}

TEST(RealmIngress, RefusedFramesTakeNoToken) {
  ConnectionIngress in{Rate(1, 1)};
  EXPECT_FALSE(in.Admit(1 << 20, Ops(1), 0).ok());
  EXPECT_FALSE(in.Admit(10, Ops(100), 0).ok());
  EXPECT_TRUE(in.Admit(10, Ops(1), 0).ok());
}

TEST(RealmIngress, BreachesPastTheMaximumForceADetach) {
  ConnectionIngress in{RealmLimits{}};
  for (int i = 0; i < 10; ++i) {
    EXPECT_FALSE(in.Admit(1 << 20, Ops(1), 0).ok());
    EXPECT_TRUE(in.Admit(10, Ops(1), 0).ok());  // good frames forgive nothing
  }
  EXPECT_EQ(in.breaches(), 10);
  EXPECT_FALSE(in.should_detach());
  EXPECT_FALSE(in.Admit(10, Ops(65), 0).ok());
  EXPECT_EQ(in.breaches(), 11);
  EXPECT_TRUE(in.should_detach());
}

TEST(RealmIngress, EveryKindOfBreachCounts) {
  RealmLimits l = Rate(1, 1);
  l.max_breaches_before_detach = 3;
  ConnectionIngress in{l};
  EXPECT_TRUE(in.Admit(10, Ops(1), 0).ok());
  EXPECT_FALSE(in.Admit(10, Ops(1), 0).ok());  // rate
  EXPECT_FALSE(in.Admit(10, {Op{OpKind::kSet, {std::string(200, 'k')}, 1}}, 0)
                   .ok());                        // key
  EXPECT_FALSE(in.Admit(70000, Ops(1), 0).ok());  // bytes
  EXPECT_FALSE(in.should_detach());
  EXPECT_FALSE(in.Admit(10, Ops(65), 0).ok());  // ops
  EXPECT_TRUE(in.should_detach());
}

}  // namespace
}  // namespace tessera::realm
