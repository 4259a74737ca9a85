// Zones: one world split into zones side by side along x, one shard each,
// that players walk across (docs/guest-abi.md, "Transfers and messages").
//
// - Params: {"index": i, "zones": N, "width": 100, "height": 100,
//   "speed": 30, "group": "world", "require_claim": "party" | nil,
//   "relic_respawn_secs": 60}. Zone i covers world x in [i*width,
//   (i+1)*width) and y in [0, height]. Its shard id ends with "-<i>"; its
//   neighbours are the same id ending with "-<i-1>" and "-<i+1>" (zones-0,
//   zones-1, ...). With require_claim, players arriving from another zone
//   must carry that claim in their ticket ("join a party first" otherwise).
// - Inputs: {"join":{}} puts the subscriber's player in this zone (at x =
//   start + width/4) if it is not here yet; {"move":{"dx":..,"dy":..}} sets
//   its walking direction (each clamped to -1..1, the vector to length 1;
//   0, 0 stops), joining first if needed; {"leave":{}} removes it.
// - Walking over the zone's right (left) line asks the host to move the
//   player to the next (previous) zone (transfer_requests); the player's
//   state (position, direction, score, crossings) goes with it, so it keeps
//   walking there. Until the move ends the player stands on the line; if
//   the neighbour refuses it (or is not running and the module gets it
//   back), it is put back one unit inside and stopped, with "bounced" naming
//   the zone that turned it back.
// - The relic, in zone 0 at (25, 15): the first player within 6 units of it
//   takes it (score + 1). The zone announces it to its group (topic
//   "relic_taken", data: the taker's id) and every zone of the group shows
//   the banner; after relic_respawn_secs (0: never) it is back
//   ("relic_returned").
// - Snapshot: {zone: {id, index, zones, start, end, height, speed,
//   require_claim}, tick, players: [{id, x, y, dx, dy, score, crossings,
//   from, bounced, bounces}], relic: {x, y, taken, by} (zone 0 only, else nil),
//   banner: text | nil, messages: number received}. Coordinates are world
//   coordinates.
// - save/restore keep everything.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "tessera/messages.h"
#include "tessera/shard_sdk.h"
#include "tessera/transfer.h"

namespace {

constexpr double kRelicX = 25;
constexpr double kRelicY = 15;
constexpr double kRelicRadius = 6;
constexpr double kSpawnY = 50;
constexpr int64_t kRetryTicks = 20;  // re-ask for a move that did not start
constexpr double kOverLine = 1e-6;  // how far past the left line a player waits
constexpr size_t kMaxNameBytes = 64;  // of a taker named in a message

// "zones-3" -> ("zones-", 3); nullopt unless the id ends with "-<digits>".
std::optional<std::pair<std::string, std::uint32_t>> SplitId(
    std::string_view id) {
  const size_t dash = id.rfind('-');
  if (dash == std::string_view::npos || dash + 1 == id.size()) {
    return std::nullopt;
  }
  std::uint32_t index = 0;
  const char* first = id.data() + dash + 1;
  const char* last = id.data() + id.size();
  auto [end, error] = std::from_chars(first, last, index);
  if (error != std::errc() || end != last) return std::nullopt;
  return std::make_pair(std::string(id.substr(0, dash + 1)), index);
}

double Clamp1(double v) { return std::clamp(v, -1.0, 1.0); }

}  // namespace

struct Params {
  std::uint32_t index = 0;
  std::uint32_t zones = 2;
  double width = 100;
  double height = 100;
  double speed = 30;  // world units per second
  std::string group = "world";
  std::optional<std::string> require_claim;
  std::uint32_t relic_respawn_secs = 60;
};
TESSERA_FIELDS(Params, index, zones, width, height, speed, group, require_claim,
               relic_respawn_secs);

struct Join {};
TESSERA_FIELDS(Join);
struct Move {
  double dx = 0;
  double dy = 0;
};
TESSERA_FIELDS(Move, dx, dy);
struct Leave {};
TESSERA_FIELDS(Leave);
using Input = std::variant<Join, Move, Leave>;

