// The zone: a 2000 x 2000 world where hundreds of NPCs wander and players walk
// around. It shows interest management and replication: each subscriber
// receives only the units near its own (interest radius 300), as entity
// changes rather than snapshots (docs/protocol.md, "Interest and
// replication").
//
// - Players: a subscriber's `{"join":{}}`, or its first `move_to`, gives it a
//   unit near the centre; `{"move_to":{"x":..,"y":..}}` walks there (inside
//   the world, else "outside the world"); `{"leave":{}}` removes the unit.
//   A player's name is its subscriber id.
// - Stealthed units (kind "stealth") are seen only by players whose name
//   starts with "scout", or whose unit is within 50 units of them.
// - A player standing within 30 units of an NPC drains its hp (25 per
//   second); at 0 the NPC respawns elsewhere with full hp under the same id,
//   so clients see it leave and a new one enter.
// - Replicated components (MessagePack values; the app's codec): 1 kind
//   ("npc", "stealth", "player"), 2 name (players only), 3 hp (integer).
// - Deterministic: a seeded PRNG, time only from tick(); save/restore keep
//   the whole world, PRNG included.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "tessera/shard_sdk.h"

namespace {

constexpr double kWorldSize = 2000;
constexpr float kInterestRadius = 300;
constexpr double kNearRadius = 50;   // stealthed units show within this
constexpr double kDrainRadius = 30;  // players drain NPCs within this
constexpr double kDrainPerSecond = 25;
constexpr double kPlayerSpeed = 150;  // world units per second
constexpr double kMaxHp = 100;
constexpr std::uint64_t kFirstPlayerId = 100000;

constexpr std::uint8_t kKindComponent = 1;
constexpr std::uint8_t kNameComponent = 2;
constexpr std::uint8_t kHpComponent = 3;

}  // namespace

struct Params {
  std::uint64_t seed = 7;
  std::uint32_t npcs = 400;
  std::uint32_t stealthed = 8;  // the last `stealthed` NPCs
};
TESSERA_FIELDS(Params, seed, npcs, stealthed);

struct Join {};
TESSERA_FIELDS(Join);
struct MoveTo {
  double x = 0;
  double y = 0;
};
TESSERA_FIELDS(MoveTo, x, y);
struct Leave {};
TESSERA_FIELDS(Leave);
using Input = std::variant<Join, MoveTo, Leave>;

struct Unit {
  std::uint64_t id = 0;
  std::string kind;  // "npc", "stealth" or "player"
  std::string name;  // players: the subscriber id
  double x = 0;
  double y = 0;
  double target_x = 0;
  double target_y = 0;
  double speed = 0;
  double pause = 0;  // NPCs: seconds to wait before walking on
  double hp = kMaxHp;
};
TESSERA_FIELDS(Unit, id, kind, name, x, y, target_x, target_y, speed, pause,
               hp);

// Everything save() keeps.
struct World {
  std::uint64_t rng = 0;
  std::uint64_t next_player_id = kFirstPlayerId;
  std::vector<Unit> units;  // ascending ids
};
TESSERA_FIELDS(World, rng, next_player_id, units);

// The broadcast snapshot: changes only when players join or leave, so with
// replication on it is rarely sent.
struct Snapshot {
  double width = kWorldSize;
  double height = kWorldSize;
  std::uint64_t npcs = 0;
  std::vector<std::string> players;
};
TESSERA_FIELDS(Snapshot, width, height, npcs, players);

class Zone {
 public:
  static tessera::Result<Zone> init(std::string_view /*shard_id*/,
                                    Params params) {
    if (params.npcs > 5000) return tessera::Error("at most 5000 npcs");
    if (params.stealthed > params.npcs) {
      return tessera::Error("stealthed must not exceed npcs");
    }
    Zone zone;
    zone.world_.rng = params.seed;
    for (std::uint32_t i = 0; i < params.npcs; ++i) {
      Unit npc;
      npc.id = i + 1;
      npc.kind = i + params.stealthed >= params.npcs ? "stealth" : "npc";
      npc.x = zone.uniform(0, kWorldSize);
      npc.y = zone.uniform(0, kWorldSize);
      npc.speed = zone.uniform(20, 60);
      zone.pick_destination(npc);
      zone.world_.units.push_back(std::move(npc));
    }
    zone.replicate_all();
    return zone;
  }

