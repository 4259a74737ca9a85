// ShardHost's lookups for compute modules' notifications (shard_host.h):
// shards by kind and by message group, subscribers near a point; and a
// shard's recent guest log.
#include <memory>

#include "shard/hosted_shard.h"
#include "shard/message_router.h"
#include "shard/shard_host.h"

namespace tessera::shard {

std::vector<std::string> ShardHost::ShardsOfKind(std::string_view kind) const {
  std::vector<std::shared_ptr<HostedShard>> of_kind;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [id, shard] : shards_) {
      if (shard->kind->config.name == kind) of_kind.push_back(shard);
    }
  }
  std::vector<std::string> out;
  out.reserve(of_kind.size());
  for (const auto& shard : of_kind) {
    std::lock_guard<std::mutex> lock(shard->mu);
    if (shard->info.status == ShardStatus::kRunning) out.push_back(shard->id);
  }
  return out;  // shards_ is ordered by id
}

std::optional<std::vector<LogLine>> ShardHost::RecentLog(
    std::string_view id) const {
  std::shared_ptr<HostedShard> shard = Find(id);
  if (shard == nullptr) return std::nullopt;
  std::lock_guard<std::mutex> lock(shard->log_mu);
  return std::vector<LogLine>(shard->log.begin(), shard->log.end());
}

std::vector<std::string> ShardHost::GroupMembers(std::string_view group) const {
  return router_->GroupMembers(group);
}

Result<std::vector<std::string>> ShardHost::SubscribersWithin(
    std::string_view id, float x, float y, float radius) const {
  std::shared_ptr<HostedShard> shard = Find(id);
  std::shared_ptr<const AreaCentres> centres;
  bool running = false;
  if (shard != nullptr) {
    std::lock_guard<std::mutex> lock(shard->mu);
    running = shard->info.status == ShardStatus::kRunning;
    centres = shard->centres;
  }
  if (!running) {
    return NotFound("no running shard \"" + std::string(id) + "\"");
  }
  std::vector<std::string> out;
  if (centres == nullptr) return out;
  const double r2 = static_cast<double>(radius) * radius;
  for (const AreaCentre& c : *centres) {
    const double dx = static_cast<double>(c.x) - x;
    const double dy = static_cast<double>(c.y) - y;
    if (dx * dx + dy * dy <= r2) out.push_back(c.subscriber);
  }
  return out;
}

}  // namespace tessera::shard
