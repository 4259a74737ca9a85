// From an uploaded file map to a compiled module: the source rules checked
// at deploy (before anything compiles), the compiler port, and the
// background compile queue with its artifact cache. docs/compute.md
// "Deploying".
#ifndef TESSERA_COMPUTE_SOURCE_COMPILER_H_
#define TESSERA_COMPUTE_SOURCE_COMPILER_H_

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/status.h"
#include "compute/compute_store.h"
#include "compute/compute_types.h"

namespace tessera::compute {

using SourceFiles = std::map<std::string, std::string>;

// Source rules (issue 14 item 2; every refusal kInvalidArgument naming the
// file / section / dependency / limit): at most 32 files, 256 KiB each,
// 1 MiB total; relative paths without "..", absolute parts or backslashes.
// Rust: Cargo.toml + src/lib.rs required, only src/**.rs beside Cargo.toml;
// Cargo.toml sections [package], [lib], [dependencies] only; no build.rs,
// no `build =` key, no [build-dependencies], no path/git dependencies, no
// Cargo.lock; dependencies only tessera-compute-sdk, serde, serde_json,
// rand. C++: only *.cc / *.h files (at least one .cc), includes only of our
// SDK (<tessera/...>), the C++ standard library and the files uploaded.
// `sdk_version` must be in [kOldestSdkVersion, kSdkVersion] and
// `abi_version` kAbiVersion. `module_name` must be crate-shaped
// ([a-z][a-z0-9_-]{0,127}). The full list (the Cargo.toml subset read,
// the header allowlist, the macros and attributes refused because they
// read the build machine's files or environment): docs/compute-sources.md.
Status CheckSources(Language language, const SourceFiles& files,
                    std::string_view sdk_version, int abi_version);
bool IsValidModuleName(std::string_view name);
// Rust when the map has Cargo.toml, else C++.
Language DetectLanguage(const SourceFiles& files);
// Hex SHA-256 over (language, sdk version, every path and content in
// order): equal sources hit the artifact cache.
std::string SourceHash(Language language, std::string_view sdk_version,
                       const SourceFiles& files);

struct CompileResult {
  bool ok = false;
  std::string log;  // the compiler's output, verbatim (also on success)
  std::filesystem::path wasm;  // the module, when ok
  int64_t size_bytes = 0;
};

// Compiles one version; blocking (seconds). Thread-compatible: the queue
// runs one compile at a time per compiler.
class SourceCompiler {
 public:
  virtual ~SourceCompiler() = default;
  virtual CompileResult Compile(const VersionRecord& version) = 0;
};

struct ToolchainOptions {
  // Where sources are written and artifacts kept:
  // <work_dir>/src/<hash>/ and <work_dir>/artifacts/<hash>.wasm.
  std::filesystem::path work_dir;
  // Toolchains and SDKs as app::BuildOptions (defaults found like the
  // shard builder's: FindSdkDir, the compute SDK crate beside the shard
  // SDK crate).
  std::filesystem::path cpp_sdk_dir;
  std::filesystem::path rust_sdk_dir;
};
// The real compiler: clang++/wasm-ld for C++, Debian's cargo offline for
// Rust, through the app builder's recipes.
std::unique_ptr<SourceCompiler> MakeToolchainCompiler(ToolchainOptions options);

// Moves versions pending -> compiling -> succeeded | failed in the store,
// one at a time on its own thread, oldest first. A source whose hash a
// succeeded version already has (and whose artifact file still exists) is
// not compiled again: the version succeeds with cache_hit and the earlier
// compile log. Start() resumes versions a crash left pending or compiling.
class CompileQueue {
 public:
  // Called on the queue's thread after each version finishes (its record
  // as stored). It may Enqueue, but must not call Shutdown.
  using Done = std::function<void(const VersionRecord& version)>;
  // `wall` dates compiled_ms (nullptr: RealWallClock).
  CompileQueue(ComputeStore* store, SourceCompiler* compiler, Done done,
               const WallClock* wall = nullptr);
  ~CompileQueue();  // Shutdown()
  Status Start();
  // Queues a stored version. Any thread.
  void Enqueue(int64_t module_id, int64_t version_no);
  // Waits for the running compile, drops the rest (they stay pending in
  // the store and resume at the next Start). Idempotent.
  void Shutdown();
  // Versions queued or compiling.
  size_t pending() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::compute

#endif  // TESSERA_COMPUTE_SOURCE_COMPILER_H_