  tessera::Status apply_input(std::string_view sid, Input input) {
    if (std::holds_alternative<Leave>(input)) {
      if (const Unit* unit = player_unit(sid)) erase(unit->id);
      return tessera::Status();
    }
    if (const MoveTo* move = std::get_if<MoveTo>(&input)) {
      if (!(move->x >= 0 && move->x <= kWorldSize && move->y >= 0 &&
            move->y <= kWorldSize)) {
        return tessera::Error("outside the world (0..2000)");
      }
      Unit& unit = join(sid);
      unit.target_x = move->x;
      unit.target_y = move->y;
      return tessera::Status();
    }
    join(sid);
    return tessera::Status();
  }

  void tick(double dt) {
    for (Unit& unit : world_.units) {
      if (unit.kind != "player") drain(unit, dt);
      walk(unit, dt);
    }
    for (Unit& unit : world_.units) {
      if (unit.hp <= 0) respawn(unit);
      // Unchanged values record no change: only what moved is sent.
      store_.set_pos(unit.id, unit.x, unit.y, 0);
      if (unit.hp < kMaxHp) {
        store_.set_component_value(unit.id, kHpComponent, hp_of(unit));
      }
    }
  }

  Snapshot snapshot() const {
    Snapshot s;
    for (const Unit& unit : world_.units) {
      if (unit.kind == "player") {
        s.players.push_back(unit.name);
      } else {
        ++s.npcs;
      }
    }
    return s;
  }

  World save() const { return world_; }
  static tessera::Result<Zone> restore(std::string_view /*shard_id*/,
                                       Params /*params*/, World world) {
    // save() writes units in ascending id order, as find() needs.
    for (std::size_t i = 1; i < world.units.size(); ++i) {
      if (world.units[i - 1].id >= world.units[i].id) {
        return tessera::Error("saved units are not in ascending id order");
      }
    }
    Zone zone;
    zone.world_ = std::move(world);
    zone.replicate_all();
    return zone;
  }

  // Interest: a grid of 150-unit cells; an entity leaves a view 15 units
  // beyond the radius. Positions come from the store (no entities()).
  std::optional<tessera::InterestConfig> interest() const {
    return tessera::InterestConfig{150, 15};
  }
  std::optional<tessera::InterestArea> interest_area(
      std::string_view sid) const {
    const Unit* unit = player_unit(sid);
    if (unit == nullptr) return std::nullopt;  // spectators see nothing
    return tessera::InterestArea{static_cast<float>(unit->x),
                                 static_cast<float>(unit->y), kInterestRadius};
  }
  bool can_see(std::string_view sid, std::uint64_t id) const {
    const Unit* seen = find(id);
    if (seen == nullptr || seen->kind != "stealth") return true;
    const Unit* viewer = player_unit(sid);
    if (viewer == nullptr) return false;
    return viewer->name.starts_with("scout") ||
           std::hypot(viewer->x - seen->x, viewer->y - seen->y) <= kNearRadius;
  }

  // Replication: positions to 0.01 units, at most 1200 bytes of updates per
  // subscriber and tick.
  tessera::Replicated* replicated() { return &store_; }
  tessera::ReplicationConfig replication_config() const {
    return tessera::ReplicationConfig{0.01, 1200, false};
  }

 private:
  // A 64-bit linear congruential generator with an xor-shift output mix.
  std::uint64_t next_random() {
    world_.rng = world_.rng * 6364136223846793005ULL + 1442695040888963407ULL;
    std::uint64_t z = world_.rng;
    z ^= z >> 29;
    z *= 0xbf58476d1ce4e5b9ULL;
    z ^= z >> 32;
    return z;
  }
  double uniform(double lo, double hi) {
    const double unit = static_cast<double>(next_random() >> 11) * 0x1p-53;
    return lo + (hi - lo) * unit;
  }

