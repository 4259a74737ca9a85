// Replication: the shard keeps its entities in a tessera::Replicated store
// and the host sends each subscriber the changes instead of whole snapshots
// (docs/guest-abi.md and docs/protocol.md, "Interest and replication").
//
//   class Zone {
//    public:
//     // Replication on: the store the host reads after every tick. nullptr
//     // turns replication off for this instance.
//     tessera::Replicated* replicated() { return &store_; }
//     // Optional; the defaults below otherwise.
//     tessera::ReplicationConfig replication_config() const;
//    private:
//     tessera::Replicated store_;   // a plain member: moves with the shard
//   };
//
// An entity is an id below 2^53, a position (x, y, z) in world units and up
// to 255 components: opaque byte strings keyed by a u8 id (clients decode
// them; set_component_value encodes a value in the shard's codec). The store
// records what changed since the host last read it, so a tick that touches
// nothing sends nothing; setting a position or component to the value it
// already has records no change.
#ifndef TESSERA_REPLICATED_H_
#define TESSERA_REPLICATED_H_

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tessera/abi.h"
#include "tessera/codec.h"
#include "tessera/detail/binary_io.h"
#include "tessera/detail/runtime.h"
#include "tessera/interest.h"
#include "tessera/log.h"

namespace tessera {

struct ReplicationConfig {
  // World units per quantisation step (> 0): clients see every coordinate
  // within precision / 2. |coordinate / precision| must stay below 2^52.
  double precision = 0.01;
  // Byte budget of each subscriber's entity changes per tick; 0: none.
  // Spawns and despawns always go; position and component updates wait by
  // priority (nearest and longest-waiting first).
  std::uint32_t max_bytes_per_tick = 0;
  // The ground plane is (x, z) with y up; otherwise (x, y) with z up.
  bool y_up = false;
};

namespace detail {
struct ReplicatedAccess;
}  // namespace detail

class Replicated {
 public:
  // Sets an entity's position, creating the entity (with no components) if
  // the id is new. Panics when id >= 2^53 or a coordinate is not finite.
  void set_pos(std::uint64_t id, double x, double y, double z) {
    check_id(id, "set_pos");
    if (!std::isfinite(x) || !std::isfinite(y) || !std::isfinite(z)) {
      panic("tessera::Replicated::set_pos: entity " + std::to_string(id) +
            ": coordinates must be finite");
    }
    Entity& e = find_or_create(id);
    if (e.pos[0] == x && e.pos[1] == y && e.pos[2] == z) return;
    e.pos = {x, y, z};
    touch(id, e);
  }
  void set_pos(std::uint64_t id, std::array<double, 3> p) {
    set_pos(id, p[0], p[1], p[2]);
  }

  // Sets a component's bytes, creating the entity (at (0, 0, 0)) if the id
  // is new. Equal bytes record no change. Panics when id >= 2^53 or the
  // entity would hold more than 255 components.
  void set_component(std::uint64_t id, std::uint8_t component,
                     std::string_view bytes) {
    check_id(id, "set_component");
    Entity& e = find_or_create(id);
    auto it = find_component(e, component);
    if (it != e.components.end() && it->id == component) {
      if (it->present && it->bytes == bytes) return;
      if (!it->present) count_component(id, e);
      it->present = true;
      it->bytes.assign(bytes.data(), bytes.size());
      it->dirty = true;
    } else {
      count_component(id, e);
      e.components.insert(
          it, Component{component, /*present=*/true,
                        /*held=*/false, /*dirty=*/true, std::string(bytes)});
    }
    touch(id, e);
  }

  // set_component with `value` encoded in the shard's codec (any type
  // tessera::encode takes; in native builds before init, MessagePack).
  template <class T>
  void set_component_value(std::uint64_t id, std::uint8_t component,
                           const T& value) {
    std::string bytes;
    encode(detail::runtime().codec, value, bytes);
    set_component(id, component, bytes);
  }

  // Removes a component; nothing happens if the entity or component is not
  // there.
  void remove_component(std::uint64_t id, std::uint8_t component) {
    auto entity = entities_.find(id);
    if (entity == entities_.end()) return;
    Entity& e = entity->second;
    auto it = find_component(e, component);
    if (it == e.components.end() || it->id != component || !it->present) {
      return;
    }
    --e.present_components;
    if (it->held) {  // the host has it: keep a tombstone until the next read
      it->present = false;
      it->dirty = true;
      it->bytes.clear();
      touch(id, e);
    } else {
      e.components.erase(it);
    }
  }

