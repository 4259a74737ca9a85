#include "compute/policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tessera::compute {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

std::string ErrorOf(const Result<Policy>& r) {
  EXPECT_FALSE(r.ok());
  return r.ok() ? "" : r.status().message();
}

TEST(PolicyTest, DefaultsAreTheSeedsAndFitTheCeilings) {
  const Policy p;
  const json j = json::parse(PolicyToJson(p));
  EXPECT_EQ(j, json::parse(R"({"enabled": true, "maxModules": 10,
      "maxTickHz": 10, "fuelPerTick": 200000000, "fuelPerInvoke": 1000000000,
      "maxMemoryMb": 64, "maxRunMs": 200, "maxDbOpsPerTick": 50,
      "maxEgressMsgsPerMin": 600, "maxEgressBytesPerMin": 1000000,
      "failureThreshold": 5, "cooldownMs": 60000, "idleUnloadMs": 300000})"));
  // Every default passes through a patch of itself under the ceilings.
  auto again = ApplyPolicyPatch(Policy{}, PolicyToJson(p), DefaultCeilings());
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(PolicyToJson(*again), PolicyToJson(p));
}

TEST(PolicyTest, JsonKeepsTheApiOrderAndPrintsFractionalHz) {
  Policy p;
  p.max_tick_hz = 2.5;
  p.enabled = false;
  const std::string text = PolicyToJson(p);
  EXPECT_EQ(
      text.rfind("{\"enabled\":false,\"maxModules\":10,\"maxTickHz\":2.5,", 0),
      0u)
      << text;
  EXPECT_THAT(text, HasSubstr("\"idleUnloadMs\":300000}"));
}

TEST(PolicyTest, PatchReplacesOnlyThePresentFields) {
  auto r = ApplyPolicyPatch(
      Policy{}, R"({"maxTickHz": 20, "enabled": false, "fuelPerTick": 5})",
      DefaultCeilings());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->max_tick_hz, 20);
  EXPECT_FALSE(r->enabled);
  EXPECT_EQ(r->fuel_per_tick, 5);
  EXPECT_EQ(r->max_modules, 10);
  EXPECT_EQ(r->cooldown_ms, 60'000);
  auto empty = ApplyPolicyPatch(*r, "{}", DefaultCeilings());
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(PolicyToJson(*empty), PolicyToJson(*r));
}

TEST(PolicyTest, ValueAboveACeilingNamesIt) {
  EXPECT_EQ(ErrorOf(ApplyPolicyPatch(Policy{}, R"({"maxTickHz": 100})",
                                     DefaultCeilings())),
            "maxTickHz 100 exceeds the server ceiling (60)");
  Policy ceilings = DefaultCeilings();
  ceilings.max_tick_hz = 12.5;
  EXPECT_EQ(
      ErrorOf(ApplyPolicyPatch(Policy{}, R"({"maxTickHz": 12.75})", ceilings)),
      "maxTickHz 12.75 exceeds the server ceiling (12.5)");
}

// Every field: its ceiling passes, one above fails naming the ceiling.
TEST(PolicyTest, EveryCeiling) {
  const Policy c = DefaultCeilings();
  const std::vector<std::pair<std::string, int64_t>> ints = {
      {"maxModules", c.max_modules},
      {"fuelPerTick", c.fuel_per_tick},
      {"fuelPerInvoke", c.fuel_per_invoke},
      {"maxMemoryMb", c.max_memory_mb},
      {"maxRunMs", c.max_run_ms},
      {"maxDbOpsPerTick", c.max_db_ops_per_tick},
      {"maxEgressMsgsPerMin", c.max_egress_msgs_per_min},
      {"maxEgressBytesPerMin", c.max_egress_bytes_per_min},
      {"failureThreshold", c.failure_threshold},
      {"cooldownMs", c.cooldown_ms},
      {"idleUnloadMs", c.idle_unload_ms},
  };
  for (const auto& [name, ceiling] : ints) {
    SCOPED_TRACE(name);
    json at = {{name, ceiling}};
    auto ok = ApplyPolicyPatch(Policy{}, at.dump(), c);
    ASSERT_TRUE(ok.ok()) << ok.status().message();
    EXPECT_EQ(json::parse(PolicyToJson(*ok))[name], ceiling);
    json above = {{name, ceiling + 1}};
    EXPECT_EQ(ErrorOf(ApplyPolicyPatch(Policy{}, above.dump(), c)),
              name + " " + std::to_string(ceiling + 1) +
                  " exceeds the server ceiling (" + std::to_string(ceiling) +
                  ")");
  }
  EXPECT_TRUE(ApplyPolicyPatch(Policy{}, R"({"maxTickHz": 60})", c).ok());
  EXPECT_EQ(ErrorOf(ApplyPolicyPatch(Policy{}, R"({"maxTickHz": 60.5})", c)),
            "maxTickHz 60.5 exceeds the server ceiling (60)");
}

