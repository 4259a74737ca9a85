#include "shard/kind_registry.h"

#include <utility>

namespace tessera::shard {

Status KindRegistry::Add(KindConfig config,
                         std::shared_ptr<const wasm::CompiledModule> module,
                         std::string version) {
  if (config.name.empty()) return InvalidArgument("a shard kind needs a name");
  if (module == nullptr) {
    return InvalidArgument("shard kind " + config.name + " has no module");
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (kinds_.count(config.name) != 0) {
    return Status(StatusCode::kAlreadyExists,
                  "shard kind " + config.name + " is already registered");
  }
  std::string name = config.name;
  auto entry = std::make_shared<const KindEntry>(
      KindEntry{std::move(config), std::move(module), std::move(version)});
  kinds_.emplace(std::move(name), std::move(entry));
  return Status::Ok();
}

Result<std::shared_ptr<const KindEntry>> KindRegistry::Replace(
    std::string_view name, std::shared_ptr<const wasm::CompiledModule> module,
    std::string version) {
  if (module == nullptr) {
    return InvalidArgument("shard kind " + std::string(name) +
                           ": no module to reload");
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto it = kinds_.find(name);
  if (it == kinds_.end()) {
    return NotFound("unknown shard kind \"" + std::string(name) + "\"");
  }
  auto entry = std::make_shared<const KindEntry>(
      KindEntry{it->second->config, std::move(module), std::move(version)});
  it->second = entry;
  return entry;
}

std::shared_ptr<const KindEntry> KindRegistry::Find(
    std::string_view name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = kinds_.find(name);
  return it == kinds_.end() ? nullptr : it->second;
}

std::vector<std::string> KindRegistry::Names() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> names;
  names.reserve(kinds_.size());
  for (const auto& [name, entry] : kinds_) names.push_back(name);
  return names;
}

}  // namespace tessera::shard
