#include "cli/local_shard.h"

#include <iostream>

#include "app/builder.h"

namespace tessera::cli {

Result<AppKind> ResolveKind(const std::string& app_dir, const std::string& kind,
                            bool build) {
  Result<app::Manifest> manifest = app::LoadManifest(app_dir);
  if (!manifest.ok()) return manifest.status();
  const app::ShardKindSpec* spec = manifest->FindKind(kind);
  if (spec == nullptr) {
    std::string known;
    for (const app::ShardKindSpec& k : manifest->kinds) {
      known += (known.empty() ? "" : ", ") + k.config.name;
    }
    return NotFound("the app has no shard kind \"" + kind +
                    "\" (kinds: " + (known.empty() ? "none" : known) + ")");
  }
  if (build && spec->is_built()) {
    app::BuildOptions options;
    options.only_kinds = {spec->config.name};
    TESSERA_RETURN_IF_ERROR(app::BuildKinds(*manifest, options, std::cerr));
  }
  AppKind found{*manifest, *spec};
  return found;
}

Result<server::LoadedKind> LoadKind(const AppKind& kind,
                                    const std::filesystem::path& other) {
  app::ShardKindSpec spec = kind.spec;
  if (!other.empty()) {
    spec.source.clear();
    spec.crate_dir.clear();
    spec.wasm = spec.output = other;
  }
  return server::LoadKindModule(
      kind.manifest, spec, kind.manifest.dir / ".tessera" / "cache", std::cerr);
}

nlohmann::ordered_json DecodeSnapshot(const std::string& bytes,
                                      shard::Codec codec) {
  using ordered_json = nlohmann::ordered_json;
  ordered_json value =
      codec == shard::Codec::kJson
          ? ordered_json::parse(bytes, nullptr, /*allow_exceptions=*/false)
          : ordered_json::from_msgpack(bytes, /*strict=*/true,
                                       /*allow_exceptions=*/false);
  if (value.is_discarded()) {
    return ordered_json{
        {"undecodable", std::to_string(bytes.size()) + " bytes"}};
  }
  return value;
}

}  // namespace tessera::cli
