// One connection's view of a Mirror: what its client holds, and the
// `entities` payload (docs/protocol.md, "Interest and replication") that
// moves the client from what it holds to the mirror's state.
#ifndef TESSERA_REPLICATION_SUBSCRIBER_STREAM_H_
#define TESSERA_REPLICATION_SUBSCRIBER_STREAM_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "replication/mirror.h"
#include "replication/update_plan.h"

namespace tessera::replication {

// The subscriber's interest centre on the ground plane and its radius:
// ranks updates under the byte budget (nearer first).
struct Focus {
  double x = 0;
  double y = 0;
  double radius = 0;
};

inline constexpr uint64_t kNotWaiting = std::numeric_limits<uint64_t>::max();

struct HeldComponent {
  uint8_t id = 0;
  uint64_t version = 0;  // the mirror component's version the client has
};

// What the client holds of one entity.
struct HeldEntity {
  uint64_t id = 0;
  uint64_t incarnation = 0;
  int64_t q[3] = {0, 0, 0};
  // The mirror entity's components_version the client is up to date with.
  uint64_t components_version = 0;
  // The tick since which a change has been held back by the budget.
  uint64_t waiting_since = kNotWaiting;
  std::vector<HeldComponent> components;  // ascending id
};

struct EncodeStats {
  bool baseline = false;
  bool in_step = false;  // only the mirror's last changes were looked at
  size_t despawns = 0;
  size_t spawns = 0;
  size_t updates = 0;   // sent
  size_t deferred = 0;  // held back by the budget
  size_t bytes = 0;     // of the payload
};

class SubscriberStream {
 public:
  // Replaces `out` with the payload for `tick`: despawns for held entities
  // no longer visible, gone from the mirror or reincarnated; spawns (full
  // state) for visible entities not held; updates of the axes and
  // components that differ from what the client holds. `visible` is
  // ascending (ids the mirror lacks are skipped); pass mirror.ids() when
  // interest is off. Under the config's byte budget, spawns and despawns
  // always go and updates go by priority (see UpdatePlanner); one held
  // back is sent later as one difference to the newest state. Allocates
  // nothing per entity in steady state.
  void Encode(const Mirror& mirror, std::span<const uint64_t> visible,
              std::optional<Focus> focus, uint64_t tick, std::string& out);

  // Forgets what the client holds: the next payload is a BASELINE.
  void Reset();

  // What the client holds after the last Encode, ascending ids.
  std::span<const HeldEntity> held() const { return held_; }
  const EncodeStats& last() const { return last_; }
  // Of the last Encode (emptied by Reset): the ids it despawned and the
  // entities it spawned (ascending ids; a reused id is in both; the
  // mirror's entities, valid until the mirror changes), and the indices in
  // held() of the entities whose update the byte budget held back
  // (ascending). Every other held entity is at the mirror's state.
  std::span<const uint64_t> despawned() const { return despawns_; }
  std::span<const MirrorEntity* const> spawned() const { return spawns_; }
  std::span<const uint32_t> deferred() const { return deferred_; }

 private:
  // Fills next_ (what the client will hold), despawns_, spawns_ and
  // candidates_ by merging held_ with `visible`: O(visible).
  void MergeVisible(const Mirror& mirror, std::span<const uint64_t> visible);
  // Empties despawns_, spawns_, candidates_, deferred_ and comp_scratch_.
  void ClearScratch();
  // The same in O(changes) when the client sees what it holds and had
  // everything at the mirror's previous generation: only the ids the last
  // Apply changed are considered. False (nothing changed) otherwise.
  bool InStep(const Mirror& mirror, std::span<const uint64_t> visible);
  void Consider(const MirrorEntity& e, uint32_t held_index);
  uint32_t DiffComponents(const MirrorEntity& e, const HeldEntity& h);
  void WriteHeader(const Config& config, bool baseline, std::string& out);
  void WriteUpdates(const UpdatePlan& plan, uint64_t tick, std::string& out);
  static void Hold(const MirrorEntity& e, HeldEntity& h);
  static void HoldComponents(const MirrorEntity& e, HeldEntity& h);

  bool started_ = false;
  uint64_t generation_ = 0;  // the mirror's at the last Encode
  std::vector<HeldEntity> held_;
  EncodeStats last_;
  // Scratch, reused between calls.
  std::vector<HeldEntity> next_;
  std::vector<uint64_t> despawns_;
  std::vector<const MirrorEntity*> spawns_;
  std::vector<UpdateCandidate> candidates_;
  std::vector<uint8_t> selected_;
  std::vector<uint32_t> deferred_;  // see deferred()
  std::string comp_scratch_;
  std::string bits_;
  UpdatePlanner planner_;
};

}  // namespace tessera::replication

#endif  // TESSERA_REPLICATION_SUBSCRIBER_STREAM_H_
