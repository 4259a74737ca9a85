// The manifest's "data" section, a kind's writeFlushMs and its onStop
// (docs/data.md "The manifest").
#include <gtest/gtest.h>

#include <string>

#include "app/manifest.h"

namespace tessera::app {
namespace {

Result<Manifest> Parse(const std::string& kind_extra,
                       const std::string& top_extra = "") {
  return ParseManifest(
      R"({"name":"demo","shards":[{"name":"zone","source":"s")" + kind_extra +
          "}]" + top_extra + "}",
      "games/demo", "games/demo/tessera.json");
}

std::string Error(const std::string& kind_extra,
                  const std::string& top_extra = "") {
  Result<Manifest> m = Parse(kind_extra, top_extra);
  EXPECT_FALSE(m.ok()) << kind_extra << top_extra;
  return m.ok() ? "" : m.status().message();
}

TEST(ManifestDataTest, TheDataSectionParses) {
  Result<Manifest> m = Parse("", R"(, "data": {"types": [
    {"name": "Character", "owner": "userId",
     "fields": [{"name": "userId", "type": "string", "required": true},
                {"name": "hp", "type": "int", "default": 100}],
     "indexes": [{"field": "hp"}]}]})");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_EQ(m->data.types.size(), 1u);
  const data::EntityType& c = m->data.types[0];
  EXPECT_EQ(c.name, "Character");
  EXPECT_EQ(c.owner, "userId");
  EXPECT_EQ(c.FindField("hp")->default_json, "100");
  ASSERT_EQ(c.indexes.size(), 1u);
}

TEST(ManifestDataTest, NoDataSectionIsAnEmptySchema) {
  Result<Manifest> m = Parse("");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_TRUE(m->data.empty());
}

TEST(ManifestDataTest, DataErrorsNameTheFileAndPath) {
  EXPECT_EQ(Error("", R"(, "data": {"types": [{"name": "C", "fields": [
                          {"name": "hp", "type": "number"}]}]})"),
            "games/demo/tessera.json: data.types[0].fields[0].type: unknown "
            "type \"number\" (types: string, int, float, bool, json)");
  EXPECT_EQ(Error("", R"(, "data": [])"),
            "games/demo/tessera.json: data: must be an object {\"types\": "
            "[...]}");
  EXPECT_EQ(Error("", R"(, "dat": {})"),
            "games/demo/tessera.json: unknown field \"dat\" (did you mean "
            "\"data\"?)");
}

TEST(ManifestDataTest, WriteFlushMs) {
  Result<Manifest> m = Parse(R"(,"writeFlushMs":500)");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->kinds[0].config.write_flush_ms, 500u);
  EXPECT_EQ(Parse("")->kinds[0].config.write_flush_ms, 2000u);
  EXPECT_EQ(Error(R"(,"writeFlushMs":99)"),
            "games/demo/tessera.json: shards[0].writeFlushMs: must be in "
            "100..60000, got 99");
  EXPECT_EQ(Error(R"(,"writeFlushMs":60001)"),
            "games/demo/tessera.json: shards[0].writeFlushMs: must be in "
            "100..60000, got 60001");
  EXPECT_EQ(Error(R"(,"writeFlushMs":"fast")"),
            "games/demo/tessera.json: shards[0].writeFlushMs: expected an "
            "integer, got a string");
}

TEST(ManifestDataTest, OnStopIsAUrlOrAFunction) {
  for (const char* ok :
       {"https://hooks.example.com/stop", "http://127.0.0.1:9/x",
        "zone-logic.onZoneStop", "onZoneStop", "_f1"}) {
    Result<Manifest> m = Parse(std::string(R"(,"onStop":")") + ok + "\"");
    ASSERT_TRUE(m.ok()) << ok << ": " << m.status().ToString();
    EXPECT_EQ(m->kinds[0].config.on_stop, ok);
  }
  for (const char* bad :
       {"", "ftp://x", "https://", "http:///path", "Zone.stop", "zone.",
        ".stop", "zone.on stop", "a.b.c", "1stop", "https://a b"}) {
    EXPECT_EQ(Error(std::string(R"(,"onStop":")") + bad + "\""),
              std::string("games/demo/tessera.json: shards[0].onStop: \"") +
                  bad +
                  "\" is neither an http(s):// URL nor a function "
                  "(\"module.export\" or an export name)")
        << bad;
  }
}

}  // namespace
}  // namespace tessera::app
