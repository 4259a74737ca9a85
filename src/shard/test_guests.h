// Test-only helpers: the wasm test guests under tests/guests/ (built by
// CMake with the guest SDK's toolchain, which configuring requires) and codec
// helpers.
#ifndef TESSERA_SHARD_TEST_GUESTS_H_
#define TESSERA_SHARD_TEST_GUESTS_H_

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/status.h"
#include "wasm/loader.h"

namespace tessera::shard::testing {

// Path of the built guest `name` (counter, spin, membomb, recurse,
// panicker, badrestore, initfail, logger, zone_mini, lagcomp, lagcomp_raw,
// talk, calls; see tests/guests/README.md), or nullptr when this test binary
// does not depend on that guest (its CMakeLists.txt defines
// TESSERA_GUEST_<NAME>).
const char* GuestPath(std::string_view name);

// Loads guest `name` with the shard policy, fuel instrumentation and a
// memory cap of memory_mb; cached per (name, cap) for the process. A guest
// that is not there is an error saying what to build or install.
Result<std::shared_ptr<const wasm::CompiledModule>> LoadGuest(
    std::string_view name, uint32_t memory_mb);
// As LoadGuest, with the generated C compiled by `c_compiler` at
// `opt_level` (e.g. Tiny C, wasm::QuickCompiler()); not cached.
Result<std::shared_ptr<const wasm::CompiledModule>> LoadGuestWith(
    std::string_view name, uint32_t memory_mb, const std::string& c_compiler,
    const std::string& opt_level);

std::string Msgpack(const nlohmann::json& value);
nlohmann::json FromMsgpack(std::string_view bytes);

}  // namespace tessera::shard::testing

// Declares `var` as the loaded guest; the test fails (never skips) when the
// guest is missing.
#define TESSERA_LOAD_GUEST(var, name, memory_mb)                             \
  auto var##_loaded = ::tessera::shard::testing::LoadGuest(name, memory_mb); \
  ASSERT_TRUE(var##_loaded.ok()) << var##_loaded.status().ToString();        \
  std::shared_ptr<const ::tessera::wasm::CompiledModule> var = *var##_loaded

#endif  // TESSERA_SHARD_TEST_GUESTS_H_
