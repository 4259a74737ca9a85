// Builds an app's source shard kinds into WebAssembly modules with the
// system clang++/wasm-ld and the C++ guest SDK, following the recipe of
// sdk/cpp/BUILD.md (keep the two in step).
//
// For each source kind, every *.cc / *.cpp directly in its source directory
// plus the SDK's runtime sources (<sdk>/src/*.{c,cc,cpp}: the WASI stubs) is
// compiled to <app>/.tessera/build/obj/<kind>/ and linked into the kind's
// `output` (<app>/.tessera/build/<kind>.wasm). The link writes a temporary
// file and renames it, so a reader never sees a half-written module.
//
// A kind is skipped ("up to date") when its output is newer than every
// input (its sources, the headers they included as recorded in the
// compiler's depfiles, and the SDK runtime sources) and the recorded
// commands match the current ones (so adding or removing a source file, or
// changing flags, rebuilds).
#ifndef TESSERA_APP_BUILDER_H_
#define TESSERA_APP_BUILDER_H_

#include <cstdint>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "app/manifest.h"
#include "common/status.h"

namespace tessera::app {

struct BuildOptions {
  // The C++ guest SDK (holding include/tessera/ and src/); empty means
  // FindSdkDir().
  std::filesystem::path sdk_dir;
  std::string cxx = "clang++";  // run via PATH unless it contains a '/'
  std::string cc = "clang";     // for the SDK's C runtime sources
  std::string wasm_ld = "wasm-ld";
  std::string sysroot = "/usr";  // holds include/wasm32-wasi, lib/wasm32-wasi
  std::string opt_level = "-O2";
  uint32_t stack_bytes = 262144;  // guest shadow stack (wasm-ld -z stack-size)
  // Kinds to build, by name; empty means every source kind. Naming an
  // unknown or prebuilt kind is an error.
  std::vector<std::string> only_kinds;
  unsigned jobs = 0;     // parallel compiler processes; 0 = hardware threads
  bool force = false;    // rebuild even when up to date
  bool verbose = false;  // print each command line to `progress`
  // A development build for hot reload: source kinds are compiled at -O0,
  // the shard's own files against a precompiled header of the SDK
  // (app/guest_pch.h), into QuickOutput() with objects under
  // .tessera/build/obj-quick/; the kind's `output` is left alone. Crate
  // kinds build as usual.
  bool quick = false;
  // Rust crate kinds (app/crate_builder.h): Debian's toolchain, called by
  // absolute path so rustup's shims on PATH are never used.
  std::string cargo = "/usr/bin/cargo";
  std::string rustc = "/usr/bin/rustc";
  std::string cargo_registry = "/usr/share/cargo/registry";
  // The Rust guest SDK crate; empty means FindRustSdkDir().
  std::filesystem::path rust_sdk_dir;
  // The Rust compute SDK crate, for crates that depend on
  // tessera-compute-sdk; empty means FindRustComputeSdkDir().
  std::filesystem::path rust_compute_sdk_dir;
};

// Finds the guest SDK: $TESSERA_SDK_DIR if set (an error if it is not an
// SDK), else the source tree's sdk/cpp (compiled in), else
// <dir of the running executable>/../share/tessera/sdk/cpp. A directory
// counts as the SDK if it holds include/tessera/abi.h (an installed SDK)
// or sits in a source tree whose include/tessera/abi.h is at ../../include
// (sdk/cpp beside the repository's include/).
// Errors: kNotFound naming every place looked at.
Result<std::filesystem::path> FindSdkDir();

// Builds the manifest's source kinds (see the file comment) and crate kinds
// (app/crate_builder.h, after the C++ ones, one at a time), writing one
// progress line per step and per kind to `progress`, plus any compiler
// warnings verbatim. Prebuilt (`wasm`) kinds are only checked to exist.
//
// Errors: kNotFound for a missing SDK, source directory or prebuilt module;
// kInvalidArgument when a compile or link fails: the message names the kind
// and file and carries the compiler's output verbatim (one entry per failed
// step; a failed kind stops, other kinds still build; crate kinds as
// BuildCrateKind); kIo when a tool cannot
// be started or an output cannot be written.
//
// Thread-safety: one call at a time per app directory. Blocks until every
// started compiler process has exited.
Status BuildKinds(const Manifest& manifest, const BuildOptions& options,
                  std::ostream& progress);

// Where a quick build puts a source kind's module:
// <app>/.tessera/build/quick/<kind>.wasm.
std::filesystem::path QuickOutput(const Manifest& manifest,
                                  const ShardKindSpec& spec);

}  // namespace tessera::app

#endif  // TESSERA_APP_BUILDER_H_
