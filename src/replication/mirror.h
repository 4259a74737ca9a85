// The host's copy of a guest's replicated entity store, kept up to date
// from the guest's tessera_replicated() change lists (docs/guest-abi.md).
// Positions are kept as the guest gave them and quantised with the config's
// precision; components carry a mirror-wide version bumped on each change,
// so a SubscriberStream can tell what a client lacks.
#ifndef TESSERA_REPLICATION_MIRROR_H_
#define TESSERA_REPLICATION_MIRROR_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "replication/change_list.h"
#include "replication/config.h"

namespace tessera::replication {

struct MirrorComponent {
  uint8_t id = 0;
  uint64_t version = 0;  // the mirror's version() when it was last set
  std::string bytes;
};

struct MirrorEntity {
  uint64_t id = 0;
  // Unique per NEW: an id removed and reused gets a new incarnation.
  uint64_t incarnation = 0;
  double position[3] = {0, 0, 0};           // as the guest gave it
  int64_t q[3] = {0, 0, 0};                 // llround(position / precision)
  std::vector<MirrorComponent> components;  // ascending id
  // The mirror's version() at the last component set or removal (or NEW).
  uint64_t components_version = 0;
  // Tick of the Apply that last changed it (NEW, q or a component).
  uint64_t changed_tick = 0;
};

// Index in `ids` (ascending) of the first id >= `id`, searching from
// `from`: a galloping search, cheap when the ids asked for ascend.
size_t LowerBoundFrom(std::span<const uint64_t> ids, uint64_t id, size_t from);

struct GroundPoint {
  double x = 0;
  double y = 0;
};

class Mirror {
 public:
  explicit Mirror(Config config) : config_(config) {}

  const Config& config() const { return config_; }

  // Applies one change list, recording `tick` as the entities' change
  // tick. Untrusted bytes: on any error nothing is changed and the message
  // says what is wrong (the caller prefixes "abi: "). Besides the layout
  // checks of ParseChangeList, refuses: an id listed twice in the removed
  // or in the changed list, the removal of an id the store does not hold, a
  // change without NEW for an id it does not hold (or that the same list
  // removes), NEW for an id it holds that the list does not remove. In a
  // FULL listing the store is emptied first, removed ids are ignored and
  // every changed entity counts as NEW.
  Status Apply(std::string_view change_list, uint64_t tick);
  // The same, with tick() + 1.
  Status Apply(std::string_view change_list) {
    return Apply(change_list, tick_ + 1);
  }

  // The tick of the last successful Apply (0 before any).
  uint64_t tick() const { return tick_; }
  // Bumped by every successful Apply and by Clear: a stream that encoded at
  // generation g and sees g + 1 knows changed_ids() is all that changed.
  uint64_t generation() const { return generation_; }
  // The ids the last Apply changed (NEW, quantised position or a
  // component), ascending; removed ids are not listed.
  std::span<const uint64_t> changed_ids() const { return changed_ids_; }
  // The mirror-wide change counter.
  uint64_t version() const { return version_; }

  size_t size() const { return ids_.size(); }
  // Every entity id, ascending.
  std::span<const uint64_t> ids() const { return ids_; }
  // The entity of ids()[i].
  const MirrorEntity& entity_at(size_t i) const {
    return slots_[sorted_slots_[i]];
  }
  // nullptr when the store does not hold `id`.
  const MirrorEntity* Find(uint64_t id) const;
  // Index in ids() of the first id >= `id`, searching from `from` (a
  // galloping search: cheap when the ids asked for are ascending).
  size_t LowerBound(uint64_t id, size_t from) const {
    return LowerBoundFrom(ids_, id, from);
  }

  // The ground-plane position (x, y; or x, z when y is up) for interest.
  GroundPoint Ground(const MirrorEntity& e) const {
    return {e.position[0], config_.y_up ? e.position[2] : e.position[1]};
  }

  void Clear();

 private:
  Status Check(const ChangeList& list);
  void ApplyChecked(const ChangeList& list, uint64_t tick);
  void ApplyComponents(const ChangeList& list, const EntityChange& c,
                       MirrorEntity& e, bool* changed);
  void RebuildOrder(bool full);

  Config config_;
  uint64_t tick_ = 0;
  uint64_t generation_ = 0;
  uint64_t version_ = 0;
  uint64_t incarnations_ = 0;
  std::vector<MirrorEntity> slots_;
  std::vector<uint32_t> free_slots_;
  std::unordered_map<uint64_t, uint32_t> index_;
  std::vector<uint64_t> ids_;           // ascending
  std::vector<uint32_t> sorted_slots_;  // parallel to ids_
  // Scratch, reused between calls.
  ChangeList list_;
  std::vector<uint64_t> removed_sorted_;
  std::vector<std::pair<uint64_t, bool>> changed_sorted_;  // id, is_new
  std::vector<uint64_t> added_;
  std::vector<uint64_t> changed_ids_;
  std::vector<uint64_t> merged_ids_;
  std::vector<uint32_t> merged_slots_;
};

}  // namespace tessera::replication

#endif  // TESSERA_REPLICATION_MIRROR_H_
