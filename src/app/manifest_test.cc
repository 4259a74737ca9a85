#include "app/manifest.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace tessera::app {
namespace {

namespace fs = std::filesystem;

Result<Manifest> Parse(const std::string& text) {
  return ParseManifest(text, "games/arena", "games/arena/tessera.json");
}

// Parses a manifest with one kind whose fields are `fields` (JSON members,
// without braces) and returns the error message ("" if it parsed).
std::string KindError(const std::string& fields) {
  Result<Manifest> m =
      Parse(R"({"name":"a","shards":[{"name":"arena",)" + fields + "}]}");
  return m.ok() ? "" : m.status().message();
}

TEST(ManifestTest, FullExample) {
  Result<Manifest> m = Parse(R"({"name":"arena-app","shards":[
    {"name":"arena","source":"shards/arena","codec":"json","tickRate":30,
     "tickBudgetMs":50,"memoryMb":32,"fuelPerTick":300000000,"maxRunMs":150,
     "idleShutdownSecs":0,"onStop":"fn"},
    {"name":"lobby","wasm":"prebuilt/lobby.wasm"}]})");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->name, "arena-app");
  EXPECT_EQ(m->dir, fs::path("games/arena"));
  ASSERT_EQ(m->kinds.size(), 2u);

  const ShardKindSpec& arena = m->kinds[0];
  EXPECT_TRUE(arena.is_source());
  EXPECT_EQ(arena.config.name, "arena");
  EXPECT_EQ(arena.config.codec, shard::Codec::kJson);
  EXPECT_EQ(arena.config.tick_rate, 30u);
  EXPECT_EQ(arena.config.tick_budget_ms, 50u);
  EXPECT_EQ(arena.config.memory_mb, 32u);
  EXPECT_EQ(arena.config.fuel_per_tick, 300000000u);
  EXPECT_EQ(arena.config.max_run_ms, 150u);
  EXPECT_EQ(arena.config.idle_shutdown_secs, 0u);
  EXPECT_EQ(arena.config.on_stop, "fn");
  EXPECT_EQ(arena.source, fs::path("games/arena/shards/arena"));
  EXPECT_TRUE(arena.wasm.empty());
  EXPECT_EQ(arena.output, fs::path("games/arena/.tessera/build/arena.wasm"));

  const ShardKindSpec& lobby = m->kinds[1];
  EXPECT_FALSE(lobby.is_source());
  EXPECT_EQ(lobby.wasm, fs::path("games/arena/prebuilt/lobby.wasm"));
  EXPECT_EQ(lobby.output, lobby.wasm);

  EXPECT_EQ(m->FindKind("lobby"), &m->kinds[1]);
  EXPECT_EQ(m->FindKind("nope"), nullptr);
}

TEST(ManifestTest, DefaultsAreKindConfigDefaults) {
  Result<Manifest> m =
      Parse(R"({"name":"a","shards":[{"name":"arena","source":"src"}]})");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const shard::KindConfig& c = m->kinds[0].config;
  const shard::KindConfig d;
  EXPECT_EQ(c.codec, d.codec);
  EXPECT_EQ(c.tick_rate, d.tick_rate);
  EXPECT_EQ(c.tick_budget_ms, d.tick_budget_ms);
  EXPECT_EQ(c.memory_mb, d.memory_mb);
  EXPECT_EQ(c.fuel_per_tick, d.fuel_per_tick);
  EXPECT_EQ(c.max_run_ms, d.max_run_ms);
  EXPECT_EQ(c.idle_shutdown_secs, d.idle_shutdown_secs);
  EXPECT_EQ(c.on_stop, d.on_stop);
}

TEST(ManifestTest, AbsoluteWasmPathStaysAbsolute) {
  Result<Manifest> m =
      Parse(R"({"name":"a","shards":[{"name":"k","wasm":"/opt/k.wasm"}]})");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->kinds[0].output, fs::path("/opt/k.wasm"));
}

