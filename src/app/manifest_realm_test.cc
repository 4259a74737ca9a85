// The manifest's "realms" section (docs/realms.md "The realm kind") and how
// the realm kinds of several apps served together merge.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "app/app_set.h"
#include "app/manifest.h"
#include "realm/kind.h"

namespace tessera::app {
namespace {

namespace fs = std::filesystem;

constexpr char kRealmManifestFile[] = "games/demo/tessera.json";

// A manifest with shard kind "arena", compute modules "match-logic" and
// "chat-bot", and `realms` as its "realms" value.
Result<Manifest> RealmManifestParse(const std::string& realms) {
  return ParseManifest(
      R"({"name":"demo","shards":[{"name":"arena","source":"shards/arena"}],)"
      R"("compute":[{"name":"match-logic","source":"compute/match"},)"
      R"({"name":"chat-bot","crate":"compute/chat"}],)"
      R"("realms":)" +
          realms + "}",
      "games/demo", kRealmManifestFile);
}

std::string RealmManifestError(const std::string& realms) {
  Result<Manifest> m = RealmManifestParse(realms);
  return m.ok() ? "" : m.status().message();
}

std::string RealmManifestPrefix() {
  return std::string(kRealmManifestFile) + ": ";
}

TEST(ManifestRealmTest, AnAppMayServeRealmsWithoutShardKinds) {
  Result<Manifest> m = ParseManifest(
      R"({"name":"lobby","realms":[{"name":"presence",)"
      R"("persistence":"ephemeral"}]})",
      "games/lobby", "games/lobby/tessera.json");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_TRUE(m->kinds.empty());
  ASSERT_EQ(m->realms.size(), 1u);
  EXPECT_EQ(m->realms[0].name, "presence");
}

TEST(ManifestRealmTest, AGoodManifestKeepsEveryKindAndField) {
  Result<Manifest> m = RealmManifestParse(R"([
    {"name": "lobby", "persistence": "ephemeral",
     "rules": [{"path": "cursors/{avatar}/**", "write": "owner"}]},
    {"name": "match",
     "schema": {"type": "object", "properties": {"board": {"type": "array"}}},
     "rules": [{"path": "players/{avatar}/**", "write": "owner"},
               {"path": "moves", "write": "append"},
               {"path": "hands/{avatar}/**", "read": "owner"}],
     "security": "encrypted", "snapshotEveryVersions": 32, "logWindow": 256,
     "limits": {"writeRatePerSecond": 20}, "expireAfterIdleMs": 86400000,
     "module": "match-logic", "migrate": "module"}
  ])");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_EQ(m->realms.size(), 2u);

  const realm::RealmKindConfig& lobby = m->realms[0];
  EXPECT_EQ(lobby.name, "lobby");
  EXPECT_EQ(lobby.persistence, realm::Persistence::kEphemeral);
  EXPECT_EQ(lobby.rules.rules.size(), 1u);
  EXPECT_TRUE(lobby.module.empty());
  EXPECT_EQ(lobby.log_window, 512);  // the default

  const realm::RealmKindConfig* match = m->FindRealm("match");
  ASSERT_NE(match, nullptr);
  EXPECT_EQ(match, &m->realms[1]);
  EXPECT_EQ(match->security, realm::SecurityFloor::kEncrypted);
  EXPECT_EQ(match->persistence, realm::Persistence::kDurable);
  EXPECT_EQ(match->snapshot_every_versions, 32);
  EXPECT_EQ(match->log_window, 256);
  EXPECT_EQ(match->limits.write_rate_per_second, 20);
  EXPECT_EQ(match->expire_after_idle_ms, 86400000);
  EXPECT_EQ(match->module, "match-logic");
  EXPECT_EQ(match->migrate, realm::MigrateMode::kModule);
  EXPECT_EQ(match->rules.rules.size(), 3u);
  // The schema comes through unchanged, so its hash is the one the engine
  // will store with every snapshot.
  EXPECT_EQ(match->schema["properties"]["board"]["type"], "array");
  EXPECT_EQ(match->schema_hash, realm::SchemaHash(match->schema));
  EXPECT_EQ(m->FindRealm("arena"), nullptr);  // a shard kind, not a realm

