// What `tessera run` and `tessera replay` share: an app's shard kind
// resolved from its manifest (built first when asked and it is built from
// sources), its module loaded as the server loads it
// (server::LoadKindModule, cached under APP-DIR/.tessera/cache), and
// snapshots decoded for printing.
#ifndef TESSERA_CLI_LOCAL_SHARD_H_
#define TESSERA_CLI_LOCAL_SHARD_H_

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "app/manifest.h"
#include "common/status.h"
#include "server/app_kinds.h"
#include "shard/shard_types.h"

namespace tessera::cli {

struct AppKind {
  app::Manifest manifest;
  app::ShardKindSpec spec;
};

// Reads APP-DIR's manifest and finds `kind` (building it first when
// `build` and it is built from sources). Errors: the manifest's, kNotFound
// naming the kinds there are, the build's.
Result<AppKind> ResolveKind(const std::string& app_dir, const std::string& kind,
                            bool build);

// The kind's module, or the .wasm at `other` when not empty (checked
// against the kind's limits as its own would be); progress to stderr.
Result<server::LoadedKind> LoadKind(const AppKind& kind,
                                    const std::filesystem::path& other = {});

// A snapshot in the kind's codec as JSON (the module's key order);
// undecodable bytes become {"undecodable": "N bytes"}.
nlohmann::ordered_json DecodeSnapshot(const std::string& bytes,
                                      shard::Codec codec);

// One JSON line's text (invalid UTF-8 replaced).
template <class Json>
std::string Dump(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace tessera::cli

#endif  // TESSERA_CLI_LOCAL_SHARD_H_
