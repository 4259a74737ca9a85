// The range: a shooting range that shows lag compensation (docs/guest-abi.md,
// "Lag compensation"). Targets slide left and right at constant speeds;
// players stand on the firing line at the bottom and shoot at them.
//
// - Params: {"history": 10} keeps 10 ticks (500 ms at 20 Hz) of what each
//   player was sent, so that a shot hits what the shooter's screen showed;
//   {"history": 0} turns lag compensation off (shots are checked against
//   the targets' current positions). "targets" (1..8, default 3) and
//   "speed" (world units per second of the first target, default 200; each
//   next one 25% faster) shape the range.
// - Inputs: {"join":{}} (or a player's first shot or throw) puts the
//   player on the firing line. {"shoot":{"aim":[x, y]}} fires a hitscan
//   shot from the player's position through (x, y): the first target on
//   that line, nearest first, takes 10 damage; a shot that hits nothing is
//   refused with "miss" (so a load test counts misses as REJECTs).
//   {"throw":{"dir":[x, y]}} throws a spear in that direction: it appears
//   where it is on the thrower's screen by now (advanced by ticks_behind)
//   and flies on each tick; a target it touches takes 25 damage.
// - Replicated entities (world 1000 x 600, precision 0.01): targets are ids
//   1..targets, players from 1000, spears from 100000. Components
//   (MessagePack): 1 kind ("target", "player", "spear"), 2 name (players),
//   3 hp (targets, 0..100; at 0 it is back to 100 and counts a kill).
// - Snapshot: every player's hits and misses, and the kills.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "tessera/rewind.h"
#include "tessera/shard_sdk.h"

namespace {

constexpr double kWidth = 1000;
constexpr double kHeight = 600;
constexpr double kMinX = 50;
constexpr double kMaxX = 950;
constexpr double kFiringLineY = 560;
constexpr double kTargetRadius = 20;
constexpr double kRange = 2000;     // farther than anything on the range
constexpr double kTickSecs = 0.05;  // tessera.json tickRate 20
constexpr double kSpearSpeed = 600;
constexpr int kShotDamage = 10;
constexpr int kSpearDamage = 25;
constexpr int kMaxHp = 100;
constexpr std::uint64_t kFirstPlayerId = 1000;
constexpr std::uint64_t kFirstSpearId = 100000;

constexpr std::uint8_t kKindComponent = 1;
constexpr std::uint8_t kNameComponent = 2;
constexpr std::uint8_t kHpComponent = 3;

using tessera::Vec3;

// The nearest of `candidates` on the ray from `from` through `aim`, within
// kTargetRadius of it.
std::optional<std::uint64_t> FirstOnLine(
    Vec3 from, Vec3 aim,
    const std::vector<std::pair<std::uint64_t, Vec3>>& candidates) {
  const double dx = aim.x - from.x;
  const double dy = aim.y - from.y;
  const double length = std::hypot(dx, dy);
  if (!(length > 0)) return std::nullopt;
  const double ux = dx / length;
  const double uy = dy / length;
  std::optional<std::uint64_t> best;
  double best_along = 0;
  for (const auto& [id, p] : candidates) {
    const double vx = p.x - from.x;
    const double vy = p.y - from.y;
    const double along = vx * ux + vy * uy;
    if (along < 0) continue;  // behind the shooter
    const double off = std::abs(vx * uy - vy * ux);
    if (off > kTargetRadius) continue;
    if (!best || along < best_along) {
      best = id;
      best_along = along;
    }
  }
  return best;
}

}  // namespace

struct Params {
  std::uint32_t history = 10;
  std::uint32_t targets = 3;
  double speed = 200;
};
TESSERA_FIELDS(Params, history, targets, speed);

struct Join {};
TESSERA_FIELDS(Join);
struct Shoot {
  std::vector<double> aim;  // [x, y]
};
TESSERA_FIELDS(Shoot, aim);
struct Throw {
  std::vector<double> dir;  // [x, y], any length but 0
};
TESSERA_FIELDS(Throw, dir);
using Input = std::variant<Join, Shoot, Throw>;

struct Target {
  std::uint64_t id = 0;
  double x = 0;
  double y = 0;
  double vx = 0;  // units per second; the sign flips at the ends
  std::int64_t hp = kMaxHp;
};
TESSERA_FIELDS(Target, id, x, y, vx, hp);

struct Player {
  std::uint64_t id = 0;
  std::string name;
  double x = 0;
  double y = kFiringLineY;
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;
};
TESSERA_FIELDS(Player, id, name, x, y, hits, misses);