  // Removes an entity; nothing happens if it is not there. Setting the same
  // id again before the host's next read reuses the id: clients see the old
  // entity leave and a new one enter.
  void remove(std::uint64_t id) {
    auto it = entities_.find(id);
    if (it == entities_.end()) return;
    const Entity& e = it->second;
    auto [removed, inserted] = removed_.try_emplace(id, Removed{});
    // The host holds the id if it held this incarnation or an earlier one
    // removed since its last read.
    removed->second.held = e.held || (!inserted && removed->second.held);
    removed->second.generation = e.generation;
    entities_.erase(it);
  }

  bool contains(std::uint64_t id) const { return entities_.count(id) != 0; }
  std::size_t size() const { return entities_.size(); }
  bool empty() const { return entities_.empty(); }

  // The entity's position, or nullptr if there is no such entity. Valid
  // until the store changes.
  const std::array<double, 3>* pos(std::uint64_t id) const {
    auto it = entities_.find(id);
    return it == entities_.end() ? nullptr : &it->second.pos;
  }
  // A component's bytes, or nullptr if absent. Valid until the store
  // changes.
  const std::string* component(std::uint64_t id, std::uint8_t component) const {
    auto entity = entities_.find(id);
    if (entity == entities_.end()) return nullptr;
    for (const Component& c : entity->second.components) {
      if (c.id == component && c.present) return &c.bytes;
    }
    return nullptr;
  }

  // Calls f(id, const std::array<double, 3>& pos) for every entity, in
  // ascending id order.
  template <class F>
  void for_each(F&& f) const {
    for (const auto& [id, e] : entities_) f(id, e.pos);
  }

 private:
  friend struct detail::ReplicatedAccess;

  struct Component {
    std::uint8_t id = 0;
    bool present = false;  // false: a tombstone of a component the host has
    bool held = false;     // the host has this component
    bool dirty = false;    // set or removed since the host's last read
    std::string bytes;
  };
  struct Entity {
    std::array<double, 3> pos{};
    std::array<double, 3> held_pos{};   // what the host has (when held)
    std::vector<Component> components;  // ascending ids
    std::uint32_t present_components = 0;
    std::uint32_t generation = 0;  // bumped when the id is reused
    bool held = false;             // the host has this incarnation
    bool listed = false;           // in dirty_
  };
  struct Removed {
    std::uint32_t generation = 0;  // of the last incarnation removed
    bool held = false;             // the host still has an incarnation
  };

  static void check_id(std::uint64_t id, const char* call) {
    if (id >= abi::kEntityIdLimit) {
      panic(std::string("tessera::Replicated::") + call + ": entity id " +
            std::to_string(id) +
            " is too large (ids must be below 2^53 = 9007199254740992)");
    }
  }
  static void count_component(std::uint64_t id, Entity& e) {
    if (e.present_components == 255) {
      panic("tessera::Replicated::set_component: entity " + std::to_string(id) +
            " already holds 255 components, the most "
            "one entity can have");
    }
    ++e.present_components;
  }
  static std::vector<Component>::iterator find_component(Entity& e,
                                                         std::uint8_t id) {
    return std::lower_bound(
        e.components.begin(), e.components.end(), id,
        [](const Component& c, std::uint8_t key) { return c.id < key; });
  }

  Entity& find_or_create(std::uint64_t id) {
    auto [it, inserted] = entities_.try_emplace(id);
    if (inserted) {
      auto removed = removed_.find(id);
      if (removed != removed_.end()) {
        it->second.generation = removed->second.generation + 1;
      }
      touch(id, it->second);
    }
    return it->second;
  }
  void touch(std::uint64_t id, Entity& e) {
    if (e.listed) return;
    e.listed = true;
    dirty_.push_back(id);
  }

  std::map<std::uint64_t, Entity> entities_;
  // Ids touched since the host's last read (each live entity at most once;
  // an id removed and set again may repeat).
  std::vector<std::uint64_t> dirty_;
  std::map<std::uint64_t, Removed> removed_;  // since the host's last read
  bool read_once_ = false;  // false: the next read is a FULL listing
};

namespace detail {

// What the exports need from a store (tessera/interest_export.h).
struct ReplicatedAccess {
  // Appends every entity's ground-plane position and generation.
  static void entity_positions(const Replicated& store, bool y_up,
                               std::vector<EntityPos>& out) {
    out.reserve(out.size() + store.entities_.size());
    for (const auto& [id, e] : store.entities_) {
      out.push_back(EntityPos{id, static_cast<float>(e.pos[0]),
                              static_cast<float>(y_up ? e.pos[2] : e.pos[1]),
                              e.generation});
    }
  }