TEST(ManifestTest, CurrentDirectoryGivesShortPaths) {
  Result<Manifest> m = ParseManifest(
      R"({"name":"a","shards":[{"name":"arena","source":"./shards/arena"}]})",
      ".", "tessera.json");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->kinds[0].source, fs::path("shards/arena"));
  EXPECT_EQ(m->kinds[0].output, fs::path(".tessera/build/arena.wasm"));
}

TEST(ManifestTest, BadJsonGivesByteOffset) {
  Result<Manifest> m = Parse("{\"name\": \"a\",\n  x}");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(m.status().message().rfind(
                "games/arena/tessera.json: invalid JSON at byte 16 (line 2, "
                "column 3): syntax error",
                0),
            0u)
      << m.status().message();
}

TEST(ManifestTest, EmptyFileIsBadJson) {
  Result<Manifest> m = Parse("");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("invalid JSON at byte 0"),
            std::string::npos)
      << m.status().message();
}

TEST(ManifestTest, TopLevelErrors) {
  auto error = [](const std::string& text) {
    Result<Manifest> m = Parse(text);
    return m.ok() ? "" : m.status().message();
  };
  EXPECT_EQ(error("[]"),
            "games/arena/tessera.json: expected an object, got an array");
  EXPECT_EQ(error(R"({"shards":[]})"),
            "games/arena/tessera.json: missing required field \"name\"");
  EXPECT_EQ(error(R"({"name":"","shards":[]})"),
            "games/arena/tessera.json: name: must not be empty");
  EXPECT_EQ(
      error(R"({"name":7,"shards":[]})"),
      "games/arena/tessera.json: name: expected a string, got an integer");
  EXPECT_EQ(error(R"({"name":"a"})"),
            "games/arena/tessera.json: missing required field \"shards\" (an "
            "app declares shard kinds, realm kinds or both)");
  EXPECT_EQ(error(R"({"name":"a","realms":[]})"),
            "games/arena/tessera.json: missing required field \"shards\" (an "
            "app declares shard kinds, realm kinds or both)");
  EXPECT_EQ(error(R"({"name":"a","shards":{}})"),
            "games/arena/tessera.json: shards: expected an array, got an "
            "object");
  EXPECT_EQ(error(R"({"name":"a","shards":[]})"),
            "games/arena/tessera.json: shards: declares no shard kinds");
  EXPECT_EQ(error(R"({"name":"a","shard":[]})"),
            "games/arena/tessera.json: unknown field \"shard\" (did you mean "
            "\"shards\"?)");
  EXPECT_EQ(error(R"({"name":"a","shards":[7]})"),
            "games/arena/tessera.json: shards[0]: expected an object, got an "
            "integer");
  EXPECT_EQ(error(R"({"name":"a","name":"b","shards":[]})"),
            "games/arena/tessera.json: duplicate field \"name\"");
}

TEST(ManifestTest, UnknownKindFieldIsRefusedByName) {
  EXPECT_EQ(KindError(R"("source":"s","tickrate":20)"),
            "games/arena/tessera.json: shards[0]: unknown field \"tickrate\" "
            "(did you mean \"tickRate\"?)");
  EXPECT_EQ(KindError(R"("source":"s","colour":"red")"),
            "games/arena/tessera.json: shards[0]: unknown field \"colour\"");
}

TEST(ManifestTest, WrongTypes) {
  EXPECT_EQ(KindError(R"("source":"s","tickRate":"20")"),
            "games/arena/tessera.json: shards[0].tickRate: expected an "
            "integer, got a string");
  EXPECT_EQ(KindError(R"("source":"s","memoryMb":1.5)"),
            "games/arena/tessera.json: shards[0].memoryMb: expected an "
            "integer, got a fractional number");
  EXPECT_EQ(KindError(R"("source":true)"),
            "games/arena/tessera.json: shards[0].source: expected a string, "
            "got a boolean");
  EXPECT_EQ(KindError(R"("source":"s","codec":null)"),
            "games/arena/tessera.json: shards[0].codec: expected a string, "
            "got null");
  EXPECT_EQ(KindError(R"("source":"s","onStop":[])"),
            "games/arena/tessera.json: shards[0].onStop: expected a string, "
            "got an array");
}