struct Player {
  std::string id;
  double x = 0;
  double y = 0;
  double dx = 0;
  double dy = 0;
  std::uint64_t score = 0;       // relics taken
  std::uint64_t crossings = 0;   // zone lines crossed
  std::string from;              // the zone it came from ("" joined here)
  std::string bounced;           // the zone that last turned it back
  std::uint64_t bounces = 0;     // times it was turned back
  std::int64_t asked_tick = -1;  // when it last asked to move (-1: not)
};
TESSERA_FIELDS(Player, id, x, y, dx, dy, score, crossings, from, bounced,
               bounces, asked_tick);

// What travels with a player to the next zone.
struct Traveller {
  double x = 0;
  double y = 0;
  double dx = 0;
  double dy = 0;
  std::uint64_t score = 0;
  std::uint64_t crossings = 0;
  std::uint64_t bounces = 0;
  std::string from;  // the zone it was in before the one it leaves
};
TESSERA_FIELDS(Traveller, x, y, dx, dy, score, crossings, bounces, from);

struct Relic {
  double x = kRelicX;
  double y = kRelicY;
  bool taken = false;
  std::string by;
};
TESSERA_FIELDS(Relic, x, y, taken, by);

// Everything save() keeps.
struct World {
  std::int64_t tick = 0;
  double time = 0;              // seconds of game time
  std::vector<Player> players;  // join order
  std::optional<Relic> relic;   // zone 0 only
  double relic_taken_time = 0;
  std::optional<std::string> banner;
  std::uint64_t messages = 0;
};
TESSERA_FIELDS(World, tick, time, players, relic, relic_taken_time, banner,
               messages);

struct ZoneInfo {
  std::string id;
  std::uint32_t index = 0;
  std::uint32_t zones = 0;
  double start = 0;
  double end = 0;
  double height = 0;
  double speed = 0;
  std::optional<std::string> require_claim;
};
TESSERA_FIELDS(ZoneInfo, id, index, zones, start, end, height, speed,
               require_claim);

struct ShownPlayer {
  std::string id;
  double x = 0;
  double y = 0;
  double dx = 0;
  double dy = 0;
  std::uint64_t score = 0;
  std::uint64_t crossings = 0;
  std::string from;
  std::string bounced;
  std::uint64_t bounces = 0;
};
TESSERA_FIELDS(ShownPlayer, id, x, y, dx, dy, score, crossings, from, bounced,
               bounces);

struct Snapshot {
  ZoneInfo zone;
  std::int64_t tick = 0;
  std::vector<ShownPlayer> players;
  std::optional<Relic> relic;
  std::optional<std::string> banner;
  std::uint64_t messages = 0;
};
TESSERA_FIELDS(Snapshot, zone, tick, players, relic, banner, messages);

class Zone {
 public:
  static tessera::Result<Zone> init(std::string_view shard_id, Params params) {
    if (params.zones < 1 || params.zones > 64) {
      return tessera::Error("zones is 1..64");
    }
    if (params.index >= params.zones) {
      return tessera::Error("index is 0..zones-1");
    }
    if (!(params.width >= 10 && params.width <= 100000) ||
        !(params.height >= 10 && params.height <= 100000)) {
      return tessera::Error("width and height are 10..100000");
    }
    if (!(params.speed > 0 && params.speed <= 10000)) {
      return tessera::Error("speed is 0..10000 (exclusive of 0)");
    }
    if (params.require_claim && params.require_claim->empty()) {
      return tessera::Error("require_claim must not be empty");
    }
    std::optional<std::pair<std::string, std::uint32_t>> split =
        SplitId(shard_id);
    if (!split || split->second != params.index) {
      return tessera::Error("the shard id must end with -" +
                            std::to_string(params.index) + " (its index)");
    }
    Zone zone(std::string(shard_id), split->first, std::move(params));
    if (zone.params_.index == 0) zone.world_.relic = Relic{};
    return zone;
  }

