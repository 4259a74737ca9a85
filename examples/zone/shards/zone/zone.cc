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
// - Characters (the app's data, examples/zone/tessera.json): the join
//   function joinZone (compute/zone-fns) sends the zone an `enter` input
//   with the caller's Character row and items; only the server can send it
//   (an empty subscriber id). The player's unit starts where the row says,
//   and its position and hp are written back to the row (writes(), only
//   when they changed; the host flushes every 2 s and when the zone stops).
//   A player who joined another way (the dev join endpoint) just walks.
// - Loot, the keyed-call pattern: `{"loot":{}}` (a chest the player opens)
//   makes a grant loot:<character>:<n> with n the character's next grant
//   number. The grant is kept in the world (saved with it) and asked for in
//   calls() until on_call_result answers: only then does the item show in
//   the snapshot. A zone restored from an older save sends its grants again
//   under the same keys and gets the stored results; a number it reuses
//   with other args gets KEY_REUSED and the grant moves to the next
//   number; the next `enter` brings what committed since the save. Items
//   are kept by their row id, so one arriving twice shows once.
// - `{"heal":{"who":user,"hp":n}}` (gmHeal's shards.send) adds hp; like
//   `enter`, refused from any connection.
// - Deterministic: a seeded PRNG, time only from tick(); save/restore keep
//   the whole world, PRNG and grants in flight included.
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

#include "tessera/calls.h"
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
constexpr std::size_t kMaxGrantsInFlight = 512;
constexpr const char* kLoot[] = {"copper coin", "healing herb", "iron dagger",
                                 "wolf pelt",   "silver ring",  "old map"};

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
struct Loot {};
TESSERA_FIELDS(Loot);

// An item a character carries: its Item row id and what it is.
struct Carried {
  std::string id;
  std::string item;
};
TESSERA_FIELDS(Carried, id, item);

// From the server only (joinZone): the character as the data has it.
struct Enter {
  std::string userId;
  std::string characterId;
  std::string name;
  std::int64_t hp = 100;
  double x = 1000;
  double y = 1000;
  std::int64_t nextGrant = 1;
  std::vector<Carried> items;
};
TESSERA_FIELDS(Enter, userId, characterId, name, hp, x, y, nextGrant, items);
// From the server only (gmHeal).
struct Heal {
  std::string who;
  std::int64_t hp = 0;
};
TESSERA_FIELDS(Heal, who, hp);
using Input = std::variant<Join, MoveTo, Leave, Loot, Enter, Heal>;

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
  // Players with a Character row (an `enter` from joinZone):
  std::string character_id;
  std::int64_t next_grant = 1;  // the n of the next loot:<character>:<n>
  std::vector<Carried> items;   // granted and committed, by row id
  // What the row was last given (writes() sends only changes).
  double written_x = -1;
  double written_y = -1;
  std::int64_t written_hp = -1;
};
TESSERA_FIELDS(Unit, id, kind, name, x, y, target_x, target_y, speed, pause, hp,
               character_id, next_grant, items, written_x, written_y,
               written_hp);

// A loot grant in flight: asked for in calls() until on_call_result.
struct Grant {
  std::string key;  // loot:<character>:<n>
  std::string user;
  std::string character_id;
  std::string item;
  std::int64_t n = 0;
  std::uint64_t tick = 0;  // when it dropped: a different drop, other args
};
TESSERA_FIELDS(Grant, key, user, character_id, item, n, tick);

// Everything save() keeps.
struct World {
  std::uint64_t rng = 0;
  std::uint64_t next_player_id = kFirstPlayerId;
  std::vector<Unit> units;  // ascending ids
  std::uint64_t ticks = 0;
  std::vector<Grant> grants;  // in flight, oldest first
};
TESSERA_FIELDS(World, rng, next_player_id, units, ticks, grants);

// grantItem's params and result (compute/zone-fns).
struct GrantArgs {
  std::string characterId;
  std::string item;
  std::string grantKey;
  std::int64_t n = 0;
  std::uint64_t tick = 0;
};
TESSERA_FIELDS(GrantArgs, characterId, item, grantKey, n, tick);
struct Granted {
  std::string itemId;
};
TESSERA_FIELDS(Granted, itemId);

// The fields writes() sets on a Character row.
struct CharacterSet {
  double x = 0;
  double y = 0;
  std::int64_t hp = 0;
};
TESSERA_FIELDS(CharacterSet, x, y, hp);