  // The rest of the manifest is as without realms.
  EXPECT_EQ(m->kinds.size(), 1u);
  EXPECT_EQ(m->compute.size(), 2u);
}

TEST(ManifestRealmTest, TheDocsExampleParses) {
  // docs/realms.md "The realm kind".
  Result<Manifest> m = ParseManifest(R"({
    "name": "lobby-app",
    "shards": [{"name": "arena", "source": "shards/arena"}],
    "compute": [{"name": "match-logic", "source": "compute/match"}],
    "realms": [
      {"name": "presence", "persistence": "ephemeral",
       "rules": [{"path": "cursors/{avatar}/**", "write": "owner"}]},
      {"name": "match", "module": "match-logic", "migrate": "module"}
    ]
  })",
                                     "lobby", "lobby/tessera.json");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_EQ(m->realms.size(), 2u);
  EXPECT_EQ(m->realms[0].persistence, realm::Persistence::kEphemeral);
  EXPECT_EQ(m->realms[1].migrate, realm::MigrateMode::kModule);
}

TEST(ManifestRealmTest, NoSectionOrAnEmptyOneIsNoRealms) {
  Result<Manifest> m = ParseManifest(
      R"({"name":"a","shards":[{"name":"arena","source":"s"}]})", ".", "t");
  ASSERT_TRUE(m.ok());
  EXPECT_TRUE(m->realms.empty());
  m = RealmManifestParse("[]");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_TRUE(m->realms.empty());
}

TEST(ManifestRealmTest, LoadingAFileNamesItInErrors) {
  const fs::path dir =
      fs::temp_directory_path() /
      ("tessera_manifest_realm_" +
       std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string head =
      R"({"name":"demo","shards":[{"name":"arena","wasm":"a.wasm"}],)";
  std::ofstream(dir / "tessera.json")
      << head << R"("realms":[{"name":"match","logWindow":128}]})";
  Result<Manifest> m = LoadManifest(dir);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_EQ(m->realms.size(), 1u);
  EXPECT_EQ(m->realms[0].log_window, 128);

  std::ofstream(dir / "tessera.json")
      << head << R"("realms":[{"name":"match","logWindow":1}]})";
  m = LoadManifest(dir);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(),
            (dir / "tessera.json").lexically_normal().string() +
                ": realms[0] (\"match\").logWindow: must be in 2..1000000, "
                "got 1");
  fs::remove_all(dir);
}

TEST(ManifestRealmTest, TheSectionAndUnknownKeysAreStrict) {
  EXPECT_EQ(RealmManifestError(R"({"name":"match"})"),
            RealmManifestPrefix() + "realms: expected an array, got an object");
  EXPECT_EQ(
      RealmManifestError(R"(["match"])"),
      RealmManifestPrefix() + "realms[0]: expected an object, got a string");
  // A misspelt section is refused like any unknown top-level field.
  Result<Manifest> m = ParseManifest(
      R"({"name":"a","shards":[{"name":"arena","source":"s"}],"realm":[]})",
      ".", "t");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(),
            "t: unknown field \"realm\" (did you mean \"realms\"?)");
  // An unknown field of an entry names the entry and lists the known ones.
  const std::string unknown =
      RealmManifestError(R"([{"name":"match","logwindow":64}])");
  EXPECT_EQ(unknown.rfind(RealmManifestPrefix() +
                              "realms[0] (\"match\"): unknown field "
                              "\"logwindow\" (known: name, ",
                          0),
            0u)
      << unknown;
  EXPECT_NE(unknown.find("logWindow"), std::string::npos) << unknown;
}

