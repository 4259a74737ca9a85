// The manifest's "compute" section (docs/compute.md "The manifest").
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "app/manifest.h"

namespace tessera::app {
namespace {

Result<Manifest> Parse(const std::string& compute) {
  return ParseManifest(
      R"({"name":"demo","shards":[{"name":"arena","source":"shards/arena"}],)"
      R"("compute":)" +
          compute + "}",
      "games/demo", "games/demo/tessera.json");
}

std::string Error(const std::string& compute) {
  Result<Manifest> m = Parse(compute);
  return m.ok() ? "" : m.status().message();
}

TEST(ManifestComputeTest, TheContractExampleParses) {
  Result<Manifest> m = Parse(R"([
    {"name": "world-sim", "crate": "compute/world-sim", "alwaysOn": true,
     "description": "crops and weather",
     "triggers": [{"triggerType": "tick", "tickHz": 2},
                  {"triggerType": "event", "eventName": "season-changed"}]},
    {"name": "shop", "source": "compute/shop", "enabled": false,
     "triggers": [{"triggerType": "invoke", "exportName": "buy",
                   "invokePolicy": {"type": "anyone"},
                   "contract": {"params": {"amount": {"type": "int",
                                                      "required": true}}}}]}
  ])");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_EQ(m->compute.size(), 2u);
  const ComputeModuleSpec& sim = m->compute[0];
  EXPECT_EQ(sim.name, "world-sim");
  EXPECT_EQ(sim.description, "crops and weather");
  EXPECT_EQ(sim.crate_dir, "games/demo/compute/world-sim");
  EXPECT_TRUE(sim.source.empty());
  EXPECT_EQ(sim.dir(), sim.crate_dir);
  EXPECT_TRUE(sim.always_on);
  EXPECT_TRUE(sim.enabled);  // the default
  EXPECT_EQ(sim.where, "games/demo/tessera.json: compute[0]");
  ASSERT_EQ(sim.triggers.size(), 2u);
  EXPECT_EQ(nlohmann::json::parse(sim.triggers[1]),
            (nlohmann::json{{"triggerType", "event"},
                            {"eventName", "season-changed"}}));
  const ComputeModuleSpec& shop = m->compute[1];
  EXPECT_EQ(shop.source, "games/demo/compute/shop");
  EXPECT_FALSE(shop.always_on);
  EXPECT_FALSE(shop.enabled);
  ASSERT_EQ(shop.triggers.size(), 1u);
  EXPECT_EQ(nlohmann::json::parse(
                shop.triggers[0])["contract"]["params"]["amount"]["type"],
            "int");
}

TEST(ManifestComputeTest, NoSectionIsNoModules) {
  Result<Manifest> m = ParseManifest(
      R"({"name":"a","shards":[{"name":"arena","source":"s"}]})", ".", "t");
  ASSERT_TRUE(m.ok());
  EXPECT_TRUE(m->compute.empty());
}

TEST(ManifestComputeTest, StrictErrorsNameTheField) {
  const std::string file = "games/demo/tessera.json: ";
  EXPECT_EQ(Error(R"({})"), file + "compute: expected an array, got an object");
  EXPECT_EQ(Error(R"([{"crate":"c"}])"),
            file + "compute[0]: missing required field \"name\"");
  EXPECT_EQ(Error(R"([{"name":"Shop","source":"s"}])"),
            file +
                "compute[0].name: \"Shop\" is not a valid module name "
                "(lowercase letter, then up to 127 of [a-z0-9_-])");
  EXPECT_EQ(Error(R"([{"name":"shop"}])"),
            file +
                "compute[0]: needs \"source\" (a directory of C++ sources) or "
                "\"crate\" (a Rust crate directory)");
  EXPECT_EQ(Error(R"([{"name":"shop","source":"a","crate":"b"}])"),
            file + "compute[0]: gives both \"source\" and \"crate\"; give one");
  EXPECT_EQ(Error(R"([{"name":"shop","source":""}])"),
            file + "compute[0].source: must not be empty");
  EXPECT_EQ(Error(R"([{"name":"shop","source":"s","alwaysOn":1}])"),
            file + "compute[0].alwaysOn: expected a boolean, got an integer");
  EXPECT_EQ(Error(R"([{"name":"shop","source":"s","alwayson":true}])"),
            file +
                "compute[0]: unknown field \"alwayson\" (did you mean "
                "\"alwaysOn\"?)");
  EXPECT_EQ(Error(R"([{"name":"shop","source":"s","triggers":{}}])"),
            file + "compute[0].triggers: expected an array, got an object");
  EXPECT_EQ(
      Error(R"([{"name":"shop","source":"s","triggers":[3]}])"),
      file + "compute[0].triggers[0]: expected an object, got an integer");
  EXPECT_EQ(
      Error(R"([{"name":"shop","source":"s","triggers":[{"tickHz":2}]}])"),
      file + "compute[0].triggers[0]: missing required field \"triggerType\"");
  EXPECT_EQ(Error(R"([{"name":"shop","source":"s","triggers":[
                    {"triggerType":"tick","tickhz":2}]}])"),
            file +
                "compute[0].triggers[0]: unknown field \"tickhz\" (did you "
                "mean \"tickHz\"?)");
  EXPECT_EQ(Error(R"([{"name":"a","source":"s"},{"name":"a","crate":"c"}])"),
            file + "compute[1].name: duplicate module name \"a\"");
}

}  // namespace
}  // namespace tessera::app