  // NPCs walk to a point up to 300 units away, then rest up to 3 seconds.
  void pick_destination(Unit& npc) {
    npc.target_x = std::clamp(npc.x + uniform(-300, 300), 0.0, kWorldSize);
    npc.target_y = std::clamp(npc.y + uniform(-300, 300), 0.0, kWorldSize);
    npc.pause = uniform(0, 3);
  }

  void walk(Unit& unit, double dt) {
    if (unit.pause > 0) {
      unit.pause = std::max(0.0, unit.pause - dt);
      return;
    }
    const double dx = unit.target_x - unit.x;
    const double dy = unit.target_y - unit.y;
    const double distance = std::hypot(dx, dy);
    const double step = unit.speed * dt;
    if (distance <= step) {
      unit.x = unit.target_x;
      unit.y = unit.target_y;
      if (unit.kind != "player") pick_destination(unit);
      return;
    }
    unit.x += dx / distance * step;
    unit.y += dy / distance * step;
  }

  void drain(Unit& npc, double dt) {
    for (const Unit& player : players()) {
      if (std::hypot(player.x - npc.x, player.y - npc.y) <= kDrainRadius) {
        npc.hp -= kDrainPerSecond * dt;
      }
    }
  }

  // A drained NPC comes back elsewhere under the same id: removing and
  // setting it in one tick tells clients it is a new entity.
  void respawn(Unit& npc) {
    npc.x = uniform(0, kWorldSize);
    npc.y = uniform(0, kWorldSize);
    npc.hp = kMaxHp;
    pick_destination(npc);
    store_.remove(npc.id);
    replicate(npc);
  }

  Unit& join(std::string_view sid) {
    if (const Unit* unit = player_unit(sid)) {
      return world_.units[static_cast<std::size_t>(unit - world_.units.data())];
    }
    Unit player;
    player.id = world_.next_player_id++;
    player.kind = "player";
    player.name = std::string(sid);
    player.x = uniform(800, 1200);
    player.y = uniform(800, 1200);
    player.target_x = player.x;
    player.target_y = player.y;
    player.speed = kPlayerSpeed;
    replicate(player);
    world_.units.push_back(std::move(player));  // the largest id yet
    return world_.units.back();
  }

  void erase(std::uint64_t id) {
    std::erase_if(world_.units, [id](const Unit& u) { return u.id == id; });
    store_.remove(id);
  }

  void replicate(const Unit& unit) {
    store_.set_pos(unit.id, unit.x, unit.y, 0);
    store_.set_component_value(unit.id, kKindComponent, unit.kind);
    if (!unit.name.empty()) {
      store_.set_component_value(unit.id, kNameComponent, unit.name);
    }
    store_.set_component_value(unit.id, kHpComponent, hp_of(unit));
  }
  static std::int64_t hp_of(const Unit& unit) {
    return static_cast<std::int64_t>(std::ceil(unit.hp));
  }
  void replicate_all() {
    for (const Unit& unit : world_.units) replicate(unit);
  }

  std::vector<Unit>::const_iterator lower_bound(std::uint64_t id) const {
    return std::lower_bound(
        world_.units.begin(), world_.units.end(), id,
        [](const Unit& u, std::uint64_t key) { return u.id < key; });
  }
  const Unit* find(std::uint64_t id) const {
    auto it = lower_bound(id);
    return it != world_.units.end() && it->id == id ? &*it : nullptr;
  }
  // Players' units: ids from kFirstPlayerId, after every NPC.
  std::span<const Unit> players() const {
    return {lower_bound(kFirstPlayerId), world_.units.end()};
  }
  const Unit* player_unit(std::string_view sid) const {
    for (const Unit& unit : players()) {
      if (unit.name == sid) return &unit;
    }
    return nullptr;
  }

  World world_;
  tessera::Replicated store_;  // mirrors world_ for the host
};

TESSERA_SHARD(Zone);
