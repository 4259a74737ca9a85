// A realm kind's declarative presence: parsing, and the patches that
// attach and detach an avatar.
#include "realm/presence.h"

#include <gtest/gtest.h>

#include "realm/kind.h"

namespace tessera::realm {
namespace {

PresenceConfig PresenceOf(const char* text) {
  Result<PresenceConfig> p = ParsePresence(Json::parse(text), "k.presence");
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return p.ok() ? *p : PresenceConfig();
}

std::string PresenceError(const char* text) {
  Result<PresenceConfig> p = ParsePresence(Json::parse(text), "k.presence");
  return p.ok() ? "" : p.status().message();
}

TEST(RealmPresence, ParsesPathValueAndPrune) {
  PresenceConfig p = PresenceOf(
      R"({"path": "here/{avatar}", "value": {"on": 1},
          "prune": ["cursors/{avatar}", "rooms/{avatar}/seat"]})");
  EXPECT_EQ(p.path.For("ann"), Path({std::string("here"), std::string("ann")}));
  EXPECT_EQ(p.value, Json::parse(R"({"on": 1})"));
  ASSERT_EQ(p.prune.size(), 2u);
  EXPECT_EQ(p.prune[1].For("b"),
            Path({std::string("rooms"), std::string("b"), std::string("seat")}));
  EXPECT_EQ(PresenceOf(R"({"path": "{avatar}"})").value, true);
}

TEST(RealmPresence, RefusalsNameTheField) {
  EXPECT_EQ(PresenceError(R"({"value": 1})"),
            "k.presence: missing required field \"path\"");
  EXPECT_EQ(PresenceError(R"({"path": "here"})"),
            "k.presence.path: \"here\" must hold {avatar} exactly once");
  EXPECT_EQ(PresenceError(R"({"path": "{avatar}/{avatar}"})"),
            "k.presence.path: \"{avatar}/{avatar}\" must hold {avatar} "
            "exactly once");
  EXPECT_EQ(PresenceError(R"({"path": "here/*/{avatar}"})"),
            "k.presence.path: \"here/*/{avatar}\": presence paths are literal "
            "keys and one {avatar}; no wildcards");
  EXPECT_EQ(PresenceError(R"({"path": "here//{avatar}"})"),
            "k.presence.path: \"here//{avatar}\" has an empty segment");
  EXPECT_EQ(PresenceError(R"({"path": "h/{avatar}", "prune": ["x"]})"),
            "k.presence.prune[0]: \"x\" must hold {avatar} exactly once");
  EXPECT_NE(PresenceError(R"({"path": "h/{avatar}", "extra": 1})").find("unknown field"),
            std::string::npos);
}

TEST(RealmPresence, AttachSetsTheRowCreatingMissingParents) {
  PresenceConfig p = PresenceOf(R"({"path": "lobby/here/{avatar}"})");
  Json doc = Json::object();
  Patch attach = PresenceAttach(p, "ann", doc);
  ASSERT_TRUE(ApplyPatch(attach, &doc).ok());
  EXPECT_EQ(doc, Json::parse(R"({"lobby": {"here": {"ann": true}}})"));
  // Already there: nothing to do.
  EXPECT_TRUE(PresenceAttach(p, "ann", doc).empty());
  // A parent that is not an object is left alone.
  EXPECT_TRUE(PresenceAttach(p, "b", Json::parse(R"({"lobby": 3})")).empty());
}

TEST(RealmPresence, DetachDeletesTheRowAndWhatExistsOfThePrunePaths) {
  PresenceConfig p = PresenceOf(
      R"({"path": "here/{avatar}", "prune": ["cursors/{avatar}",
          "names/{avatar}", "here/{avatar}/tab"]})");
  Json doc = Json::parse(
      R"({"here": {"ann": {"tab": 1}, "bo": true},
          "cursors": {"ann": {"x": 1}}, "names": {}})");
  Patch detach = PresenceDetach(p, "ann", doc);
  ASSERT_EQ(detach.size(), 2u);  // names/ann is absent, here/ann/tab goes with here/ann
  ASSERT_TRUE(ApplyPatch(detach, &doc).ok());
  EXPECT_EQ(doc, Json::parse(
                     R"({"here": {"bo": true}, "cursors": {}, "names": {}})"));
  EXPECT_TRUE(PresenceDetach(p, "ann", doc).empty());
}

TEST(RealmPresence, AKindCarriesItsPresence) {
  Result<RealmKindConfig> kind = ParseRealmKind(
      Json::parse(R"({"name": "lobby", "persistence": "ephemeral",
                      "presence": {"path": "here/{avatar}"}})"),
      "app/tessera.json: realms[0]");
  ASSERT_TRUE(kind.ok()) << kind.status().ToString();
  ASSERT_TRUE(kind->presence.has_value());
  EXPECT_EQ(kind->presence->path.text, "here/{avatar}");
  Result<RealmKindConfig> bad = ParseRealmKind(
      Json::parse(R"({"name": "lobby", "presence": {"path": "x"}})"),
      "app/tessera.json: realms[0]");
  EXPECT_EQ(bad.status().message(),
            "app/tessera.json: realms[0].presence.path: \"x\" must hold "
            "{avatar} exactly once");
}

}  // namespace
}  // namespace tessera::realm
