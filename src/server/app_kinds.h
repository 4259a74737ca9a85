// Loading an app's shard kinds into a KindRegistry: optionally build the
// source kinds (dev mode), then check, compile (cached) and load each
// kind's module with the kind's memory cap.
#ifndef TESSERA_SERVER_APP_KINDS_H_
#define TESSERA_SERVER_APP_KINDS_H_

#include <filesystem>
#include <memory>
#include <ostream>
#include <string>

#include "app/manifest.h"
#include "common/status.h"
#include "shard/kind_registry.h"

namespace tessera::server {

// Adds every kind of `manifest` to `registry`. With `build`, source kinds
// are built first (progress to `progress`); without it a source kind's
// module must already exist. Compiled modules are cached in `cache_dir`
// (created if needed). Errors: the builder's; kNotFound for a missing
// module (saying how to build it); the loader's (kRefused etc.), each
// prefixed with the kind and file. Blocks (compilers run); one call at a
// time per app.
Status LoadAppKinds(const app::Manifest& manifest, bool build,
                    const std::filesystem::path& cache_dir,
                    shard::KindRegistry* registry, std::ostream& progress);

// One kind's module as LoadAppKinds loads it (`manifest` is its app's),
// without building: the compiled module and its version, the first 12 hex
// digits of a 64-bit FNV-1a hash of the .wasm (which build a shard runs).
// Errors: as LoadAppKinds'.
struct LoadedKind {
  std::shared_ptr<const wasm::CompiledModule> module;
  std::string version;
};
// What to load instead of the kind's own output (hot reload's quick
// builds): another .wasm, and the C compiler for its generated code
// (wasm/loader.h, e.g. Tiny C).
struct KindModuleChoice {
  std::filesystem::path wasm;  // empty: spec.output
  std::string c_compiler = "cc";
  std::string opt_level = "-O2";
};
Result<LoadedKind> LoadKindModule(const app::Manifest& manifest,
                                  const app::ShardKindSpec& spec,
                                  const std::filesystem::path& cache_dir,
                                  std::ostream& progress,
                                  const KindModuleChoice& choice = {});

}  // namespace tessera::server

#endif  // TESSERA_SERVER_APP_KINDS_H_
