// Test-only: small compute module sources for the compile tests (what a
// deploy uploads), valid under the source rules.
#ifndef TESSERA_COMPUTE_TEST_MODULES_H_
#define TESSERA_COMPUTE_TEST_MODULES_H_

#include <string>

#include "compute/source_compiler.h"

namespace tessera::compute::testing {

// A C++ module on the SDK (tessera/compute.h): counts ticks in the state
// blob, echoes invokes.
inline SourceFiles CppModule() {
  return {{"module.cc",
           "#include <cstdint>\n"
           "#include <string>\n"
           "\n"
           "#include \"tessera/compute.h\"\n"
           "#include \"counter.h\"\n"
           "\n"
           "namespace {\n"
           "void Init() { tessera::compute::log_info(\"module init\"); }\n"
           "void Tick(std::uint32_t) { Count(); }\n"
           "tessera::Result<std::string> Invoke(std::string_view input) {\n"
           "  return std::string(input);\n"
           "}\n"
           "}  // namespace\n"
           "\n"
           "TESSERA_COMPUTE_MODULE(Init, Tick, Invoke);\n"},
          {"counter.h",
           "#pragma once\n"
           "#include <cstdint>\n"
           "inline std::uint64_t g_ticks = 0;\n"
           "inline void Count() { ++g_ticks; }\n"}};
}

// The seed's starter module on the Rust SDK (tessera-compute-sdk).
inline SourceFiles RustModule() {
  return {{"Cargo.toml",
           "[package]\n"
           "name = \"my-module\"\n"
           "version = \"0.1.0\"\n"
           "edition = \"2021\"\n"
           "\n"
           "[lib]\n"
           "crate-type = [\"cdylib\"]\n"
           "\n"
           "[dependencies]\n"
           "tessera-compute-sdk = \"0.1.0\"\n"},
          {"src/lib.rs",
           "use std::sync::atomic::{AtomicU64, Ordering};\n"
           "static TICKS: AtomicU64 = AtomicU64::new(0);\n"
           "\n"
           "fn on_init() {\n"
           "    tessera_compute_sdk::log(1, \"module init\");\n"
           "}\n"
           "\n"
           "fn on_tick(_dt_ms: u32) {\n"
           "    let n = TICKS.fetch_add(1, Ordering::Relaxed) + 1;\n"
           "    tessera_compute_sdk::state_set(&n.to_le_bytes());\n"
           "}\n"
           "\n"
           "fn on_invoke(input: &[u8]) -> Vec<u8> {\n"
           "    input.to_vec()\n"
           "}\n"
           "\n"
           "tessera_compute_sdk::register_module!(init: on_init, tick: "
           "on_tick, invoke: on_invoke);\n"}};
}

}  // namespace tessera::compute::testing

#endif  // TESSERA_COMPUTE_TEST_MODULES_H_