TEST(PolicyTest, TheDocumentedCeilings) {
  const json j = json::parse(PolicyToJson(DefaultCeilings()));
  EXPECT_EQ(j["maxModules"], 1000);
  EXPECT_EQ(j["maxTickHz"], 60);
  EXPECT_EQ(j["fuelPerTick"], 2'000'000'000);
  EXPECT_EQ(j["fuelPerInvoke"], 10'000'000'000);
  EXPECT_EQ(j["maxMemoryMb"], 1024);
  EXPECT_EQ(j["maxRunMs"], 10'000);
  EXPECT_EQ(j["maxDbOpsPerTick"], 1000);
  EXPECT_EQ(j["maxEgressMsgsPerMin"], 60'000);
  EXPECT_EQ(j["maxEgressBytesPerMin"], 100'000'000);
  EXPECT_EQ(j["failureThreshold"], 1000);
  EXPECT_EQ(j["cooldownMs"], 86'400'000);
  EXPECT_EQ(j["idleUnloadMs"], 86'400'000);
}

TEST(PolicyTest, Minimums) {
  const Policy c = DefaultCeilings();
  EXPECT_EQ(ErrorOf(ApplyPolicyPatch(Policy{}, R"({"maxModules": 0})", c)),
            "maxModules 0 is below the minimum (1)");
  EXPECT_EQ(ErrorOf(ApplyPolicyPatch(Policy{}, R"({"fuelPerTick": -3})", c)),
            "fuelPerTick -3 is below the minimum (1)");
  EXPECT_EQ(
      ErrorOf(ApplyPolicyPatch(Policy{}, R"({"failureThreshold": 0})", c)),
      "failureThreshold 0 is below the minimum (1)");
  EXPECT_EQ(ErrorOf(ApplyPolicyPatch(Policy{}, R"({"cooldownMs": 0})", c)),
            "cooldownMs 0 is below the minimum (1)");
  EXPECT_EQ(ErrorOf(ApplyPolicyPatch(Policy{}, R"({"maxTickHz": 0})", c)),
            "maxTickHz 0 must be above 0");
  EXPECT_EQ(
      ErrorOf(ApplyPolicyPatch(Policy{}, R"({"maxEgressMsgsPerMin": -1})", c)),
      "maxEgressMsgsPerMin -1 is below the minimum (0)");
  // 0 switches these off.
  auto off = ApplyPolicyPatch(Policy{}, R"({"maxDbOpsPerTick": 0,
      "maxEgressMsgsPerMin": 0, "maxEgressBytesPerMin": 0,
      "idleUnloadMs": 0, "maxTickHz": 0.5})",
                              c);
  ASSERT_TRUE(off.ok()) << off.status().message();
  EXPECT_EQ(off->max_db_ops_per_tick, 0);
  EXPECT_EQ(off->max_egress_msgs_per_min, 0);
  EXPECT_EQ(off->max_egress_bytes_per_min, 0);
  EXPECT_EQ(off->idle_unload_ms, 0);
  EXPECT_EQ(off->max_tick_hz, 0.5);
}

TEST(PolicyTest, WrongTypesAndUnknownFields) {
  const Policy c = DefaultCeilings();
  EXPECT_EQ(ErrorOf(ApplyPolicyPatch(Policy{}, R"({"maxModules": "5"})", c)),
            "maxModules: expected an integer, got string");
  EXPECT_EQ(ErrorOf(ApplyPolicyPatch(Policy{}, R"({"maxModules": 5.5})", c)),
            "maxModules: expected an integer, got number");
  EXPECT_EQ(ErrorOf(ApplyPolicyPatch(Policy{}, R"({"maxTickHz": true})", c)),
            "maxTickHz: expected a number, got bool");
  EXPECT_EQ(ErrorOf(ApplyPolicyPatch(Policy{}, R"({"enabled": 1})", c)),
            "enabled: expected a bool, got integer");
  EXPECT_EQ(ErrorOf(ApplyPolicyPatch(Policy{}, R"({"maxTickHZ": 5})", c)),
            "\"maxTickHZ\": unknown policy field");
  EXPECT_EQ(ErrorOf(ApplyPolicyPatch(Policy{}, "[1]", c)),
            "policy: expected an object, got array");
  EXPECT_EQ(ErrorOf(ApplyPolicyPatch(Policy{}, "{\"maxModules\":", c)),
            "policy: not valid JSON");
  EXPECT_EQ(ErrorOf(ApplyPolicyPatch(Policy{}, "", c)),
            "policy: not valid JSON");
}

TEST(PolicyTest, EveryViolationIsOneLineAndNothingIsApplied) {
  EXPECT_EQ(ErrorOf(ApplyPolicyPatch(Policy{},
                                     R"({"maxTickHz": 100, "maxModules": 0,
                                         "bogus": 1, "cooldownMs": 10})",
                                     DefaultCeilings())),
            "\"bogus\": unknown policy field\n"
            "maxModules 0 is below the minimum (1)\n"
            "maxTickHz 100 exceeds the server ceiling (60)");
}

