// The realm kind's config: defaults, every field, and each boot-time
// refusal with the fix its message gives.
#include "realm/kind.h"

#include <gtest/gtest.h>

#include <string>

namespace tessera::realm {
namespace {

constexpr char kWhere[] = "app/tessera.json: realms[0]";

RealmKindConfig Kind(const char* text) {
  Result<RealmKindConfig> kind = ParseRealmKind(Json::parse(text), kWhere);
  EXPECT_TRUE(kind.ok()) << kind.status().message();
  return kind.ok() ? kind.value() : RealmKindConfig{};
}

std::string KindError(const char* text) {
  Result<RealmKindConfig> kind = ParseRealmKind(Json::parse(text), kWhere);
  EXPECT_FALSE(kind.ok()) << text;
  if (kind.ok()) return "";
  EXPECT_EQ(kind.status().code(), StatusCode::kInvalidArgument);
  return kind.status().message();
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(RealmKind, OnlyTheNameIsRequiredAndTheRestDefaults) {
  RealmKindConfig k = Kind(R"({"name": "lobby"})");
  EXPECT_EQ(k.name, "lobby");
  EXPECT_EQ(k.schema, Json::object());
  // SHA-256 of "{}".
  EXPECT_EQ(k.schema_hash,
            "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a");
  EXPECT_TRUE(k.rules.rules.empty());
  EXPECT_EQ(k.security, SecurityFloor::kAuthenticated);
  EXPECT_EQ(k.persistence, Persistence::kDurable);
  EXPECT_EQ(k.snapshot_every_versions, 64);
  EXPECT_EQ(k.log_window, 512);
  EXPECT_EQ(k.limits, RealmLimits{});
  EXPECT_FALSE(k.expire_after_idle_ms.has_value());
  EXPECT_EQ(k.batch_ms, 0);
  EXPECT_EQ(k.module, "");
  EXPECT_EQ(k.migrate, MigrateMode::kNone);
}

TEST(RealmKind, EveryFieldIsRead) {
  RealmKindConfig k = Kind(R"({
    "name": "match", "schema": {"type": "object"},
    "rules": [{"path": "moves", "write": "append"}],
    "security": "encrypted", "persistence": "durable",
    "snapshotEveryVersions": 100, "logWindow": 1000,
    "limits": {"maxPatchesPerFrame": 16},
    "expireAfterIdleMs": 86400000, "module": "realms/match",
    "migrate": "module", "batchMs": 16})");
  EXPECT_EQ(k.batch_ms, 16);
  EXPECT_EQ(k.schema, Json::parse(R"({"type": "object"})"));
  ASSERT_EQ(k.rules.rules.size(), 1u);
  EXPECT_EQ(k.rules.rules[0].write, WriteMode::kAppend);
  EXPECT_EQ(k.security, SecurityFloor::kEncrypted);
  EXPECT_EQ(k.snapshot_every_versions, 100);
  EXPECT_EQ(k.log_window, 1000);
  EXPECT_EQ(k.limits.max_patches_per_frame, 16);
  EXPECT_EQ(k.limits.max_frame_bytes, 65536);
  EXPECT_EQ(k.expire_after_idle_ms, 86400000);
  EXPECT_EQ(k.module, "realms/match");
  EXPECT_EQ(k.migrate, MigrateMode::kModule);
  EXPECT_EQ(Kind(R"({"name": "p", "migrate": "wipe"})").migrate,
            MigrateMode::kWipe);
}

TEST(RealmKind, SchemaHashIgnoresKeyOrderButNotContent) {
  RealmKindConfig a = Kind(R"({"name": "m", "schema": {"a": 1, "b": [1, 2]}})");
  RealmKindConfig b =
      Kind(R"({"schema": { "b": [1, 2], "a": 1 }, "name": "m"})");
  RealmKindConfig c = Kind(R"({"name": "m", "schema": {"a": 1, "b": [2, 1]}})");
  EXPECT_EQ(a.schema_hash, b.schema_hash);
  EXPECT_NE(a.schema_hash, c.schema_hash);
  EXPECT_EQ(a.schema_hash.size(), 64u);
}

TEST(RealmKind, ThereIsNoSecurityTierBelowAuthenticated) {
  for (const char* floor : {"none", "plain", "Authenticated"}) {
    std::string text =
        std::string(R"({"name": "m", "security": ")") + floor + "\"}";
    std::string msg = KindError(text.c_str());
    EXPECT_TRUE(Contains(msg, "app/tessera.json: realms[0].security: \"" +
                                  std::string(floor) +
                                  "\" is not a security floor"))
        << msg;
    EXPECT_TRUE(Contains(msg, "there is none below it")) << msg;
  }
}

TEST(RealmKind, ADeploymentMayRaiseTheFloorButNeverLowerIt) {
  EXPECT_EQ(
      EffectiveFloor(SecurityFloor::kAuthenticated, SecurityFloor::kEncrypted),
      SecurityFloor::kEncrypted);
  EXPECT_EQ(
      EffectiveFloor(SecurityFloor::kEncrypted, SecurityFloor::kAuthenticated),
      SecurityFloor::kEncrypted);
  EXPECT_EQ(SecurityFloorName(SecurityFloor::kEncrypted), "encrypted");
}

TEST(RealmKind, ASnapshotCadenceOverHalfTheLogWindowIsRefusedWithTheFix) {
  EXPECT_EQ(KindError(R"({"name": "m", "snapshotEveryVersions": 300})"),
            "app/tessera.json: realms[0].snapshotEveryVersions: 300 is more "
            "than half of logWindow (512), so a crash between snapshots "
            "could leave the log compacted past the last snapshot; set "
            "snapshotEveryVersions to at most 256 or logWindow to at least "
            "600");
  // The default cadence against a small window.
  EXPECT_TRUE(Contains(KindError(R"({"name": "m", "logWindow": 100})"),
                       "at most 50 or logWindow to at least 128"));
  EXPECT_EQ(Kind(R"({"name": "m", "snapshotEveryVersions": 256})")
                .snapshot_every_versions,
            256);
}

TEST(RealmKind, BatchMsIsAWholeNumberUpToASecond) {
  EXPECT_EQ(Kind(R"({"name": "m", "batchMs": 0})").batch_ms, 0);
  EXPECT_EQ(Kind(R"({"name": "m", "batchMs": 1000})").batch_ms, 1000);
  EXPECT_TRUE(
      Contains(KindError(R"({"name": "m", "batchMs": 1001})"), "batchMs"));
  EXPECT_TRUE(
      Contains(KindError(R"({"name": "m", "batchMs": -1})"), "batchMs"));
  EXPECT_TRUE(
      Contains(KindError(R"({"name": "m", "batchMs": "5"})"), "batchMs"));
}

TEST(RealmKind, EphemeralRealmsTakeNeitherMigrateNorExpiry) {
  EXPECT_EQ(Kind(R"({"name": "m", "persistence": "ephemeral"})").persistence,
            Persistence::kEphemeral);
  std::string migrate = KindError(
      R"({"name": "m", "persistence": "ephemeral", "migrate": "wipe"})");
  EXPECT_TRUE(Contains(migrate,
                       "realms[0].migrate: an ephemeral realm keeps "
                       "no snapshot to migrate"))
      << migrate;
  EXPECT_TRUE(Contains(migrate, "remove migrate or make the realm"));
  std::string expire = KindError(
      R"({"name": "m", "persistence": "ephemeral", "expireAfterIdleMs": 5})");
  EXPECT_TRUE(Contains(expire,
                       "realms[0].expireAfterIdleMs: an ephemeral "
                       "realm stores nothing to expire"))
      << expire;
}

TEST(RealmKind, MigrateByModuleNeedsAModule) {
  EXPECT_TRUE(Contains(KindError(R"({"name": "m", "migrate": "module"})"),
                       "the realm has no \"module\""));
  EXPECT_TRUE(Contains(KindError(R"({"name": "m", "migrate": "rewrite"})"),
                       "realms[0].migrate: expected \"wipe\" or \"module\""));
}

TEST(RealmKind, InitialStateIsAnObjectKeptAsGiven) {
  Result<RealmKindConfig> kind = ParseRealmKind(
      Json::parse(R"({"name": "m", "initialState": {"seats": {}, "n": 1}})"),
      "app/tessera.json: realms[0]");
  ASSERT_TRUE(kind.ok()) << kind.status().ToString();
  EXPECT_EQ(kind->initial_state, Json::parse(R"({"seats": {}, "n": 1})"));
  EXPECT_EQ(ParseRealmKind(Json::parse(R"({"name": "m"})"), "x")->initial_state,
            Json::object());
  EXPECT_EQ(KindError(R"({"name": "m", "initialState": [1]})"),
            "app/tessera.json: realms[0].initialState: expected an object, "
            "got an array");
}

TEST(RealmKind, UnknownFieldsAreRefusedListingTheKnownOnes) {
  EXPECT_EQ(KindError(R"({"name": "m", "snapshotEvery": 10})"),
            "app/tessera.json: realms[0]: unknown field \"snapshotEvery\" "
            "(known: name, schema, rules, security, persistence, "
            "snapshotEveryVersions, logWindow, limits, expireAfterIdleMs, "
            "module, migrate, initialState, presence, batchMs)");
  EXPECT_TRUE(Contains(KindError(R"({"name": "m", "limits": {"maxOps": 1}})"),
                       "realms[0].limits: unknown field \"maxOps\""));
}

TEST(RealmKind, BadTypesAndValuesNameTheField) {
  EXPECT_EQ(KindError(R"([1])"),
            "app/tessera.json: realms[0]: expected an object, got an array");
  EXPECT_EQ(KindError(R"({"schema": {}})"),
            "app/tessera.json: realms[0]: missing required field \"name\"");
  EXPECT_EQ(KindError(R"({"name": 5})"),
            "app/tessera.json: realms[0].name: expected a string, got an "
            "integer");
  EXPECT_TRUE(Contains(KindError(R"({"name": "Lobby"})"),
                       "realms[0].name: \"Lobby\" is not a valid realm name"));
  EXPECT_EQ(KindError(R"({"name": "m", "schema": []})"),
            "app/tessera.json: realms[0].schema: expected an object, got an "
            "array");
  EXPECT_EQ(KindError(R"({"name": "m", "logWindow": "512"})"),
            "app/tessera.json: realms[0].logWindow: expected an integer, got "
            "a string");
  EXPECT_EQ(KindError(R"({"name": "m", "logWindow": 0})"),
            "app/tessera.json: realms[0].logWindow: must be in 2..1000000, "
            "got 0");
  EXPECT_TRUE(
      Contains(KindError(R"({"name": "m", "persistence": "sometimes"})"),
               "realms[0].persistence: expected \"durable\" or "
               "\"ephemeral\""));
  EXPECT_TRUE(Contains(KindError(R"({"name": "m", "security": 1})"),
                       "realms[0].security: expected a string"));
  EXPECT_TRUE(Contains(KindError(R"({"name": "m", "module": ""})"),
                       "realms[0].module: must not be empty"));
  EXPECT_TRUE(Contains(KindError(R"({"name": "m", "expireAfterIdleMs": -1})"),
                       "realms[0].expireAfterIdleMs: must be in 1.."));
  EXPECT_TRUE(Contains(KindError(R"({"name": "m", "limits": []})"),
                       "realms[0].limits: expected an object"));
  EXPECT_TRUE(Contains(KindError(R"({"name": "m", "rules": [{"path": "a"}]})"),
                       "app/tessera.json: realms[0].rules[0]: needs"));
}

}  // namespace
}  // namespace tessera::realm