TEST(ManifestRealmTest, ErrorsNameTheFileTheEntryAndTheField) {
  EXPECT_EQ(RealmManifestError(R"([{"name":"lobby"},{"name":"match",
                             "persistence":"forever"}])"),
            RealmManifestPrefix() +
                "realms[1] (\"match\").persistence: expected \"durable\" or "
                "\"ephemeral\", got \"forever\"");
  EXPECT_EQ(
      RealmManifestError(R"([{"persistence":"durable"}])"),
      RealmManifestPrefix() + "realms[0]: missing required field \"name\"");
  EXPECT_EQ(
      RealmManifestError(R"([{"name":"match","security":"none"}])"),
      RealmManifestPrefix() +
          "realms[0] (\"match\").security: \"none\" is not a security floor; "
          "use \"authenticated\" (the default, the lowest tier: there is none "
          "below it) or \"encrypted\"");
  EXPECT_EQ(
      RealmManifestError(
          R"([{"name":"match","rules":[{"path":"a//b","write":"owner"}]}])")
          .rfind(RealmManifestPrefix() + "realms[0] (\"match\").rules", 0),
      0u);
}

TEST(ManifestRealmTest, BootTimeRefusalsComeWithTheFix) {
  EXPECT_EQ(
      RealmManifestError(
          R"([{"name":"match","snapshotEveryVersions":300,"logWindow":512}])"),
      RealmManifestPrefix() +
          "realms[0] (\"match\").snapshotEveryVersions: 300 is more than half "
          "of logWindow (512), so a crash between snapshots could leave the "
          "log compacted past the last snapshot; set snapshotEveryVersions to "
          "at most 256 or logWindow to at least 600");
  EXPECT_EQ(
      RealmManifestError(
          R"([{"name":"lobby","persistence":"ephemeral","migrate":"wipe"}])"),
      RealmManifestPrefix() +
          "realms[0] (\"lobby\").migrate: an ephemeral realm keeps no "
          "snapshot to migrate (it boots initial_state every cold start); "
          "remove migrate or make the realm \"durable\"");
  EXPECT_EQ(
      RealmManifestError(
          R"([{"name":"lobby","persistence":"ephemeral",
               "expireAfterIdleMs":1000}])"),
      RealmManifestPrefix() +
          "realms[0] (\"lobby\").expireAfterIdleMs: an ephemeral realm stores "
          "nothing to expire; remove expireAfterIdleMs or make the realm "
          "\"durable\"");
}

TEST(ManifestRealmTest, NamesFollowTheShardKindRules) {
  // The same names are valid for both kinds of kind.
  const std::vector<std::pair<std::string, bool>> names = {
      {"match", true},          {"m", true},
      {"match-2_b", true},      {std::string(64, 'a'), true},
      {"Match", false},         {"2match", false},
      {"-match", false},        {"", false},
      {"ma tch", false},        {"match.v2", false},
      {"match\xc3\xa9", false}, {std::string(65, 'a'), false}};
  for (const auto& [name, valid] : names) {
    Result<realm::RealmKindConfig> kind =
        realm::ParseRealmKind(nlohmann::json{{"name", name}}, "t");
    EXPECT_EQ(IsValidKindName(name), valid) << "\"" << name << "\"";
    EXPECT_EQ(kind.ok(), valid) << "\"" << name << "\"";
  }
  EXPECT_EQ(RealmManifestError(R"([{"name":"Match"}])"),
            RealmManifestPrefix() +
                "realms[0].name: \"Match\" is not a valid realm name (a "
                "lowercase letter, then up to 63 of [a-z0-9_-])");
}

TEST(ManifestRealmTest, ADuplicateRealmNameIsRefused) {
  EXPECT_EQ(
      RealmManifestError(R"([{"name":"match"},{"name":"lobby"},
                             {"name":"match","persistence":"ephemeral"}])"),
      RealmManifestPrefix() +
          "realms[2] (\"match\"): realm kind \"match\" is already declared by "
          "realms[0]; give each kind its own name");
}

TEST(ManifestRealmTest, ARealmMayNotTakeAShardKindsName) {
  EXPECT_EQ(RealmManifestError(R"([{"name":"lobby"},{"name":"arena"}])"),
            RealmManifestPrefix() +
                "realms[1] (\"arena\"): \"arena\" is also the name of "
                "shards[0]; shard kinds and realm kinds share the names "
                "clients connect to, so rename one of them");
}