struct Spear {
  std::uint64_t id = 0;
  std::string thrower;
  double x = 0;
  double y = 0;
  double vx = 0;
  double vy = 0;
};
TESSERA_FIELDS(Spear, id, thrower, x, y, vx, vy);

// Everything save() keeps.
struct World {
  std::uint32_t history = 0;
  std::vector<Target> targets;
  std::vector<Player> players;  // join order
  std::vector<Spear> spears;
  std::uint64_t next_spear_id = kFirstSpearId;
  std::uint64_t kills = 0;
};
TESSERA_FIELDS(World, history, targets, players, spears, next_spear_id, kills);

struct Score {
  std::string name;
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;
};
TESSERA_FIELDS(Score, name, hits, misses);

struct Snapshot {
  double width = kWidth;
  double height = kHeight;
  bool lag_compensation = false;
  std::uint64_t kills = 0;
  std::vector<Score> players;
};
TESSERA_FIELDS(Snapshot, width, height, lag_compensation, kills, players);

class Range {
 public:
  static tessera::Result<Range> init(std::string_view /*shard_id*/,
                                     Params params) {
    if (params.history > 256) return tessera::Error("history is 0..256");
    if (params.targets < 1 || params.targets > 8) {
      return tessera::Error("targets is 1..8");
    }
    if (!(params.speed >= 0 && params.speed <= 2000)) {
      return tessera::Error("speed is 0..2000");
    }
    Range range;
    range.world_.history = params.history;
    for (std::uint32_t i = 0; i < params.targets; ++i) {
      Target t;
      t.id = i + 1;
      t.x = kMinX + 150.0 * i;
      t.y = 120 + 100.0 * i;
      t.vx = params.speed * (1 + 0.25 * i);
      range.world_.targets.push_back(t);
    }
    range.replicate_all();
    return range;
  }

  std::optional<tessera::LagCompensation> lag_compensation() const {
    if (world_.history == 0) return std::nullopt;
    return tessera::LagCompensation(world_.history);
  }

  // Lag compensation off, or an input without a view tick: the targets
  // where they are now, the spear from the thrower's hand.
  tessera::Status apply_input(std::string_view sid, Input input) {
    Player& shooter = join(sid);
    if (const Shoot* shot = std::get_if<Shoot>(&input)) {
      std::vector<std::pair<std::uint64_t, Vec3>> now;
      for (const Target& t : world_.targets) now.push_back({t.id, {t.x, t.y}});
      return shoot(shooter, *shot, now);
    }
    if (const Throw* spear = std::get_if<Throw>(&input)) {
      return throw_spear(shooter, *spear, 0);
    }
    return tessera::Status();
  }

  // An input stamped with the tick the shooter's screen showed: the targets
  // where that screen drew them.
  tessera::Status apply_input_at(std::string_view sid, Input input,
                                 const tessera::Rewind& rewind) {
    Player& shooter = join(sid);
    if (const Shoot* shot = std::get_if<Shoot>(&input)) {
      std::vector<std::pair<std::uint64_t, Vec3>> drawn;
      for (const auto& [id, p] :
           rewind.entities_near({shooter.x, shooter.y, 0}, kRange)) {
        if (id >= 1 && id <= world_.targets.size()) drawn.push_back({id, p});
      }
      return shoot(shooter, *shot, drawn);
    }
    if (const Throw* spear = std::get_if<Throw>(&input)) {
      return throw_spear(shooter, *spear, rewind.ticks_behind());
    }
    return tessera::Status();
  }

  void tick(double dt) {
    for (Target& t : world_.targets) {
      t.x += t.vx * dt;
      if (t.x > kMaxX) {
        t.x = 2 * kMaxX - t.x;
        t.vx = -t.vx;
      } else if (t.x < kMinX) {
        t.x = 2 * kMinX - t.x;
        t.vx = -t.vx;
      }
      store_.set_pos(t.id, t.x, t.y, 0);
    }
    std::erase_if(world_.spears, [&](Spear& s) { return !fly(s, dt); });
  }

  Snapshot snapshot() const {
    Snapshot s;
    s.lag_compensation = world_.history > 0;
    s.kills = world_.kills;
    for (const Player& p : world_.players) {
      s.players.push_back({p.name, p.hits, p.misses});
    }
    return s;
  }

  World save() const { return world_; }
  static tessera::Result<Range> restore(std::string_view /*shard_id*/,
                                        Params /*params*/, World world) {
    Range range;
    range.world_ = std::move(world);
    range.replicate_all();
    return range;
  }

  tessera::Replicated* replicated() { return &store_; }
  tessera::ReplicationConfig replication_config() const {
    return tessera::ReplicationConfig{0.01, 0, false};
  }

