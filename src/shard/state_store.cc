#include "shard/state_store.h"

namespace tessera::shard {

Status MemoryStateStore::Save(std::string_view shard_id,
                              std::string_view bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = states_.find(shard_id);
  if (it == states_.end()) {
    states_.emplace(std::string(shard_id), std::string(bytes));
  } else {
    it->second.assign(bytes);
  }
  ++saves_;
  return Status::Ok();
}

Result<std::optional<std::string>> MemoryStateStore::Load(
    std::string_view shard_id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = states_.find(shard_id);
  if (it == states_.end()) return std::optional<std::string>();
  return std::optional<std::string>(it->second);
}

Status MemoryStateStore::Forget(std::string_view shard_id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = states_.find(shard_id);
  if (it != states_.end()) states_.erase(it);
  return Status::Ok();
}

size_t MemoryStateStore::saves() const {
  std::lock_guard<std::mutex> lock(mu_);
  return saves_;
}

}  // namespace tessera::shard
