// Lag compensation (docs/guest-abi.md, "Lag compensation"): a shard that
// turns it on receives each input that carries a view tick together with a
// Rewind: the picture that subscriber's client drew at that tick (every
// entity it drew, at the position drawn), so a shot is judged against what
// the player saw.
//
//   class Range {
//    public:
//     // Both or neither (TESSERA_SHARD checks); needs replicated().
//     std::optional<tessera::LagCompensation> lag_compensation() const {
//       return tessera::LagCompensation(10);  // 10 ticks of history
//     }
//     tessera::Status apply_input_at(std::string_view sid, Input input,
//                                    const tessera::Rewind& rewind);
//   };
//
// apply_input_at takes the same Input type as apply_input; inputs without a
// view tick still go to apply_input. The host clamps the view tick: never
// after the newest tick sent to that subscriber, never before it minus
// history_ticks, and, once the connection's round trip is known, never
// before it minus (round trip + max_view_delay_ms) in ticks. A subscriber
// the host has sent nothing yet gets tick() == now_tick() (the shard's
// current tick) and no entities.
#ifndef TESSERA_REWIND_H_
#define TESSERA_REWIND_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tessera/abi.h"
#include "tessera/detail/binary_io.h"
#include "tessera/result.h"

namespace tessera {

struct Vec3 {
  double x = 0;
  double y = 0;
  double z = 0;
  friend bool operator==(const Vec3&, const Vec3&) = default;
};

// What lag_compensation() returns to turn it on.
struct LagCompensation {
  // history_ticks: 1..256 ticks of what each subscriber was sent are kept.
  // max_view_delay_ms: how far behind its round trip a client may draw;
  // 0 means the default (250).
  explicit LagCompensation(
      std::uint32_t history_ticks,
      std::uint32_t max_view_delay_ms = abi::kDefaultMaxViewDelayMs)
      : history_ticks(history_ticks), max_view_delay_ms(max_view_delay_ms) {}
  std::uint32_t history_ticks;
  std::uint32_t max_view_delay_ms;
};

class Rewind {
 public:
  using Entity = std::pair<std::uint64_t, Vec3>;

  // A rewind built by hand (unit tests): entities sorted by id; for an id
  // given more than once the last position counts.
  static Rewind with_positions(double view_tick, std::uint64_t now_tick,
                               std::vector<Entity> positions) {
    std::stable_sort(
        positions.begin(), positions.end(),
        [](const Entity& a, const Entity& b) { return a.first < b.first; });
    // Keep the last of each run of equal ids.
    std::vector<Entity> unique;
    unique.reserve(positions.size());
    for (Entity& e : positions) {
      if (!unique.empty() && unique.back().first == e.first) {
        unique.back() = std::move(e);
      } else {
        unique.push_back(std::move(e));
      }
    }
    return Rewind(view_tick, now_tick, std::move(unique));
  }

  // Parses the host's layout (`f64 view_tick, u64 now_tick, u32 count`,
  // then count x `u64 id, f64 x, f64 y, f64 z`, ids strictly ascending).
  // The bytes are untrusted: any other shape is an error saying where.
  static Result<Rewind> parse(std::string_view bytes) {
    detail::BinaryReader r(bytes);
    const double view_tick = r.f64("view_tick");
    const std::uint64_t now_tick = r.u64("now_tick");
    const std::uint32_t count = r.u32("entity count");
    if (r.ok() && !std::isfinite(view_tick)) {
      r.fail("a view_tick that is not finite", "view_tick");
    }
    if (!r.can_hold(count, kEntityBytes)) {
      r.fail("count larger than the argument", "entity count");
    }
    std::vector<Entity> entities;
    if (r.ok()) entities.reserve(count);
    for (std::uint32_t i = 0; i < count && r.ok(); ++i) {
      Entity e;
      e.first = r.u64("entity id");
      e.second.x = r.f64("x");
      e.second.y = r.f64("y");
      e.second.z = r.f64("z");
      if (!r.ok()) break;
      if (!entities.empty() && e.first <= entities.back().first) {
        r.fail("entity ids not strictly ascending", "entity id");
        break;
      }
      if (!(std::isfinite(e.second.x) && std::isfinite(e.second.y) &&
            std::isfinite(e.second.z))) {
        r.fail("a position that is not finite", "entity position");
        break;
      }
      entities.push_back(e);
    }
    if (!r.finish()) return Error("malformed rewind: " + r.error());
    return Rewind(view_tick, now_tick, std::move(entities));
  }

  // Where entity `id` was drawn; nullopt when the subscriber did not draw
  // it (interest never sent it, or it was not there at that tick).
  std::optional<Vec3> position_at(std::uint64_t id) const {
    auto it = std::lower_bound(
        entities_.begin(), entities_.end(), id,
        [](const Entity& e, std::uint64_t key) { return e.first < key; });
    if (it == entities_.end() || it->first != id) return std::nullopt;
    return it->second;
  }

  // The drawn entities within `radius` of `center` (3-D distance <=
  // radius), ascending id. Empty for a negative or NaN radius.
  std::vector<Entity> entities_near(Vec3 center, double radius) const {
    std::vector<Entity> near;
    if (!(radius >= 0)) return near;
    const double r2 = radius * radius;
    for (const Entity& e : entities_) {
      const double dx = e.second.x - center.x;
      const double dy = e.second.y - center.y;
      const double dz = e.second.z - center.z;
      if (dx * dx + dy * dy + dz * dz <= r2) near.push_back(e);
    }
    return near;
  }

  // The clamped (fractional) view tick.
  double tick() const { return view_tick_; }
  // The newest tick sent to this subscriber.
  std::uint64_t now_tick() const { return now_tick_; }
  // now_tick() - tick(): how far in the past the picture is, in ticks.
  double ticks_behind() const {
    return static_cast<double>(now_tick_) - view_tick_;
  }
  // Every drawn entity, ascending id.
  std::span<const Entity> entities() const { return entities_; }

 private:
  static constexpr std::size_t kEntityBytes = 8 + 3 * 8;

  Rewind(double view_tick, std::uint64_t now_tick, std::vector<Entity> entities)
      : view_tick_(view_tick),
        now_tick_(now_tick),
        entities_(std::move(entities)) {}

  double view_tick_ = 0;
  std::uint64_t now_tick_ = 0;
  std::vector<Entity> entities_;
};

}  // namespace tessera

#endif  // TESSERA_REWIND_H_
