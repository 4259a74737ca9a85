#include "loadtest/picture.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "replication/draw_rule.h"

namespace tessera::loadtest {
namespace {

// clients/ts/src/game/clock.ts defaults.
constexpr double kWindowMs = 4000;
constexpr size_t kMaxSamples = 256;
constexpr double kSlewRate = 0.05;
constexpr double kSnapMs = 1000;

// docs/protocol.md "Interest and replication": flags bit 0.
constexpr uint8_t kFlagBaseline = 1;

}  // namespace

TickClock::TickClock(double tick_ms) : tick_ms_(tick_ms) {}

double TickClock::LeastDelayedArrival(uint64_t tick) const {
  double least = std::numeric_limits<double>::infinity();
  for (const Sample& s : samples_) {
    least = std::min(least, s.at + (static_cast<double>(tick) -
                                    static_cast<double>(s.tick)) *
                                       tick_ms_);
  }
  return least;
}

void TickClock::Observe(uint64_t tick, double at_ms) {
  if (!samples_.empty() && tick <= samples_.back().tick) {
    if (tick == samples_.back().tick) return;
    samples_.clear();  // a new timeline
    window_full_ = false;
    ref_at_.reset();
  }
  samples_.push_back({tick, at_ms});
  while (samples_.size() > kMaxSamples ||
         (samples_.size() > 2 && at_ms - samples_.front().at > kWindowMs)) {
    samples_.pop_front();
    window_full_ = true;
  }
  const double target = LeastDelayedArrival(tick);
  if (!ref_at_ || !window_full_) {
    // Until a sample leaves the window the minimum only goes down.
    ref_at_ = target;
  } else {
    const double applied =
        *ref_at_ +
        (static_cast<double>(tick) - static_cast<double>(ref_tick_)) * tick_ms_;
    const double diff = target - applied;
    const double step = std::max(0.0, at_ms - last_at_) * kSlewRate;
    ref_at_ = std::abs(diff) > kSnapMs
                  ? target
                  : applied + std::max(-step, std::min(step, diff));
  }
  ref_tick_ = tick;
  last_at_ = at_ms;
}

std::optional<double> TickClock::TickAt(double now_ms) const {
  if (!ref_at_) return std::nullopt;
  return static_cast<double>(ref_tick_) + (now_ms - *ref_at_) / tick_ms_;
}

const Picture::Held* Picture::FindIn(const std::vector<Held>& held,
                                     uint64_t id) {
  auto it =
      std::lower_bound(held.begin(), held.end(), id,
                       [](const Held& h, uint64_t key) { return h.id < key; });
  return it != held.end() && it->id == id ? &*it : nullptr;
}

Status Picture::Push(uint64_t tick, std::string_view payload) {
  const Status applied = decoder_.Apply(payload);
  if (replication::Decoder::Ignored(applied)) return Status::Ok();
  if (!applied.ok()) {
    states_.clear();
    current_.clear();
    has_current_ = false;
    return applied;
  }
  if (!states_.empty() && tick <= states_.back().tick) states_.clear();
  const bool baseline =
      !payload.empty() && (static_cast<uint8_t>(payload[0]) & kFlagBaseline);
  const std::vector<uint64_t>& entered = decoder_.entered();
  std::vector<Held> next;
  next.reserve(decoder_.entities().size());
  for (const replication::DecodedEntity& e : decoder_.entities()) {
    const Held* old = has_current_ ? FindIn(current_, e.id) : nullptr;
    uint64_t gen;
    if (baseline || !has_current_) {
      // Everything is listed; what was held before continues.
      gen = old != nullptr ? old->gen : next_gen_++;
    } else if (std::binary_search(entered.begin(), entered.end(), e.id) ||
               old == nullptr) {
      gen = next_gen_++;  // spawned (perhaps reusing an id that just left)
    } else {
      gen = old->gen;
    }
    next.push_back({e.id, gen, decoder_.Coordinate(e, 0),
                    decoder_.Coordinate(e, 1), decoder_.Coordinate(e, 2)});
  }
  current_ = next;
  has_current_ = true;
  states_.push_back({tick, std::move(next)});
  while (states_.size() > max_states_) states_.pop_front();
  return Status::Ok();
}

std::optional<double> Picture::Render(double render_tick) {
  if (states_.empty()) return std::nullopt;
  // A: the last state at or before the render tick (the oldest when all
  // are after it).
  size_t ai = 0;
  for (size_t i = states_.size(); i-- > 0;) {
    if (static_cast<double>(states_[i].tick) <= render_tick) {
      ai = i;
      break;
    }
  }
  const State& a = states_[ai];
  const double a_tick = static_cast<double>(a.tick);
  const State* b = a_tick <= render_tick && ai + 1 < states_.size()
                       ? &states_[ai + 1]
                       : nullptr;
  const double b_tick = b != nullptr ? static_cast<double>(b->tick) : a_tick;
  const double t =
      replication::DrawFraction(render_tick, a_tick, b != nullptr, b_tick);
  drawn_.clear();
  for (const Held& from : a.entities) {
    const Held* next = b != nullptr ? FindIn(b->entities, from.id) : nullptr;
    const Held& to = next != nullptr && next->gen == from.gen ? *next : from;
    drawn_.push_back({from.id, replication::DrawBetween(from.x, to.x, t),
                      replication::DrawBetween(from.y, to.y, t),
                      replication::DrawBetween(from.z, to.z, t)});
  }
  const double drawn_tick =
      std::min(std::max(b_tick, a_tick), std::max(a_tick, render_tick));
  if (ai > 0) states_.erase(states_.begin(), states_.begin() + ai);
  return drawn_tick;
}

std::optional<DrawnPosition> Picture::Find(uint64_t id) const {
  auto it = std::lower_bound(
      drawn_.begin(), drawn_.end(), id,
      [](const DrawnPosition& d, uint64_t key) { return d.id < key; });
  if (it == drawn_.end() || it->id != id) return std::nullopt;
  return *it;
}

}  // namespace tessera::loadtest
