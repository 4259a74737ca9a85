#include "anchor_scenario.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "replication/change_list.h"

namespace tessera::bench {

AnchorScenario::AnchorScenario(const AnchorParams& params)
    : params_(params), s_(params.seed) {
  for (int i = 0; i < params.players; ++i) {
    x_.push_back(Rand() * params.size);
    y_.push_back(Rand() * params.size);
    heading_.push_back(Rand() * 2 * std::numbers::pi);
  }
}

double AnchorScenario::Rand() {
  s_ ^= s_ << 13;
  s_ ^= s_ >> 7;
  s_ ^= s_ << 17;
  return static_cast<double>(s_ >> 40) / 16777216.0;
}

void AnchorScenario::Step() {
  const double step = params_.speed / params_.tick_rate;
  for (size_t i = 0; i < x_.size(); ++i) {
    heading_[i] += (Rand() - 0.5) * params_.turn;
    x_[i] = std::clamp(x_[i] + std::cos(heading_[i]) * step, 0.0, params_.size);
    y_[i] = std::clamp(y_[i] + std::sin(heading_[i]) * step, 0.0, params_.size);
  }
}

std::string AnchorScenario::Changes() {
  replication::ChangeListWriter w(first_);
  for (int i = 0; i < players(); ++i) {
    w.Change(Id(i), first_);
    w.Position(x_[i], y_[i], 0);
  }
  first_ = false;
  return w.Finish();
}

}  // namespace tessera::bench
