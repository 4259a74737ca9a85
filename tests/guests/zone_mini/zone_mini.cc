// Test guest "zone_mini": interest management and replication, small enough
// to reason about in host tests. Deterministic; no clock.
//
//   params   {"mode": str, "budget": int, "shared": bool, "radius": number,
//             "movers": int}
//     mode "interest" (default)  interest on, replication off: subscribers
//                                get snapshot_visible() snapshots
//          "replicate"           interest and replication on
//          "replicate_all"       replication on, interest off
//          "none"                neither (one broadcast snapshot)
//          anything else: init fails with `unknown mode "..."`
//     budget   replication max_bytes_per_tick (default 0: no budget)
//     shared   interest shared_snapshots (default false)
//     radius   every player's interest radius (default 200)
//     movers   entities 10, 11, ... starting at (0, 20 * (i + 1)), each
//              moving +1 in x per tick (default 0)
//   interest cell 100, margin 10. Replication precision 0.01, z = 0.
//   world at init (id kind (x, y)): 1 rock (0, 0), 2 tree (100, 0),
//     3 stealth (50, 50), 4 far (1000, 1000), then the movers (kind "mover")
//   players  a subscriber's join or first move_to creates its player: id
//            1000, 1001, ... in order (skipping ids in use), kind "player".
//            Its interest area is centred on that entity (none without one:
//            it then sees nothing).
//   can_see  entities of kind "stealth" only for subscriber ids starting
//            with "scout"; everything else for everyone.
//   inputs (rejections in quotes; N is the id)
//     {"join": {}}                                at (0, 0) unless it has one
//     {"move_to": {"x": num, "y": num}}           "outside the zone" beyond
//                                                 |10000|; re-creates a
//                                                 removed player
//     {"spawn": {"id": int, "x": num, "y": num, "kind": str}}
//                                                 "entity N exists", "id N out
//                                                 of range" (0 or >= 2^53)
//     {"remove": {"id": int}}                     "no entity N"
//     {"reuse": {"id": int, "x": num, "y": num}}  removes N and spawns it
//                                                 again (same kind, no extra
//                                                 components, generation + 1)
//                                                 in the same tick; "no
//                                                 entity N"
//     {"set_component": {"id": int, "component": int, "value": str}}
//                                                 value's bytes as they are;
//                                                 "no entity N", component
//                                                 1..255 ("component 1 is
//                                                 the kind" for 1: read-only)
//     {"remove_component": {"id": int, "component": int}}   "no entity N"
//   snapshot           {"entities": int, "players": int} (changes only when
//                      those counts do)
//   snapshot_visible   {"visible": [ids], "entered": [ids], "left": [ids]}
//                      (entered and left always [] with shared snapshots)
//   entities()         every entity, with its generation
//   replicated store   position (x, y, 0); component 1 = the kind's bytes
//                      ("rock", "player", ...); others as set by inputs
//   save/restore       the whole world (MessagePack); a restored instance's
//                      first tessera_replicated() is FULL.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "tessera/shard_sdk.h"

struct Params {
  std::string mode = "interest";
  std::uint32_t budget = 0;
  bool shared = false;
  float radius = 200;
  std::uint32_t movers = 0;
};
TESSERA_FIELDS(Params, mode, budget, shared, radius, movers);

struct Join {};
TESSERA_FIELDS(Join);
struct MoveTo {
  double x = 0;
  double y = 0;
};
TESSERA_FIELDS(MoveTo, x, y);
struct Spawn {
  std::uint64_t id = 0;
  double x = 0;
  double y = 0;
  std::string kind = "thing";
};
TESSERA_FIELDS(Spawn, id, x, y, kind);
struct Remove {
  std::uint64_t id = 0;
};
TESSERA_FIELDS(Remove, id);
struct Reuse {
  std::uint64_t id = 0;
  double x = 0;
  double y = 0;
};
TESSERA_FIELDS(Reuse, id, x, y);
struct SetComponent {
  std::uint64_t id = 0;
  std::uint32_t component = 0;
  std::string value;
};
TESSERA_FIELDS(SetComponent, id, component, value);
struct RemoveComponent {
  std::uint64_t id = 0;
  std::uint32_t component = 0;
};
TESSERA_FIELDS(RemoveComponent, id, component);

using Input = std::variant<Join, MoveTo, Spawn, Remove, Reuse, SetComponent,
                           RemoveComponent>;

struct Component {
  std::uint32_t id = 0;
  std::string value;
};
TESSERA_FIELDS(Component, id, value);

struct Entity {
  std::uint64_t id = 0;
  std::string kind;
  double x = 0;
  double y = 0;
  std::uint32_t generation = 0;
  std::vector<Component> components;  // besides the kind
};
TESSERA_FIELDS(Entity, id, kind, x, y, generation, components);

struct Player {
  std::string sid;
  std::uint64_t id = 0;
};
TESSERA_FIELDS(Player, sid, id);

