#include "server/app_kinds.h"

#include <cstdint>
#include <fstream>
#include <iterator>
#include <system_error>
#include <vector>

#include "app/builder.h"
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

}  // namespace

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
    const std::string where =
        "shard kind \"" + spec.config.name + "\": " + spec.output.string();
    if (!fs::exists(spec.output, ec)) {
      return NotFound(where + " does not exist" +
                      (spec.is_built()
                           ? "; build it with `tessera shards build " +
                                 manifest.dir.string() + "`"
                           : std::string()));
    }
    Result<std::vector<uint8_t>> bytes = ReadBytes(spec.output);
    if (!bytes.ok()) return bytes.status();
    wasm::LoadOptions load;
    load.check = shard::ShardCheckOptions(spec.config.memory_mb);
    load.cache_dir = cache_dir.string();
    wasm::LoadStats stats;
    auto module = wasm::LoadModule(*bytes, load, &stats);
    if (!module.ok()) {
      return Status(module.status().code(),
                    where + ": " + module.status().message());
    }
    progress << "loaded " << spec.config.name << " ("
             << (stats.cache_hit ? "cached" : "compiled") << ")\n";
    TESSERA_RETURN_IF_ERROR(registry->Add(spec.config, *module));
  }
  return Status::Ok();
}

}  // namespace tessera::server