TEST(ManifestTest, OutOfRange) {
  const std::string p = "games/arena/tessera.json: shards[0].";
  EXPECT_EQ(KindError(R"("source":"s","tickRate":0)"),
            p + "tickRate: must be in 1..1000, got 0");
  EXPECT_EQ(KindError(R"("source":"s","tickRate":1001)"),
            p + "tickRate: must be in 1..1000, got 1001");
  EXPECT_EQ(KindError(R"("source":"s","memoryMb":0)"),
            p + "memoryMb: must be in 1..4096, got 0");
  EXPECT_EQ(KindError(R"("source":"s","memoryMb":4097)"),
            p + "memoryMb: must be in 1..4096, got 4097");
  EXPECT_EQ(KindError(R"("source":"s","tickBudgetMs":0)"),
            p + "tickBudgetMs: must be >= 1, got 0");
  EXPECT_EQ(KindError(R"("source":"s","maxRunMs":-5)"),
            p + "maxRunMs: must be >= 1, got -5");
  EXPECT_EQ(KindError(R"("source":"s","fuelPerTick":999)"),
            p + "fuelPerTick: must be >= 1000, got 999");
  EXPECT_EQ(KindError(R"("source":"s","idleShutdownSecs":-1)"),
            p + "idleShutdownSecs: must be >= 0, got -1");
  EXPECT_EQ(KindError(R"("source":"s","tickBudgetMs":4294967296)"),
            p + "tickBudgetMs: must be at most 4294967295, got 4294967296");
  EXPECT_EQ(KindError(R"("source":"s","fuelPerTick":9223372036854775808)"),
            p + "fuelPerTick: must be at most 9223372036854775807, got "
                "9223372036854775808");
  EXPECT_EQ(KindError(R"("source":"s","tickRate":1,"memoryMb":4096,)"
                      R"("fuelPerTick":1000,"maxRunMs":1,"tickBudgetMs":1)"),
            "");
}

TEST(ManifestTest, RecordInputs) {
  Result<Manifest> off =
      Parse(R"({"name":"a","shards":[{"name":"arena","source":"s"}]})");
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(off->kinds[0].config.record_inputs);
  EXPECT_EQ(off->kinds[0].config.record_mb, 64u);
  Result<Manifest> on =
      Parse(R"({"name":"a","shards":[{"name":"arena","source":"s",)"
            R"("recordInputs":true,"recordMb":8}]})");
  ASSERT_TRUE(on.ok()) << on.status().ToString();
  EXPECT_TRUE(on->kinds[0].config.record_inputs);
  EXPECT_EQ(on->kinds[0].config.record_mb, 8u);
  const std::string p = "games/arena/tessera.json: shards[0].";
  EXPECT_EQ(KindError(R"("source":"s","recordInputs":1)"),
            p + "recordInputs: expected a boolean, got an integer");
  EXPECT_EQ(KindError(R"("source":"s","recordMb":0)"),
            p + "recordMb: must be in 1..4096, got 0");
  EXPECT_EQ(KindError(R"("source":"s","recordMb":4097)"),
            p + "recordMb: must be in 1..4096, got 4097");
}

TEST(ManifestTest, SourceCrateAndWasm) {
  EXPECT_EQ(KindError(R"("source":"s","wasm":"k.wasm")"),
            "games/arena/tessera.json: shards[0]: gives more than one of "
            "\"source\", \"crate\" and \"wasm\"; give exactly one");
  EXPECT_EQ(KindError(R"("source":"s","crate":"c")"),
            "games/arena/tessera.json: shards[0]: gives more than one of "
            "\"source\", \"crate\" and \"wasm\"; give exactly one");
  EXPECT_EQ(KindError(R"("codec":"json")"),
            "games/arena/tessera.json: shards[0]: needs \"source\" (a "
            "directory of .cc files), \"crate\" (a Rust crate directory) or "
            "\"wasm\" (a prebuilt module)");
  EXPECT_EQ(KindError(R"("source":"")"),
            "games/arena/tessera.json: shards[0].source: must not be empty");
  EXPECT_EQ(KindError(R"("crate":"")"),
            "games/arena/tessera.json: shards[0].crate: must not be empty");
}