  tessera::Status apply_input(std::string_view sid, Input input) {
    if (sid.empty()) return tessera::Error("players only");
    if (std::holds_alternative<Leave>(input)) {
      std::erase_if(world_.players,
                    [&](const Player& p) { return p.id == sid; });
      return tessera::Status();
    }
    Player& p = find_or_join(sid);
    if (const Move* move = std::get_if<Move>(&input)) {
      if (!std::isfinite(move->dx) || !std::isfinite(move->dy)) {
        return tessera::Error("dx and dy must be numbers");
      }
      double dx = Clamp1(move->dx);
      double dy = Clamp1(move->dy);
      const double length = std::hypot(dx, dy);
      if (length > 1) dx /= length, dy /= length;
      p.dx = dx;
      p.dy = dy;
    }
    return tessera::Status();
  }

  void tick(double dt) {
    ++world_.tick;
    world_.time += dt;
    const double step = params_.speed * dt;
    for (Player& p : world_.players) walk(p, step);
    if (world_.relic) update_relic();
  }

  // The players standing on a zone line, asking to go across.
  std::vector<tessera::TransferRequest> transfer_requests() {
    std::vector<tessera::TransferRequest> out;
    for (Player& p : world_.players) {
      std::optional<std::string> to = neighbour_across(p);
      if (!to) continue;
      if (p.asked_tick >= 0 && world_.tick - p.asked_tick < kRetryTicks) {
        continue;
      }
      p.asked_tick = world_.tick;
      out.push_back({p.id, std::move(*to)});
    }
    return out;
  }

  // The player leaves: its state, or nullopt when it is not here.
  std::optional<Traveller> transfer_out(std::string_view sid) {
    auto it = std::find_if(world_.players.begin(), world_.players.end(),
                           [&](const Player& p) { return p.id == sid; });
    if (it == world_.players.end()) return std::nullopt;
    Traveller t{it->x,     it->y,         it->dx,      it->dy,
                it->score, it->crossings, it->bounces, it->from};
    world_.players.erase(it);
    return t;
  }

  // A player arrives from `auth.from_shard()`, or comes back to this zone
  // after the neighbour refused it (`returning`: always accepted).
  tessera::Status transfer_in(std::string_view sid, Traveller t,
                              const tessera::Auth& auth, bool returning) {
    if (!returning && params_.require_claim) {
      std::optional<std::string> claim = auth.claim(*params_.require_claim);
      if (!claim || claim->empty()) {
        return tessera::Error("join a " + *params_.require_claim + " first");
      }
    }
    std::erase_if(world_.players, [&](const Player& p) { return p.id == sid; });
    Player p;
    p.id = std::string(sid);
    p.bounces = t.bounces;
    p.from = std::move(t.from);
    p.y = std::clamp(std::isfinite(t.y) ? t.y : kSpawnY, 0.0, params_.height);
    p.score = t.score;
    p.crossings = t.crossings;
    if (returning) {
      // Back one unit inside, stopped, on the side it tried to leave by.
      const double x = std::isfinite(t.x) ? t.x : start();
      p.x = x >= end() ? end() - 1 : x < start() ? start() + 1 : x;
      p.bounced = std::string(auth.from_shard());
      ++p.bounces;
    } else {
      p.x = std::clamp(std::isfinite(t.x) ? t.x : start(), start(),
                       std::nextafter(end(), start()));
      p.dx = Clamp1(std::isfinite(t.dx) ? t.dx : 0);
      p.dy = Clamp1(std::isfinite(t.dy) ? t.dy : 0);
      p.from = std::string(auth.from_shard());
      ++p.crossings;
    }
    world_.players.push_back(std::move(p));
    return tessera::Status();
  }

  std::vector<std::string> groups() const {
    if (params_.group.empty()) return {};
    return {params_.group};
  }

  std::vector<tessera::Outgoing> outbox() { return std::exchange(outbox_, {}); }

  void on_message(std::string_view from, std::string_view topic,
                  std::string_view data) {
    ++world_.messages;
    if (topic == "relic_taken") {
      world_.banner = Banner(data.substr(0, kMaxNameBytes), from);
    } else if (topic == "relic_returned") {
      world_.banner.reset();
    }
  }

