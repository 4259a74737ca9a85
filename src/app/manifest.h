// An app directory's `tessera.json`: the app's name and its shard kinds,
// each with its limits (shard::KindConfig) and where its module comes from.
//
// Shape (every kind field except `name` and one of `source`/`crate`/`wasm`
// is optional and defaults to KindConfig's value):
//   {"name": "arena-app",
//    "shards": [{"name": "arena", "source": "shards/arena",
//                "codec": "msgpack", "tickRate": 20, "tickBudgetMs": 100,
//                "memoryMb": 64, "fuelPerTick": 200000000, "maxRunMs": 200,
//                "idleShutdownSecs": 90, "onStop": "fn"}]}
//
// An optional "data" object declares the app's entity types (docs/data.md
// "The manifest"): {"types": [{"name": "Character", "owner": "userId",
// "fields": [{"name": "hp", "type": "int", "default": 100}, ...],
// "indexes": [{"field": "userId"}, {"field": "name", "unique": true}]}]}.
// A kind's "onStop" is an http(s):// URL or a function name; its
// "writeFlushMs" (100..60000, default 2000) paces its entity writes. With
// "recordInputs": true the server keeps an input log of each shard of the
// kind for `tessera replay` (docs/record-replay.md), a ring of "recordMb"
// MiB (1..4096, default 64).
//
// An optional "compute" array declares compute modules (docs/compute.md
// "The manifest"), synced into the server at boot:
//   "compute": [{"name": "world-sim", "crate": "compute/world-sim",
//                "description": "...", "alwaysOn": true, "enabled": true,
//                "triggers": [{"triggerType": "tick", "tickHz": 2}, ...]}]
// with exactly one of "source" (C++ sources) and "crate" (a Rust crate);
// each trigger is the body of the compute API's PUT .../triggers, checked
// by the server when it syncs (its field names and types here already).
//
// An optional "realms" array declares realm kinds (docs/realms.md "The
// realm kind"), each parsed by realm::ParseRealmKind:
//   "realms": [{"name": "match", "persistence": "durable",
//               "module": "match-logic", ...}]
// A realm kind's name may not be a shard kind's too (clients connect to
// both by name), and its "module" must name one of this manifest's
// "compute" modules.
//
// Parsing is strict: unknown fields are refused (to catch typos), and every
// error names the file and the field ("app/tessera.json: shards[0].tickRate:
// ...").
#ifndef TESSERA_APP_MANIFEST_H_
#define TESSERA_APP_MANIFEST_H_

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "data/data_types.h"
#include "realm/kind.h"
#include "shard/shard_types.h"

namespace tessera::app {

inline constexpr char kManifestFileName[] = "tessera.json";

// Where build outputs go, relative to the app directory.
inline constexpr char kBuildDirName[] = ".tessera/build";

// One shard kind of the app. Exactly one of `source`, `crate_dir` and `wasm`
// is set.
struct ShardKindSpec {
  shard::KindConfig config;
  // Directory holding the kind's .cc/.cpp files: the manifest's `source`
  // joined to the app directory. Empty for prebuilt kinds.
  std::filesystem::path source;
  // Prebuilt module: the manifest's `wasm` joined to the app directory
  // (absolute paths stay absolute). Empty for source kinds.
  std::filesystem::path wasm;
  // The module the server loads: `<app>/.tessera/build/<kind>.wasm` for
  // source kinds, `wasm` otherwise.
  std::filesystem::path output;

  // Rust crate (a directory with Cargo.toml, built with the Rust guest SDK
  // sdk/rust/tessera-shard-guest): the manifest's `crate` joined to the app
  // directory. Empty for other kinds.
  std::filesystem::path crate_dir;

  bool is_source() const { return !source.empty(); }
  bool is_crate() const { return !crate_dir.empty(); }
  // Whether `tessera shards build` makes the module (C++ sources or a crate).
  bool is_built() const { return is_source() || is_crate(); }
};

// One compute module of the app (the "compute" section). Exactly one of
// `source` and `crate_dir` is set.
struct ComputeModuleSpec {
  std::string name;  // [a-z][a-z0-9_-]{0,127}
  std::string description;
  std::filesystem::path source;     // C++ sources, joined to the app dir
  std::filesystem::path crate_dir;  // a Rust crate, joined to the app dir
  bool always_on = false;
  // Enable the module once its deployed version compiles (default true).
  bool enabled = true;
  // Each trigger object as compact JSON text: the HTTP trigger body.
  std::vector<std::string> triggers;
  // "app/tessera.json: compute[1]": which manifest declares the module and
  // where in it, for the sync's errors (apps served together each name
  // their own file).
  std::string where;

  const std::filesystem::path& dir() const {
    return source.empty() ? crate_dir : source;
  }
};

struct Manifest {
  std::string name;
  // The app directory as the caller gave it (lexically normalised); every
  // path in `kinds` is joined to it, so relative paths stay relative to the
  // working directory of the load.
  std::filesystem::path dir;
  std::vector<ShardKindSpec> kinds;        // in manifest order, names unique
  std::vector<ComputeModuleSpec> compute;  // in manifest order, names unique
  // The "data" section: the app's entity types (docs/data.md), parsed with
  // data::ParseDataSchema; empty when absent.
  data::DataSchema data;
  // The "realms" section: realm kinds in manifest order, names unique and
  // distinct from the shard kinds'; empty when absent.
  std::vector<realm::RealmKindConfig> realms;

  // The kind named `name`, or nullptr. The pointer lives as long as *this.
  const ShardKindSpec* FindKind(std::string_view name) const;
  // The realm kind named `name`, or nullptr; as FindKind.
  const realm::RealmKindConfig* FindRealm(std::string_view name) const;
};

// Reads and parses `<app_dir>/tessera.json`.
// Errors: kNotFound if the directory or file is missing, kIo if it cannot be
// read, kInvalidArgument for malformed or out-of-range content. Messages
// start with the manifest's path. Does not check that sources exist.
// Thread-safe.
Result<Manifest> LoadManifest(const std::filesystem::path& app_dir);

// Parses manifest text. `app_dir` resolves relative paths; `file_label`
// prefixes error messages (normally the manifest's path). Errors as
// LoadManifest (kInvalidArgument only). Thread-safe.
Result<Manifest> ParseManifest(std::string_view text,
                               const std::filesystem::path& app_dir,
                               const std::string& file_label);

// True if `name` matches [a-z][a-z0-9_-]{0,63}.
bool IsValidKindName(std::string_view name);

}  // namespace tessera::app

#endif  // TESSERA_APP_MANIFEST_H_