TEST(ManifestTest, CrateKindBuildsIntoTheBuildDirectory) {
  Result<Manifest> m = ParseManifest(
      R"({"name":"a","shards":[{"name":"arena","crate":"shards/arena"}]})",
      "games/arena", "tessera.json");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const ShardKindSpec& k = m->kinds[0];
  EXPECT_TRUE(k.is_crate());
  EXPECT_TRUE(k.is_built());
  EXPECT_FALSE(k.is_source());
  EXPECT_EQ(k.crate_dir, fs::path("games/arena/shards/arena"));
  EXPECT_EQ(k.output, fs::path("games/arena/.tessera/build/arena.wasm"));
}

TEST(ManifestTest, Codec) {
  EXPECT_EQ(KindError(R"("source":"s","codec":"msgpack")"), "");
  EXPECT_EQ(KindError(R"("source":"s","codec":"protobuf")"),
            "games/arena/tessera.json: shards[0].codec: must be \"msgpack\" "
            "or \"json\", got \"protobuf\"");
}

TEST(ManifestTest, KindNames) {
  EXPECT_TRUE(IsValidKindName("a"));
  EXPECT_TRUE(IsValidKindName("arena_2-b"));
  EXPECT_TRUE(IsValidKindName("a" + std::string(63, 'z')));
  EXPECT_FALSE(IsValidKindName("a" + std::string(64, 'z')));
  EXPECT_FALSE(IsValidKindName(""));
  EXPECT_FALSE(IsValidKindName("Arena"));
  EXPECT_FALSE(IsValidKindName("1arena"));
  EXPECT_FALSE(IsValidKindName("_arena"));
  EXPECT_FALSE(IsValidKindName("are.na"));
  EXPECT_FALSE(IsValidKindName("are/na"));

  Result<Manifest> m =
      Parse(R"({"name":"a","shards":[{"name":"Arena","source":"s"}]})");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(),
            "games/arena/tessera.json: shards[0].name: \"Arena\" is not a "
            "valid kind name (lowercase letter, then up to 63 of [a-z0-9_-])");
  m = Parse(R"({"name":"a","shards":[{"source":"s"}]})");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(),
            "games/arena/tessera.json: shards[0]: missing required field "
            "\"name\"");
}

TEST(ManifestTest, DuplicateKindNames) {
  Result<Manifest> m = Parse(R"({"name":"a","shards":[
      {"name":"arena","source":"s"},{"name":"lobby","source":"t"},
      {"name":"arena","wasm":"x.wasm"}]})");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(),
            "games/arena/tessera.json: shards[2].name: duplicate kind name "
            "\"arena\"");
}

class LoadManifestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tessera_manifest_test_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
};

TEST_F(LoadManifestTest, MissingDirectory) {
  Result<Manifest> m = LoadManifest(dir_ / "nope");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(m.status().message(),
            (dir_ / "nope").string() + ": app directory does not exist");
}

TEST_F(LoadManifestTest, MissingFile) {
  Result<Manifest> m = LoadManifest(dir_);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(m.status().message(),
            (dir_ / "tessera.json").string() +
                ": no such file (an app directory needs a tessera.json)");
}

TEST_F(LoadManifestTest, LoadsFromDisk) {
  std::ofstream(dir_ / "tessera.json")
      << R"({"name":"x","shards":[{"name":"k","source":"k"}]})";
  Result<Manifest> m = LoadManifest(dir_);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->kinds[0].output, dir_ / ".tessera/build/k.wasm");

  std::ofstream(dir_ / "tessera.json") << R"({"name":"x","shards":[{]})";
  m = LoadManifest(dir_);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(
      m.status().message().rfind(
          (dir_ / "tessera.json").string() + ": invalid JSON at byte 23", 0),
      0u)
      << m.status().message();
}

}  // namespace
}  // namespace tessera::app