  // Writes the tessera_replicated() output: the changes since the previous
  // call (a FULL listing the first time), then forgets them. Panics when a
  // coordinate is too large for `precision`.
  static void take_changes(Replicated& store, double precision,
                           std::string& out) {
    BinaryWriter w(out);
    const bool full = !store.read_once_;
    w.u8(full ? abi::kReplicatedFlagFull : 0);
    // Removed: ids the host holds, ascending (never with FULL).
    const std::size_t removed_at = w.size();
    w.u32(0);
    std::uint32_t removed = 0;
    if (!full) {
      for (const auto& [id, r] : store.removed_) {
        if (!r.held) continue;
        w.u64(id);
        ++removed;
      }
    }
    w.patch_u32(removed_at, removed);

    const std::size_t changed_at = w.size();
    w.u32(0);
    std::uint32_t changed = 0;
    if (full) {
      for (auto& [id, e] : store.entities_) {
        changed += write_entity(w, id, e, /*is_new=*/true, precision);
      }
    } else {
      std::vector<std::uint64_t>& ids = store.dirty_;
      std::sort(ids.begin(), ids.end());
      ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
      for (std::uint64_t id : ids) {
        auto it = store.entities_.find(id);
        if (it == store.entities_.end()) continue;  // removed again
        changed += write_entity(w, id, it->second, !it->second.held, precision);
      }
    }
    w.patch_u32(changed_at, changed);

    // The host now has the current state.
    if (full) {
      for (auto& [id, e] : store.entities_) settle(e);
    } else {
      for (std::uint64_t id : store.dirty_) {
        auto it = store.entities_.find(id);
        if (it != store.entities_.end()) settle(it->second);
      }
    }
    store.dirty_.clear();
    store.removed_.clear();
    store.read_once_ = true;
  }

 private:
  using Entity = Replicated::Entity;
  using Component = Replicated::Component;

  // Writes one entity's entry if there is anything to say; returns 1 if it
  // wrote one.
  static std::uint32_t write_entity(BinaryWriter& w, std::uint64_t id,
                                    const Entity& e, bool is_new,
                                    double precision) {
    // A new entity starts at (0, 0, 0) on the host.
    const std::array<double, 3> base =
        is_new ? std::array<double, 3>{0, 0, 0} : e.held_pos;
    const bool pos =
        e.pos[0] != base[0] || e.pos[1] != base[1] || e.pos[2] != base[2];
    std::uint32_t components = 0;
    for (const Component& c : e.components) {
      if (is_new ? c.present : (c.dirty && (c.present || c.held))) {
        ++components;
      }
    }
    if (!is_new && !pos && components == 0) return 0;
    if (components > 255) {
      panic("tessera::Replicated: entity " + std::to_string(id) +
            " changed more than 255 components at once");
    }
    w.u64(id);
    w.u8(static_cast<std::uint8_t>((is_new ? abi::kReplicatedWhatNew : 0) |
                                   (pos ? abi::kReplicatedWhatPos : 0)));
    if (pos) {
      for (double v : e.pos) {
        if (!(std::fabs(v / precision) < 4503599627370496.0)) {  // 2^52
          panic("tessera::Replicated: entity " + std::to_string(id) +
                ": coordinate " + std::to_string(v) +
                " is too large for precision " + std::to_string(precision) +
                " (|coordinate / precision| must stay below 2^52)");
        }
        w.f64(v);
      }
    }
    w.u8(static_cast<std::uint8_t>(components));
    for (const Component& c : e.components) {
      if (is_new ? !c.present : !(c.dirty && (c.present || c.held))) continue;
      w.u8(c.id);
      if (c.present) {
        w.u32(static_cast<std::uint32_t>(c.bytes.size()) + 1);
        w.bytes(c.bytes);
      } else {
        w.u32(0);  // removed
      }
    }
    return 1;
  }

  static void settle(Entity& e) {
    e.held = true;
    e.listed = false;
    e.held_pos = e.pos;
    std::erase_if(e.components, [](const Component& c) { return !c.present; });
    for (Component& c : e.components) {
      c.held = true;
      c.dirty = false;
    }
  }
};

}  // namespace detail
}  // namespace tessera

#endif  // TESSERA_REPLICATED_H_