struct World {
  std::vector<Entity> entities;  // ascending ids
  std::vector<Player> players;
  std::uint64_t next_player_id = 1000;
};
TESSERA_FIELDS(World, entities, players, next_player_id);

struct Snapshot {
  std::uint64_t entities = 0;
  std::uint64_t players = 0;
};
TESSERA_FIELDS(Snapshot, entities, players);

struct VisibleSnapshot {
  std::vector<std::uint64_t> visible;
  std::vector<std::uint64_t> entered;
  std::vector<std::uint64_t> left;
};
TESSERA_FIELDS(VisibleSnapshot, visible, entered, left);

constexpr std::uint64_t kIdLimit = std::uint64_t{1} << 53;
constexpr double kZoneLimit = 10000;

class ZoneMini {
 public:
  static tessera::Result<ZoneMini> init(std::string_view, Params params) {
    if (params.mode != "interest" && params.mode != "replicate" &&
        params.mode != "replicate_all" && params.mode != "none") {
      return tessera::Error("unknown mode \"" + params.mode + "\"");
    }
    ZoneMini zone(std::move(params));
    zone.spawn(1, "rock", 0, 0);
    zone.spawn(2, "tree", 100, 0);
    zone.spawn(3, "stealth", 50, 50);
    zone.spawn(4, "far", 1000, 1000);
    for (std::uint32_t i = 0; i < zone.params_.movers; ++i) {
      zone.spawn(10 + i, "mover", 0, 20.0 * (i + 1));
    }
    return zone;
  }

  tessera::Status apply_input(std::string_view sid, Input input) {
    return std::visit([&](auto& in) { return apply(sid, in); }, input);
  }

  void tick(double) {
    for (Entity& e : world_.entities) {
      if (e.kind == "mover") move(e, e.x + 1, e.y);
    }
  }

  Snapshot snapshot() const {
    return Snapshot{world_.entities.size(), world_.players.size()};
  }

  World save() const { return world_; }
  static tessera::Result<ZoneMini> restore(std::string_view id, Params params,
                                           World world) {
    tessera::Result<ZoneMini> zone = init(id, std::move(params));
    if (!zone.ok()) return zone;
    zone->world_ = World{};
    zone->store_ = tessera::Replicated();
    for (Entity& e : world.entities) zone->add(std::move(e));
    zone->world_.players = std::move(world.players);
    zone->world_.next_player_id = world.next_player_id;
    return zone;
  }

  // Interest.
  std::optional<tessera::InterestConfig> interest() const {
    if (params_.mode != "interest" && params_.mode != "replicate") {
      return std::nullopt;
    }
    return tessera::InterestConfig{100, 10, params_.shared};
  }
  void entities(std::vector<tessera::EntityPos>& out) const {
    for (const Entity& e : world_.entities) {
      out.push_back(tessera::EntityPos{e.id, static_cast<float>(e.x),
                                       static_cast<float>(e.y), e.generation});
    }
  }
  std::optional<tessera::InterestArea> interest_area(
      std::string_view sid) const {
    const Entity* e = player_entity(sid);
    if (e == nullptr) return std::nullopt;
    return tessera::InterestArea{static_cast<float>(e->x),
                                 static_cast<float>(e->y), params_.radius};
  }
  bool can_see(std::string_view sid, std::uint64_t id) const {
    const Entity* e = find(id);
    return e == nullptr || e->kind != "stealth" || sid.starts_with("scout");
  }
  VisibleSnapshot snapshot_visible(std::string_view,
                                   const tessera::View& view) const {
    VisibleSnapshot s;
    s.visible.assign(view.visible.begin(), view.visible.end());
    if (!params_.shared) {
      s.entered.assign(view.entered.begin(), view.entered.end());
      s.left.assign(view.left.begin(), view.left.end());
    }
    return s;
  }

  // Replication.
  tessera::Replicated* replicated() {
    return replicating() ? &store_ : nullptr;
  }
  tessera::ReplicationConfig replication_config() const {
    return tessera::ReplicationConfig{0.01, params_.budget, false};
  }

 private:
  explicit ZoneMini(Params params) : params_(std::move(params)) {}

  bool replicating() const {
    return params_.mode == "replicate" || params_.mode == "replicate_all";
  }