 private:
  tessera::Status shoot(
      Player& shooter, const Shoot& shot,
      const std::vector<std::pair<std::uint64_t, Vec3>>& targets) {
    if (shot.aim.size() != 2) return tessera::Error("aim is [x, y]");
    const std::optional<std::uint64_t> hit = FirstOnLine(
        {shooter.x, shooter.y, 0}, {shot.aim[0], shot.aim[1], 0}, targets);
    if (!hit) {
      ++shooter.misses;
      return tessera::Error("miss");
    }
    ++shooter.hits;
    damage(*hit, kShotDamage);
    return tessera::Status();
  }

  tessera::Status throw_spear(const Player& thrower, const Throw& input,
                              double ticks_behind) {
    if (input.dir.size() != 2) return tessera::Error("dir is [x, y]");
    const double length = std::hypot(input.dir[0], input.dir[1]);
    if (!(length > 0)) return tessera::Error("dir must not be [0, 0]");
    Spear s;
    s.id = world_.next_spear_id++;
    s.thrower = thrower.name;
    s.vx = input.dir[0] / length * kSpearSpeed;
    s.vy = input.dir[1] / length * kSpearSpeed;
    // On the thrower's screen it left `ticks_behind` ticks ago: it is that
    // far along by now.
    const double flown = ticks_behind * kTickSecs;
    s.x = thrower.x + s.vx * flown;
    s.y = thrower.y + s.vy * flown;
    store_.set_pos(s.id, s.x, s.y, 0);
    store_.set_component_value(s.id, kKindComponent, std::string("spear"));
    world_.spears.push_back(std::move(s));
    return tessera::Status();
  }

  // Moves a spear one tick; false once it hit a target or left the range.
  bool fly(Spear& s, double dt) {
    const double x0 = s.x;
    const double y0 = s.y;
    s.x += s.vx * dt;
    s.y += s.vy * dt;
    for (const Target& t : world_.targets) {
      if (SegmentDistance(x0, y0, s.x, s.y, t.x, t.y) <= kTargetRadius) {
        damage(t.id, kSpearDamage);
        for (Player& p : world_.players) {
          if (p.name == s.thrower) ++p.hits;
        }
        store_.remove(s.id);
        return false;
      }
    }
    if (s.x < 0 || s.x > kWidth || s.y < 0 || s.y > kHeight) {
      store_.remove(s.id);
      return false;
    }
    store_.set_pos(s.id, s.x, s.y, 0);
    return true;
  }

  static double SegmentDistance(double ax, double ay, double bx, double by,
                                double px, double py) {
    const double dx = bx - ax;
    const double dy = by - ay;
    const double len2 = dx * dx + dy * dy;
    double t = len2 > 0 ? ((px - ax) * dx + (py - ay) * dy) / len2 : 0;
    t = std::clamp(t, 0.0, 1.0);
    return std::hypot(ax + t * dx - px, ay + t * dy - py);
  }

  void damage(std::uint64_t id, int amount) {
    for (Target& t : world_.targets) {
      if (t.id != id) continue;
      t.hp -= amount;
      if (t.hp <= 0) {
        t.hp = kMaxHp;
        ++world_.kills;
      }
      store_.set_component_value(t.id, kHpComponent, t.hp);
    }
  }

  Player& join(std::string_view sid) {
    for (Player& p : world_.players) {
      if (p.name == sid) return p;
    }
    Player p;
    p.id = kFirstPlayerId + world_.players.size();
    p.name = std::string(sid);
    // Spread along the firing line, 80 units apart.
    p.x = 100 +
          std::fmod(80.0 * static_cast<double>(world_.players.size()), 800.0);
    replicate(p);
    world_.players.push_back(std::move(p));
    return world_.players.back();
  }

  void replicate(const Player& p) {
    store_.set_pos(p.id, p.x, p.y, 0);
    store_.set_component_value(p.id, kKindComponent, std::string("player"));
    store_.set_component_value(p.id, kNameComponent, p.name);
  }
  void replicate_all() {
    for (const Target& t : world_.targets) {
      store_.set_pos(t.id, t.x, t.y, 0);
      store_.set_component_value(t.id, kKindComponent, std::string("target"));
      store_.set_component_value(t.id, kHpComponent, t.hp);
    }
    for (const Player& p : world_.players) replicate(p);
    for (const Spear& s : world_.spears) {
      store_.set_pos(s.id, s.x, s.y, 0);
      store_.set_component_value(s.id, kKindComponent, std::string("spear"));
    }
  }

  World world_;
  tessera::Replicated store_;  // mirrors world_ for the host
};

TESSERA_SHARD(Range);
