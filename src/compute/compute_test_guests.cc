#include "compute/compute_test_guests.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <utility>

#include "compute/module_instance.h"

namespace tessera::compute::testing {
namespace {

// name -> path, from the TESSERA_COMPUTE_GUEST_PATHS definition:
// "name=path|name=path|...".
const std::map<std::string, std::string, std::less<>>& Paths() {
  static const auto* paths = [] {
    auto* m = new std::map<std::string, std::string, std::less<>>;
    std::string_view all = TESSERA_COMPUTE_GUEST_PATHS;
    while (!all.empty()) {
      const size_t end = std::min(all.find('|'), all.size());
      std::string_view entry = all.substr(0, end);
      const size_t eq = entry.find('=');
      if (eq != std::string_view::npos) {
        m->emplace(std::string(entry.substr(0, eq)),
                   std::string(entry.substr(eq + 1)));
      }
      all.remove_prefix(end == all.size() ? end : end + 1);
    }
    return m;
  }();
  return *paths;
}

}  // namespace

const std::vector<std::string>& ComputeGuestNames() {
  static const auto* names = [] {
    auto* v = new std::vector<std::string>;
    for (const auto& [name, path] : Paths()) v->push_back(name);
    return v;
  }();
  return *names;
}

Result<std::vector<uint8_t>> ComputeGuestBytes(std::string_view name) {
  auto it = Paths().find(name);
  if (it == Paths().end()) {
    return NotFound("no compute test module " + std::string(name));
  }
  std::ifstream in(it->second, std::ios::binary);
  if (!in) {
    return IoError("compute test module " + std::string(name) +
                   " was not built: " + it->second +
                   " is missing (build the compute_test_guest_" +
                   std::string(name) + " target)");
  }
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
}

Result<std::shared_ptr<const wasm::CompiledModule>> LoadComputeGuest(
    std::string_view name, uint32_t memory_mb) {
  static std::mutex mu;
  static std::map<std::pair<std::string, uint32_t>,
                  std::shared_ptr<const wasm::CompiledModule>>
      cache;
  std::lock_guard<std::mutex> lock(mu);
  auto key = std::make_pair(std::string(name), memory_mb);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  Result<std::vector<uint8_t>> bytes = ComputeGuestBytes(name);
  if (!bytes.ok()) return bytes.status();
  wasm::LoadOptions options;
  options.check = ComputeCheckOptions(memory_mb);
  options.fuel = true;
  options.cache_dir = TESSERA_COMPUTE_TEST_CACHE;
  std::filesystem::create_directories(options.cache_dir);
  auto module = wasm::LoadModule(*bytes, options);
  if (!module.ok()) return module.status();
  cache.emplace(key, *module);
  return *module;
}

}  // namespace tessera::compute::testing
