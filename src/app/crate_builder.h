// Builds a Rust crate into a WebAssembly module with Debian's Rust
// toolchain, offline, following sdk/rust/BUILD.md (keep the two in step):
// a shard kind (`"crate": "shards/arena"` in tessera.json) or, with
// BuildCrate, any crate such as a compute module's sources.
//
// Runs `/usr/bin/cargo build --release --target wasm32-unknown-unknown`
// on the crate with CARGO_HOME=<app>/.tessera/build/cargo-home, whose
// config.toml replaces crates.io with Debian's packaged crates
// (/usr/share/cargo/registry), forces offline mode, patches the
// `tessera-shard-guest` and `tessera-compute-sdk` dependencies to the SDK
// crates (each one the crate's Cargo.toml names; a shard kind always gets
// the shard SDK), and sets the release
// profile (opt-level "s", lto, codegen-units 1, panic "abort", strip). The
// cdylib cargo reports is copied (via a temporary file and a rename) to the
// kind's output, <app>/.tessera/build/<kind>.wasm; cargo's target directory
// is <app>/.tessera/build/cargo-target, shared by the app's crates.
//
// A kind is skipped ("up to date") when its output is newer than every file
// of the crate (target/ and dot-files excepted) and of the SDK crates, and
// the recorded cargo command and config match the current ones.
#ifndef TESSERA_APP_CRATE_BUILDER_H_
#define TESSERA_APP_CRATE_BUILDER_H_

#include <filesystem>
#include <ostream>

#include "app/builder.h"
#include "app/manifest.h"
#include "common/status.h"

namespace tessera::app {

// Finds the Rust guest SDK crate: $TESSERA_RUST_SDK_DIR if set, else the
// source tree's sdk/rust/tessera-shard-guest, else <dir of the running
// executable>/../share/tessera/sdk/rust/tessera-shard-guest. A directory
// counts if it holds Cargo.toml and src/lib.rs.
// Errors: kNotFound naming every place looked at.
Result<std::filesystem::path> FindRustSdkDir();

// Finds the Rust compute SDK crate (sdk/rust/tessera-compute-sdk):
// $TESSERA_RUST_COMPUTE_SDK_DIR if set, else tessera-compute-sdk beside
// $TESSERA_RUST_SDK_DIR when that is set, else the source tree's
// sdk/rust/tessera-compute-sdk, else <dir of the running
// executable>/../share/tessera/sdk/rust/tessera-compute-sdk. Counts as
// FindRustSdkDir. Errors: kNotFound naming every place looked at.
Result<std::filesystem::path> FindRustComputeSdkDir();

// One crate to build outside a manifest (a compute module's sources).
struct CrateBuildSpec {
  std::string name;  // starts every progress line and error message
  std::filesystem::path crate_dir;  // holds Cargo.toml and src/
  std::filesystem::path output;     // the .wasm to write
  // Holds cargo-home/ (the cargo config), cargo-target/ (shared by every
  // crate built here: dependencies compile once) and obj/<name>/ (the
  // up-to-date record). Builds sharing it must not run concurrently.
  std::filesystem::path build_dir;
};

// Builds `spec.crate_dir` into `spec.output` as BuildCrateKind does
// (options: cargo, rustc, cargo_registry, rust_sdk_dir,
// rust_compute_sdk_dir, force, verbose). Errors as BuildCrateKind's.
Status BuildCrate(const CrateBuildSpec& spec, const BuildOptions& options,
                  std::ostream& progress);

// Builds one crate kind (see the file comment), writing cargo's progress
// lines to `progress` as they come and its warnings after a success.
//
// Errors: kNotFound for a missing toolchain (naming the Debian packages),
// SDK, crate directory or Cargo.toml; kInvalidArgument when cargo fails: the
// message names the kind, carries cargo's output verbatim, and starts with
// the dependency Debian does not package when that is the reason; kIo when
// cargo cannot be started or an output cannot be written.
Status BuildCrateKind(const Manifest& manifest, const ShardKindSpec& spec,
                      const BuildOptions& options, std::ostream& progress);

}  // namespace tessera::app

#endif  // TESSERA_APP_CRATE_BUILDER_H_