// A character in the snapshot.
struct CharacterView {
  std::string user;
  std::string characterId;
  std::int64_t hp = 0;
  std::vector<Carried> items;
};
TESSERA_FIELDS(CharacterView, user, characterId, hp, items);

// The broadcast snapshot: changes only when players join or leave, so with
// replication on it is rarely sent.
struct Snapshot {
  double width = kWorldSize;
  double height = kWorldSize;
  std::uint64_t npcs = 0;
  std::vector<std::string> players;
  std::vector<CharacterView> characters;  // players with a Character row
  std::uint64_t grants_in_flight = 0;
};
TESSERA_FIELDS(Snapshot, width, height, npcs, players, characters,
               grants_in_flight);

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
    if (std::holds_alternative<Enter>(input) ||
        std::holds_alternative<Heal>(input)) {
      // Only a function's shards.send has an empty subscriber id.
      if (!sid.empty()) return tessera::Error("from the server only");
      if (Enter* enter = std::get_if<Enter>(&input)) return admit(*enter);
      return heal(std::get<Heal>(input));
    }
    if (sid.empty()) return tessera::Error("the server sends enter or heal");
    if (std::holds_alternative<Loot>(input)) {
      const Unit* unit = player_unit(sid);
      if (unit == nullptr || unit->character_id.empty()) {
        return tessera::Error("no character here: join through joinZone");
      }
      return drop_loot(sid);
    }
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
    ++world_.ticks;
    for (Unit& unit : world_.units) {
      if (unit.kind != "player") drain(unit, dt);
      walk(unit, dt);
    }
    for (Unit& unit : world_.units) {
      if (unit.hp <= 0) respawn(unit);
      // Unchanged values record no change: only what moved is sent.
      store_.set_pos(unit.id, unit.x, unit.y, 0);
      if (unit.hp < kMaxHp || unit.kind == "player") {
        store_.set_component_value(unit.id, kHpComponent, hp_of(unit));
      }
    }
  }

  // Keyed calls: every grant still waiting, every tick (the host sends a
  // key once per run and skips keys in flight).
  std::vector<tessera::Call> calls() {
    std::vector<tessera::Call> out;
    out.reserve(world_.grants.size());
    for (const Grant& g : world_.grants) {
      std::string args;
      tessera::encode(tessera::abi::kCodecJson,
                      GrantArgs{g.character_id, g.item, g.key, g.n, g.tick},
                      args);
      out.push_back(tessera::Call{g.key, "grantItem", std::move(args)});
    }
    return out;
  }

  // The grant committed (or the function refused it): only now does the
  // item show.
  void on_call_result(std::string_view key,
                      const tessera::CallOutcome& outcome) {
    auto it = std::find_if(world_.grants.begin(), world_.grants.end(),
                           [key](const Grant& g) { return g.key == key; });
    if (it == world_.grants.end()) return;
    Grant grant = std::move(*it);
    world_.grants.erase(it);
    Unit* unit = mutable_player(grant.user);
    if (unit != nullptr && unit->character_id != grant.character_id) {
      unit = nullptr;
    }
    if (outcome.ok) {
      Granted granted;
      tessera::Status st = tessera::decode(tessera::abi::kCodecJson,
                                           outcome.result_json, granted);
      if (!st.ok() || granted.itemId.empty()) {
        tessera::log_warn("grant " + grant.key +
                          ": unexpected result: " + st.message());
        return;
      }
      if (unit != nullptr) carry(*unit, Carried{granted.itemId, grant.item});
      return;
    }
    if (outcome.error.starts_with("KEY_REUSED")) {
      // A restored zone counted from an older row: the next number.
      std::int64_t n = grant.n + 1;
      if (unit != nullptr) {
        n = std::max(n, unit->next_grant);
        unit->next_grant = n + 1;
      }
      grant.n = n;
      grant.key = grant_key(grant.character_id, n);
      world_.grants.push_back(std::move(grant));
      return;
    }
    tessera::log_warn("grant " + grant.key +
                      " failed: " + std::string(outcome.error));
  }

  // Positions and hp back to the Character rows, only what changed since
  // the last write.
  std::vector<tessera::Write> writes() {
    std::vector<tessera::Write> out;
    for (Unit& unit : world_.units) {
      if (unit.kind != "player" || unit.character_id.empty()) continue;
      const CharacterSet set{rounded(unit.x), rounded(unit.y), hp_of(unit)};
      if (set.x == unit.written_x && set.y == unit.written_y &&
          set.hp == unit.written_hp) {
        continue;
      }
      unit.written_x = set.x;
      unit.written_y = set.y;
      unit.written_hp = set.hp;
      std::string json;
      tessera::encode(tessera::abi::kCodecJson, set, json);
      out.push_back(
          tessera::Write{"Character", unit.character_id, std::move(json)});
    }
    return out;
  }

  Snapshot snapshot() const {
    Snapshot s;
    for (const Unit& unit : world_.units) {
      if (unit.kind == "player") {
        s.players.push_back(unit.name);
        if (!unit.character_id.empty()) {
          s.characters.push_back(CharacterView{unit.name, unit.character_id,
                                               hp_of(unit), unit.items});
        }
      } else {
        ++s.npcs;
      }
    }
    s.grants_in_flight = world_.grants.size();
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

  static std::string grant_key(std::string_view character, std::int64_t n) {
    return "loot:" + std::string(character) + ":" + std::to_string(n);
  }
  static double rounded(double v) { return std::round(v * 100) / 100; }

  // A grant for `user`'s character (the item shows once it commits).
  tessera::Status drop_loot(std::string_view user) {
    Unit* unit = mutable_player(user);
    if (unit == nullptr || unit->character_id.empty()) {
      return tessera::Error("no character here: join through joinZone");
    }
    if (world_.grants.size() >= kMaxGrantsInFlight) {
      return tessera::Error("too much loot in flight; try again");
    }
    constexpr std::size_t kKinds = sizeof(kLoot) / sizeof(kLoot[0]);
    Grant grant;
    grant.n = unit->next_grant++;
    grant.key = grant_key(unit->character_id, grant.n);
    grant.user = unit->name;
    grant.character_id = unit->character_id;
    grant.item = kLoot[next_random() % kKinds];
    grant.tick = world_.ticks;
    world_.grants.push_back(std::move(grant));
    return tessera::Status();
  }

  static void carry(Unit& unit, Carried item) {
    for (const Carried& c : unit.items) {
      if (c.id == item.id) return;  // a reload and a late result: once
    }
    unit.items.push_back(std::move(item));
  }

  // joinZone's `enter`: the unit of that user gets the character (a new
  // unit starts where the row says; a live one keeps where it is).
  tessera::Status admit(const Enter& e) {
    if (e.userId.empty() || e.characterId.empty()) {
      return tessera::Error("enter: userId and characterId are required");
    }
    Unit* unit = mutable_player(e.userId);
    if (unit == nullptr) {
      unit = &join(e.userId);
      unit->x = std::clamp(e.x, 0.0, kWorldSize);
      unit->y = std::clamp(e.y, 0.0, kWorldSize);
      unit->target_x = unit->x;
      unit->target_y = unit->y;
      unit->hp = static_cast<double>(e.hp);
      store_.set_pos(unit->id, unit->x, unit->y, 0);
      store_.set_component_value(unit->id, kHpComponent, hp_of(*unit));
    }
    if (unit->character_id != e.characterId) {
      unit->character_id = e.characterId;
      unit->items.clear();
      unit->next_grant = 1;
    }
    // Grants in flight already took their numbers.
    unit->next_grant = std::max(unit->next_grant, e.nextGrant);
    for (const Grant& g : world_.grants) {
      if (g.character_id == e.characterId) {
        unit->next_grant = std::max(unit->next_grant, g.n + 1);
      }
    }
    for (const Carried& item : e.items) carry(*unit, item);
    // What the row holds now: writes() sends what differs from it.
    unit->written_x = rounded(e.x);
    unit->written_y = rounded(e.y);
    unit->written_hp = e.hp;
    return tessera::Status();
  }

  tessera::Status heal(const Heal& h) {
    Unit* unit = mutable_player(h.who);
    if (unit == nullptr) return tessera::Error("no such player");
    if (h.hp <= 0) return tessera::Error("heal: hp must be positive");
    unit->hp += static_cast<double>(h.hp);
    return tessera::Status();
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
  Unit* mutable_player(std::string_view sid) {
    const Unit* unit = player_unit(sid);
    if (unit == nullptr) return nullptr;
    return &world_.units[static_cast<std::size_t>(unit - world_.units.data())];
  }

  World world_;
  tessera::Replicated store_;  // mirrors world_ for the host
};

TESSERA_SHARD(Zone);