TEST(PolicyTest, HugeIntegersExceedTheCeiling) {
  EXPECT_EQ(ErrorOf(ApplyPolicyPatch(Policy{},
                                     R"({"fuelPerTick": 18446744073709551615})",
                                     DefaultCeilings())),
            "fuelPerTick 18446744073709551615 exceeds the server ceiling "
            "(2000000000)");
  // Beyond 64 bits it is a number, not an integer.
  EXPECT_EQ(ErrorOf(ApplyPolicyPatch(
                Policy{}, R"({"fuelPerTick": 184467440737095516150})",
                DefaultCeilings())),
            "fuelPerTick: expected an integer, got number");
}

TEST(PolicyTest, ParseCeilingsOverridesTheDefaults) {
  auto c = ParseCeilings(R"({"maxTickHz": 30, "maxModules": 50,
                             "enabled": "ignored"})");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->max_tick_hz, 30);
  EXPECT_EQ(c->max_modules, 50);
  EXPECT_EQ(c->fuel_per_tick, DefaultCeilings().fuel_per_tick);
  // No ceiling above a ceiling: any size is fine, minimums still hold.
  EXPECT_TRUE(ParseCeilings(R"({"maxTickHz": 1000})").ok());
  EXPECT_EQ(ErrorOf(ParseCeilings(R"({"maxModules": 0})")),
            "maxModules 0 is below the minimum (1)");
  EXPECT_EQ(ErrorOf(ParseCeilings(R"({"maxMods": 3})")),
            "\"maxMods\": unknown policy field");
  EXPECT_EQ(ErrorOf(ParseCeilings("5")),
            "ceilings: expected an object, got integer");
  // A patch is then checked against them.
  EXPECT_EQ(ErrorOf(ApplyPolicyPatch(Policy{}, R"({"maxTickHz": 31})", *c)),
            "maxTickHz 31 exceeds the server ceiling (30)");
}

TEST(PolicyTest, ClampLowersOnlyWhatExceeds) {
  Policy ceilings = DefaultCeilings();
  ceilings.max_tick_hz = 5;
  ceilings.max_run_ms = 100;
  ceilings.max_egress_msgs_per_min = 10;
  Policy p;
  p.enabled = false;
  const Policy clamped = ClampToCeilings(p, ceilings);
  EXPECT_EQ(clamped.max_tick_hz, 5);
  EXPECT_EQ(clamped.max_run_ms, 100);
  EXPECT_EQ(clamped.max_egress_msgs_per_min, 10);
  EXPECT_FALSE(clamped.enabled);
  EXPECT_EQ(clamped.max_modules, 10);
  EXPECT_EQ(clamped.fuel_per_tick, 200'000'000);
  // The defaults are all within the default ceilings.
  EXPECT_EQ(PolicyToJson(ClampToCeilings(Policy{}, DefaultCeilings())),
            PolicyToJson(Policy{}));
}

}  // namespace
}  // namespace tessera::compute