  Snapshot snapshot() const {
    Snapshot s;
    s.zone =
        ZoneInfo{id_,   params_.index,  params_.zones, start(),
                 end(), params_.height, params_.speed, params_.require_claim};
    s.tick = world_.tick;
    for (const Player& p : world_.players) {
      s.players.push_back(ShownPlayer{p.id, p.x, p.y, p.dx, p.dy, p.score,
                                      p.crossings, p.from, p.bounced,
                                      p.bounces});
    }
    s.relic = world_.relic;
    s.banner = world_.banner;
    s.messages = world_.messages;
    return s;
  }

  World save() const { return world_; }
  static tessera::Result<Zone> restore(std::string_view shard_id, Params params,
                                       World world) {
    tessera::Result<Zone> zone = init(shard_id, std::move(params));
    if (!zone.ok()) return zone;
    zone->world_ = std::move(world);
    return zone;
  }

 private:
  Zone(std::string id, std::string prefix, Params params)
      : id_(std::move(id)),
        prefix_(std::move(prefix)),
        params_(std::move(params)) {}

  double start() const { return params_.index * params_.width; }
  double end() const { return (params_.index + 1) * params_.width; }
  bool has_left() const { return params_.index > 0; }
  bool has_right() const { return params_.index + 1 < params_.zones; }

  static std::string Banner(std::string_view by, std::string_view zone) {
    return "The relic was taken by " + std::string(by) + " in " +
           std::string(zone);
  }

  Player& find_or_join(std::string_view sid) {
    for (Player& p : world_.players) {
      if (p.id == sid) return p;
    }
    Player p;
    p.id = std::string(sid);
    p.x = start() + params_.width / 4;
    // Spread along a short column through the spawn point.
    p.y = kSpawnY + 4.0 * static_cast<double>(world_.players.size() % 5) - 8;
    world_.players.push_back(std::move(p));
    return world_.players.back();
  }

  // Moves `p` by `step` along its direction, up to a zone line it may cross
  // (it waits there to be moved) or the world's edge.
  void walk(Player& p, double step) {
    // Just over the left line, or onto the right one: both are the
    // neighbour's extent.
    const double lo = has_left() ? start() - kOverLine : 0;
    const double hi = has_right() ? end() : std::nextafter(end(), start());
    p.x = std::clamp(p.x + p.dx * step, lo, hi);
    p.y = std::clamp(p.y + p.dy * step, 0.0, params_.height);
    if (!neighbour_across(p)) p.asked_tick = -1;
  }

  // The neighbour whose extent `p` stands in, if any.
  std::optional<std::string> neighbour_across(const Player& p) const {
    if (has_right() && p.x >= end()) {
      return prefix_ + std::to_string(params_.index + 1);
    }
    if (has_left() && p.x < start()) {
      return prefix_ + std::to_string(params_.index - 1);
    }
    return std::nullopt;
  }

  void update_relic() {
    Relic& relic = *world_.relic;
    if (relic.taken) {
      const double respawn = params_.relic_respawn_secs;
      if (respawn > 0 && world_.time - world_.relic_taken_time >= respawn) {
        relic = Relic{};
        world_.banner.reset();
        announce("relic_returned", "");
      }
      return;
    }
    for (Player& p : world_.players) {
      if (std::hypot(p.x - relic.x, p.y - relic.y) > kRelicRadius) continue;
      relic.taken = true;
      relic.by = p.id;
      ++p.score;
      world_.relic_taken_time = world_.time;
      world_.banner = Banner(p.id, id_);
      announce("relic_taken", p.id);
      return;
    }
  }

  void announce(std::string topic, std::string data) {
    if (params_.group.empty()) return;
    outbox_.push_back(tessera::Outgoing{tessera::Target::group(params_.group),
                                        std::move(topic), std::move(data)});
  }

  std::string id_;
  std::string prefix_;  // "zones-": the neighbours' ids are prefix + index
  Params params_;
  World world_;
  std::vector<tessera::Outgoing> outbox_;
};

TESSERA_SHARD(Zone);
