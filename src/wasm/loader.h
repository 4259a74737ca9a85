// The module loader: reads WebAssembly bytes, refuses what tessera cannot or
// will not run (with a precise reason), instruments fuel and interrupt
// checks, generates C with libwabt, compiles it with the system C compiler
// into a shared object (cached by content hash) and dlopens it.
//
// Thread-safety: LoadModule may be called from any thread; concurrent loads
// of the same module serialise on the cache entry.
#ifndef TESSERA_WASM_LOADER_H_
#define TESSERA_WASM_LOADER_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "common/status.h"
#include "wasm/module_info.h"

namespace tessera::wasm {

struct AbiSpec;

struct CheckOptions {
  // The ABI the module must follow (wasm/abi_spec.h): its only allowed
  // imports and its required exports. Null: a bare module that imports
  // nothing and has no required exports (benchmarks calling plain exported
  // functions).
  const AbiSpec* abi = nullptr;
  // Test-only (the WebAssembly spec conformance runner): any imports, of
  // every kind, bound at instantiation to exports of earlier instances or
  // to host functions (Instance::CreateLinked); start functions allowed.
  // Function imports whose signature mentions funcref are refused. Never
  // used for production modules.
  bool link_any_imports = false;
  // Memory cap in 64 KiB pages; initial memory above it is refused and the
  // module's maximum is rewritten to it. 0 means 65536 (4 GiB).
  uint32_t memory_cap_pages = 0;
};

// Validates `wasm` and checks it against the options. Does not compile
// anything. Errors: kInvalidArgument for bytes that are not a valid module,
// kRefused for a valid module that breaks the policy; the message says why.
Result<ModuleInfo> CheckModule(std::span<const uint8_t> wasm,
                               const CheckOptions& options);

struct LoadOptions {
  CheckOptions check;
  bool fuel = true;       // instrument fuel + interrupt checks
  std::string cache_dir;  // required: where compiled .so files live
  // Run as `<c_compiler> -O2 -fPIC -shared -fsignaling-nans ...` (see
  // loader.cc; GCC: clang accepts -fsignaling-nans but ignores it). A
  // compiler named `tcc` (Tiny C, QuickCompiler()) builds in a few tens of
  // milliseconds code that runs several times slower: for development
  // reloads, followed by an optimised build. Results are the same either way
  // (no folding, no contraction; fuel is counted in the module itself).
  std::string c_compiler = "cc";
  std::string opt_level = "-O2";
  bool keep_c_source = false;  // leave the generated .c beside the .so
};

// Whether `c_compiler` is Tiny C (by file name).
bool IsTinyCompiler(const std::string& c_compiler);
// Tiny C's path when it is installed (Debian package tcc), else "".
std::string QuickCompiler();

class CompiledModule;

struct LoadStats {
  bool cache_hit = false;
  double check_ms = 0, codegen_ms = 0, compile_ms = 0, dlopen_ms = 0;
};

// Checks, instruments, compiles (or finds in the cache) and dlopens.
// Errors: as CheckModule, plus kIo / kInternal when the compiler fails (the
// message carries the compiler's output).
Result<std::shared_ptr<const CompiledModule>> LoadModule(
    std::span<const uint8_t> wasm, const LoadOptions& options,
    LoadStats* stats = nullptr);

}  // namespace tessera::wasm

#endif  // TESSERA_WASM_LOADER_H_