  tessera::Status apply(std::string_view sid, const Join&) {
    if (player_entity(sid) == nullptr) place_player(sid, 0, 0);
    return {};
  }
  tessera::Status apply(std::string_view sid, const MoveTo& in) {
    if (!in_zone(in.x, in.y)) return tessera::Error("outside the zone");
    place_player(sid, in.x, in.y);
    return {};
  }
  tessera::Status apply(std::string_view, const Spawn& in) {
    if (in.id == 0 || in.id >= kIdLimit) {
      return tessera::Error("id " + std::to_string(in.id) + " out of range");
    }
    if (find(in.id) != nullptr) {
      return tessera::Error("entity " + std::to_string(in.id) + " exists");
    }
    if (!in_zone(in.x, in.y)) return tessera::Error("outside the zone");
    spawn(in.id, in.kind, in.x, in.y);
    return {};
  }
  tessera::Status apply(std::string_view, const Remove& in) {
    if (find(in.id) == nullptr) return no_entity(in.id);
    erase(in.id);
    return {};
  }
  tessera::Status apply(std::string_view, const Reuse& in) {
    const Entity* old = find(in.id);
    if (old == nullptr) return no_entity(in.id);
    if (!in_zone(in.x, in.y)) return tessera::Error("outside the zone");
    Entity again{in.id, old->kind, in.x, in.y, old->generation + 1, {}};
    erase(in.id);
    add(std::move(again));
    return {};
  }
  tessera::Status apply(std::string_view, const SetComponent& in) {
    Entity* e = find(in.id);
    if (e == nullptr) return no_entity(in.id);
    if (const tessera::Status ok = check_component(in.component); !ok.ok()) {
      return ok;
    }
    auto it =
        std::find_if(e->components.begin(), e->components.end(),
                     [&](const Component& c) { return c.id == in.component; });
    if (it == e->components.end()) {
      e->components.push_back(Component{in.component, in.value});
    } else {
      it->value = in.value;
    }
    if (replicating()) {
      store_.set_component(in.id, static_cast<std::uint8_t>(in.component),
                           in.value);
    }
    return {};
  }
  tessera::Status apply(std::string_view, const RemoveComponent& in) {
    Entity* e = find(in.id);
    if (e == nullptr) return no_entity(in.id);
    if (const tessera::Status ok = check_component(in.component); !ok.ok()) {
      return ok;
    }
    std::erase_if(e->components,
                  [&](const Component& c) { return c.id == in.component; });
    if (replicating()) {
      store_.remove_component(in.id, static_cast<std::uint8_t>(in.component));
    }
    return {};
  }

  static tessera::Status no_entity(std::uint64_t id) {
    return tessera::Error("no entity " + std::to_string(id));
  }
  static tessera::Status check_component(std::uint32_t component) {
    if (component == 1) return tessera::Error("component 1 is the kind");
    if (component == 0 || component > 255) {
      return tessera::Error("component " + std::to_string(component) +
                            " out of range (2..255)");
    }
    return {};
  }
  static bool in_zone(double x, double y) {
    return x >= -kZoneLimit && x <= kZoneLimit && y >= -kZoneLimit &&
           y <= kZoneLimit;
  }

  // The entity `id` of `entities` (const or not), or nullptr.
  template <class Entities>
  static auto find_in(Entities& entities, std::uint64_t id)
      -> decltype(entities.data()) {
    auto it = std::lower_bound(
        entities.begin(), entities.end(), id,
        [](const Entity& e, std::uint64_t key) { return e.id < key; });
    return it != entities.end() && it->id == id ? &*it : nullptr;
  }
  Entity* find(std::uint64_t id) { return find_in(world_.entities, id); }
  const Entity* find(std::uint64_t id) const {
    return find_in(world_.entities, id);
  }
  const Entity* player_entity(std::string_view sid) const {
    for (const Player& p : world_.players) {
      if (p.sid == sid) return find(p.id);
    }
    return nullptr;
  }

  void place_player(std::string_view sid, double x, double y) {
    auto it = std::find_if(world_.players.begin(), world_.players.end(),
                           [&](const Player& p) { return p.sid == sid; });
    if (it == world_.players.end()) {
      while (find(world_.next_player_id) != nullptr) ++world_.next_player_id;
      world_.players.push_back(Player{std::string(sid), world_.next_player_id});
      it = world_.players.end() - 1;
      ++world_.next_player_id;
    }
    if (Entity* e = find(it->id)) {
      move(*e, x, y);
    } else {
      spawn(it->id, "player", x, y);
    }
  }

  void spawn(std::uint64_t id, std::string kind, double x, double y) {
    add(Entity{id, std::move(kind), x, y, 0, {}});
  }
  // Adds to the world and the store (the store's own generation counter
  // follows the same reuses as Entity::generation).
  void add(Entity e) {
    if (replicating()) {
      store_.set_pos(e.id, e.x, e.y, 0);
      store_.set_component(e.id, 1, e.kind);
      for (const Component& c : e.components) {
        store_.set_component(e.id, static_cast<std::uint8_t>(c.id), c.value);
      }
    }
    auto it = std::lower_bound(
        world_.entities.begin(), world_.entities.end(), e.id,
        [](const Entity& a, std::uint64_t key) { return a.id < key; });
    world_.entities.insert(it, std::move(e));
  }
  void erase(std::uint64_t id) {
    std::erase_if(world_.entities, [&](const Entity& e) { return e.id == id; });
    if (replicating()) store_.remove(id);
  }
  void move(Entity& e, double x, double y) {
    e.x = x;
    e.y = y;
    if (replicating()) store_.set_pos(e.id, x, y, 0);
  }

  Params params_;
  World world_;
  tessera::Replicated store_;
};

TESSERA_SHARD(ZoneMini);
