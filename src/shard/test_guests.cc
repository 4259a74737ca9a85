#include "shard/test_guests.h"

#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <vector>

#include "shard/shard_abi.h"

namespace tessera::shard::testing {

const char* GuestPath(std::string_view name) {
  static const std::map<std::string_view, const char*> kPaths = {
#ifdef TESSERA_GUEST_COUNTER
      {"counter", TESSERA_GUEST_COUNTER},
#endif
#ifdef TESSERA_GUEST_COUNTER2
      {"counter2", TESSERA_GUEST_COUNTER2},
#endif
#ifdef TESSERA_GUEST_SPIN
      {"spin", TESSERA_GUEST_SPIN},
#endif
#ifdef TESSERA_GUEST_MEMBOMB
      {"membomb", TESSERA_GUEST_MEMBOMB},
#endif
#ifdef TESSERA_GUEST_RECURSE
      {"recurse", TESSERA_GUEST_RECURSE},
#endif
#ifdef TESSERA_GUEST_PANICKER
      {"panicker", TESSERA_GUEST_PANICKER},
#endif
#ifdef TESSERA_GUEST_BADRESTORE
      {"badrestore", TESSERA_GUEST_BADRESTORE},
#endif
#ifdef TESSERA_GUEST_INITFAIL
      {"initfail", TESSERA_GUEST_INITFAIL},
#endif
#ifdef TESSERA_GUEST_LOGGER
      {"logger", TESSERA_GUEST_LOGGER},
#endif
#ifdef TESSERA_GUEST_ZONE_MINI
      {"zone_mini", TESSERA_GUEST_ZONE_MINI},
#endif
#ifdef TESSERA_GUEST_LAGCOMP
      {"lagcomp", TESSERA_GUEST_LAGCOMP},
#endif
#ifdef TESSERA_GUEST_LAGCOMP_RAW
      {"lagcomp_raw", TESSERA_GUEST_LAGCOMP_RAW},
#endif
#ifdef TESSERA_GUEST_TALK
      {"talk", TESSERA_GUEST_TALK},
#endif
#ifdef TESSERA_GUEST_CALLS
      {"calls", TESSERA_GUEST_CALLS},
#endif
  };
  auto it = kPaths.find(name);
  return it == kPaths.end() ? nullptr : it->second;
}

namespace {

Result<std::shared_ptr<const wasm::CompiledModule>> Load(
    std::string_view name, uint32_t memory_mb, const std::string& c_compiler,
    const std::string& opt_level) {
  const char* path = GuestPath(name);
  if (path == nullptr) {
    return NotFound("test guest " + std::string(name) +
                    " is not a dependency of this test binary (add it to "
                    "the test's TESSERA_GUEST_* definitions in CMake)");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return IoError("test guest " + std::string(name) +
                   " was not built: " + path +
                   " is missing (it needs the wasm32 guest toolchain: run "
                   "scripts/install-deps, configure with "
                   "TESSERA_BUILD_GUESTS=ON and build this test's target)");
  }
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  wasm::LoadOptions options;
  options.check = ShardCheckOptions(memory_mb);
  options.fuel = true;
  options.cache_dir = TESSERA_SHARD_TEST_CACHE;
  options.c_compiler = c_compiler;
  options.opt_level = opt_level;
  return wasm::LoadModule(bytes, options);
}

}  // namespace

Result<std::shared_ptr<const wasm::CompiledModule>> LoadGuest(
    std::string_view name, uint32_t memory_mb) {
  static std::mutex mu;
  static std::map<std::pair<std::string, uint32_t>,
                  std::shared_ptr<const wasm::CompiledModule>>
      cache;
  std::lock_guard<std::mutex> lock(mu);
  auto key = std::make_pair(std::string(name), memory_mb);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  const wasm::LoadOptions defaults;
  auto module = Load(name, memory_mb, defaults.c_compiler, defaults.opt_level);
  if (!module.ok()) return module.status();
  cache.emplace(key, *module);
  return *module;
}

Result<std::shared_ptr<const wasm::CompiledModule>> LoadGuestWith(
    std::string_view name, uint32_t memory_mb, const std::string& c_compiler,
    const std::string& opt_level) {
  return Load(name, memory_mb, c_compiler, opt_level);
}

std::string Msgpack(const nlohmann::json& value) {
  std::vector<uint8_t> bytes = nlohmann::json::to_msgpack(value);
  return std::string(bytes.begin(), bytes.end());
}

nlohmann::json FromMsgpack(std::string_view bytes) {
  return nlohmann::json::from_msgpack(bytes.begin(), bytes.end());
}

}  // namespace tessera::shard::testing
