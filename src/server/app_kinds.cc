#include "server/app_kinds.h"

#include <cstdint>
#include <fstream>
#include <iterator>
#include <string_view>
#include <system_error>
#include <vector>

#include "app/builder.h"
#include "common/fnv.h"
#include "shard/shard_abi.h"
#include "wasm/loader.h"

namespace tessera::server {
namespace fs = std::filesystem;

namespace {

Result<std::vector<uint8_t>> ReadBytes(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return IoError("cannot open " + file.string());
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  if (in.bad()) return IoError("cannot read " + file.string());
  return bytes;
}

std::string ModuleVersion(const std::vector<uint8_t>& bytes) {
  Fnv1a64 hash;
  hash.Add(std::string_view(reinterpret_cast<const char*>(bytes.data()),
                            bytes.size()));
  return hash.Hex(12);
}

}  // namespace

Result<LoadedKind> LoadKindModule(const app::Manifest& manifest,
                                  const app::ShardKindSpec& spec,
                                  const fs::path& cache_dir,
                                  std::ostream& progress,
                                  const KindModuleChoice& choice) {
  std::error_code ec;
  const fs::path& file = choice.wasm.empty() ? spec.output : choice.wasm;
  const std::string where =
      "shard kind \"" + spec.config.name + "\": " + file.string();
  if (!fs::exists(file, ec)) {
    return NotFound(where + " does not exist" +
                    (spec.is_built()
                         ? "; build it with `tessera shards build " +
                               manifest.dir.string() + "`"
                         : std::string()));
  }
  Result<std::vector<uint8_t>> bytes = ReadBytes(file);
  if (!bytes.ok()) return bytes.status();
  wasm::LoadOptions load;
  load.check = shard::ShardCheckOptions(spec.config.memory_mb);
  load.cache_dir = cache_dir.string();
  load.c_compiler = choice.c_compiler;
  load.opt_level = choice.opt_level;
  wasm::LoadStats stats;
  auto module = wasm::LoadModule(*bytes, load, &stats);
  if (!module.ok()) {
    return Status(module.status().code(),
                  where + ": " + module.status().message());
  }
  progress << "loaded " << spec.config.name << " ("
           << (stats.cache_hit ? "cached" : "compiled") << ")\n";
  return LoadedKind{*module, ModuleVersion(*bytes)};
}

Status LoadAppKinds(const app::Manifest& manifest, bool build,
                    const fs::path& cache_dir, shard::KindRegistry* registry,
                    std::ostream& progress) {
  if (build) {
    TESSERA_RETURN_IF_ERROR(app::BuildKinds(manifest, {}, progress));
  }
  std::error_code ec;
  fs::create_directories(cache_dir, ec);
  if (ec) {
    return IoError("cannot create " + cache_dir.string() + ": " + ec.message());
  }
  for (const app::ShardKindSpec& spec : manifest.kinds) {
    Result<LoadedKind> loaded =
        LoadKindModule(manifest, spec, cache_dir, progress);
    if (!loaded.ok()) return loaded.status();
    TESSERA_RETURN_IF_ERROR(
        registry->Add(spec.config, loaded->module, loaded->version));
  }
  return Status::Ok();
}

}  // namespace tessera::server
