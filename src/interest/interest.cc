#include "interest/interest.h"

#include <cmath>
#include <string>
#include <utility>

#include "interest/engine.h"

namespace tessera::interest {

Status ValidateConfig(const Config& config) {
  if (!std::isfinite(config.cell_size) || !(config.cell_size > 0)) {
    return InvalidArgument("interest: cell_size must be finite and > 0 (got " +
                           std::to_string(config.cell_size) + ")");
  }
  if (!std::isfinite(config.margin) || !(config.margin >= 0)) {
    return InvalidArgument("interest: margin must be finite and >= 0 (got " +
                           std::to_string(config.margin) + ")");
  }
  return Status::Ok();
}

InterestManager::InterestManager(Config config)
    : engine_(std::make_unique<internal::Engine>(config)) {}
InterestManager::InterestManager(InterestManager&&) noexcept = default;
InterestManager& InterestManager::operator=(InterestManager&&) noexcept =
    default;
InterestManager::~InterestManager() = default;

Result<InterestManager> InterestManager::Create(Config config) {
  TESSERA_RETURN_IF_ERROR(ValidateConfig(config));
  return InterestManager(config);
}

Status InterestManager::Update(std::span<const EntityPos> entities,
                               std::span<const Subscriber> subscribers,
                               const Filter* filter, std::vector<View>& views) {
  return engine_->Update(entities, subscribers, filter, views);
}

void InterestManager::Reset() { engine_->Reset(); }

const Config& InterestManager::config() const { return engine_->config(); }

size_t InterestManager::subscriber_count() const {
  return engine_->subscriber_count();
}

}  // namespace tessera::interest
