#include "shard/kind_registry.h"

#include <utility>

namespace tessera::shard {

Status KindRegistry::Add(KindConfig config,
                         std::shared_ptr<const wasm::CompiledModule> module) {
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
      KindEntry{std::move(config), std::move(module)});
  kinds_.emplace(std::move(name), std::move(entry));
  return Status::Ok();
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