TEST(ManifestRealmTest, TheModuleMustBeAComputeModuleOfTheManifest) {
  Result<Manifest> m =
      RealmManifestParse(R"([{"name":"chat","module":"chat-bot"}])");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->realms[0].module, "chat-bot");

  EXPECT_EQ(RealmManifestError(R"([{"name":"match","module":"realms/match"}])"),
            RealmManifestPrefix() +
                "realms[0] (\"match\").module: \"realms/match\" is not a "
                "compute module of this manifest; declare it in \"compute\" "
                "or name one of \"match-logic\", \"chat-bot\"");

  m = ParseManifest(R"({"name":"a","shards":[{"name":"arena","source":"s"}],)"
                    R"("realms":[{"name":"match","module":"match-logic"}]})",
                    ".", "t");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(),
            "t: realms[0] (\"match\").module: \"match-logic\" is not a compute "
            "module of this manifest; it declares none, so add one to "
            "\"compute\"");
}

// An app at `dir` with shard kind `kind` and realm kinds `realms` (JSON).
AppEntry RealmManifestApp(const std::string& dir, const std::string& kind,
                          const std::string& realms) {
  Result<Manifest> m =
      ParseManifest(R"({"name":"x","shards":[{"name":")" + kind +
                        R"(","wasm":"k.wasm"}],"realms":[)" + realms + "]}",
                    dir, dir + "/tessera.json");
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return AppEntry{dir, m.ok() ? std::move(m).value() : Manifest()};
}

TEST(ManifestRealmTest, RealmKindsOfEveryAppMerge) {
  Result<AppSet> set =
      MergeApps({RealmManifestApp("games/main", "arena", R"({"name":"match"})"),
                 RealmManifestApp("more/zone", "zone", ""),
                 RealmManifestApp("more/lobby", "lobby-shard",
                                  R"({"name":"lobby","persistence":"ephemeral"},
                           {"name":"chat"})")});
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  std::vector<std::string> names;
  for (const realm::RealmKindConfig& r : set->merged.realms) {
    names.push_back(r.name);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"match", "lobby", "chat"}));
  ASSERT_NE(set->merged.FindRealm("lobby"), nullptr);
  EXPECT_EQ(set->merged.FindRealm("lobby")->persistence,
            realm::Persistence::kEphemeral);
  // Each app keeps its own manifest's realms.
  EXPECT_EQ(set->apps[2].manifest.realms.size(), 2u);
  EXPECT_EQ(set->apps[0].manifest.realms.size(), 1u);
}

TEST(ManifestRealmTest, ARealmKindOfTwoAppsIsRefusedNamingBoth) {
  Result<AppSet> set = MergeApps(
      {RealmManifestApp("games/main", "arena", R"({"name":"match"})"),
       RealmManifestApp("more/zone", "zone", R"({"name":"lobby"})"),
       RealmManifestApp("more/party", "party", R"({"name":"lobby"})")});
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(set.status().message(),
            "realm kind \"lobby\" is declared by both more/zone/tessera.json "
            "and more/party/tessera.json (apps served together share one set "
            "of realm kinds)");
}

TEST(ManifestRealmTest, AShardKindOfOneAppAndARealmOfAnotherMayNotShareAName) {
  // A later app's realm named like an earlier app's shard kind.
  Result<AppSet> set =
      MergeApps({RealmManifestApp("games/main", "arena", ""),
                 RealmManifestApp("more/zone", "zone", R"({"name":"arena"})")});
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.status().message(),
            "realm kind \"arena\" of more/zone/tessera.json is a shard kind of "
            "games/main/tessera.json (shard and realm kinds share the names "
            "clients connect to)");
  // A later app's shard kind named like an earlier app's realm.
  set =
      MergeApps({RealmManifestApp("games/main", "arena", R"({"name":"zone"})"),
                 RealmManifestApp("more/zone", "zone", "")});
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.status().message(),
            "shard kind \"zone\" of more/zone/tessera.json is a realm kind of "
            "games/main/tessera.json (shard and realm kinds share the names "
            "clients connect to)");
}

}  // namespace
}  // namespace tessera::app
