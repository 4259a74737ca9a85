// Interest management: what a shard tells the host so that each subscriber
// sees only the entities near it (docs/guest-abi.md, "Interest and
// replication"). All hooks are optional methods of the shard class;
// TESSERA_SHARD exports the matching ABI functions only for those it has.
//
//   class Zone {
//    public:
//     // Interest on: the grid's cell size and margin (world units). nullopt
//     // turns interest management off for this instance.
//     std::optional<tessera::InterestConfig> interest() const;
//     // Every entity's position on the ground plane, each tick. May be left
//     // out when the shard has replicated(): positions then come from the
//     // store (x, y; or x, z when replication_config().y_up).
//     void entities(std::vector<tessera::EntityPos>& out) const;
//     // Where a subscriber looks from; nullopt: it sees no entities.
//     std::optional<tessera::InterestArea> interest_area(
//         std::string_view subscriber_id) const;
//     // Optional: the visibility filter (stealth, fog of war), asked for
//     // each entity the grid found in range of the subscriber.
//     bool can_see(std::string_view subscriber_id, std::uint64_t id) const;
//     // Optional, without replication: the subscriber's own snapshot, built
//     // from what it sees (encoded in the shard's codec).
//     Snapshot snapshot_visible(std::string_view subscriber_id,
//                               const tessera::View& view) const;
//   };
//
// interest() needs interest_area() and either entities() or replicated();
// the other hooks need interest(). Entity ids must be below 2^53.
#ifndef TESSERA_INTEREST_H_
#define TESSERA_INTEREST_H_

#include <concepts>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace tessera {

struct InterestConfig {
  float cell_size = 0;  // > 0: the grid's cell, in world units
  float margin = 0;     // >= 0: hysteresis; an entity leaves a view only
                        // once it is `margin` beyond the radius
  // Subscribers with equal visible sets share one snapshot_visible() call;
  // valid only when that snapshot depends on the visible set alone.
  bool shared_snapshots = false;
};

// One entity on the ground plane. `generation` changes when the id is removed
// and reused, so subscribers that saw it get it in both `left` and
// `entered`.
struct EntityPos {
  std::uint64_t id = 0;
  float x = 0;
  float y = 0;
  std::uint32_t generation = 0;
};

// A subscriber's interest area: a circle on the ground plane.
struct InterestArea {
  float x = 0;
  float y = 0;
  float radius = 0;  // >= 0
};

// What one subscriber sees this tick; each list in ascending id order. The
// spans are valid only during the call.
struct View {
  std::span<const std::uint64_t> visible;  // everything in view now
  std::span<const std::uint64_t> entered;  // in view now, not last tick
  std::span<const std::uint64_t> left;     // in view last tick, not now
};

class Replicated;
struct ReplicationConfig;

template <class S>
concept HasInterest = requires(S& s) {
  { s.interest() } -> std::convertible_to<std::optional<InterestConfig>>;
};

template <class S>
concept HasEntities = requires(S& s, std::vector<EntityPos>& out) {
  s.entities(out);
};

template <class S>
concept HasInterestArea = requires(S& s, std::string_view sid) {
  { s.interest_area(sid) } -> std::convertible_to<std::optional<InterestArea>>;
};

template <class S>
concept HasCanSee = requires(S& s, std::string_view sid, std::uint64_t id) {
  { s.can_see(sid, id) } -> std::convertible_to<bool>;
};

template <class S>
concept HasSnapshotVisible = requires(S& s, std::string_view sid,
                                      const View& view) {
  s.snapshot_visible(sid, view);
};

template <class S>
concept HasReplicated = requires(S& s) {
  { s.replicated() } -> std::convertible_to<Replicated*>;
};

template <class S>
concept HasReplicationConfig = requires(S& s) {
  { s.replication_config() } -> std::convertible_to<ReplicationConfig>;
};

}  // namespace tessera

#endif  // TESSERA_INTEREST_H_
