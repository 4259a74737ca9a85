// The arena: players move to points inside a rectangle. Each subscriber's
// first accepted move_to adds their player.
//
// Two ways to send the players, chosen by the create params:
// - by default the snapshot lists every player, every tick;
// - with "replicate": true the players are replicated entities instead
//   (docs/protocol.md, "Interest and replication"): entity id = join order
//   from 1, position (x, y, 0) to "precision" units (default 0.1), and
//   component 1 = the subscriber id (MessagePack string). The snapshot is
//   then an empty player list, unchanged, so frames carry it as nil and
//   each client gets only the players that moved.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "tessera/shard_sdk.h"

struct Params {
  float width = 800;
  float height = 500;
  bool replicate = false;
  double precision = 0.1;
};
TESSERA_FIELDS(Params, width, height, replicate, precision);

// The replicated component holding the player's subscriber id.
constexpr std::uint8_t kIdComponent = 1;

struct MoveTo {
  float x = 0;
  float y = 0;
};
TESSERA_FIELDS(MoveTo, x, y);

using Input = std::variant<MoveTo>;

struct Player {
  std::string id;
  float x = 0;
  float y = 0;
};
TESSERA_FIELDS(Player, id, x, y);

struct Snapshot {
  std::vector<Player> players;
};
TESSERA_FIELDS(Snapshot, players);

class Arena {
 public:
  static tessera::Result<Arena> init(std::string_view /*shard_id*/,
                                     Params params) {
    if (!(params.width > 0 && params.height > 0)) {
      return tessera::Error("width and height must be positive");
    }
    if (!(params.precision > 0 && params.precision <= 1)) {
      return tessera::Error("precision must be in (0, 1]");
    }
    return Arena(params);
  }

  tessera::Status apply_input(std::string_view sid, Input input) {
    const MoveTo& move = std::get<MoveTo>(input);
    if (move.x < 0 || move.x > width_ || move.y < 0 || move.y > height_) {
      return tessera::Error("outside the arena");
    }
    auto [it, added] = index_.try_emplace(std::string(sid), players_.size());
    if (added) {
      players_.push_back(Player{std::string(sid), move.x, move.y});
    } else {
      players_[it->second].x = move.x;
      players_[it->second].y = move.y;
    }
    replicate(it->second, added);
    return tessera::Status();
  }

  void tick(double /*dt_seconds*/) {}

  Snapshot snapshot() const {
    if (params_.replicate) return Snapshot{};
    return Snapshot{players_};
  }

  // Replication on with the "replicate" param; nullptr turns it off.
  tessera::Replicated* replicated() {
    return params_.replicate ? &store_ : nullptr;
  }
  tessera::ReplicationConfig replication_config() const {
    return tessera::ReplicationConfig{params_.precision, 0, false};
  }

  // The players are the whole state worth keeping across a restart.
  std::vector<Player> save() const { return players_; }

  static tessera::Result<Arena> restore(std::string_view shard_id,
                                        Params params,
                                        std::vector<Player> players) {
    tessera::Result<Arena> arena = init(shard_id, params);
    if (!arena.ok()) return arena;
    for (Player& p : players) {
      auto [it, added] =
          arena->index_.try_emplace(p.id, arena->players_.size());
      if (!added) return tessera::Error("player " + p.id + " saved twice");
      arena->players_.push_back(std::move(p));
      arena->replicate(it->second, /*added=*/true);
    }
    return arena;
  }

 private:
  explicit Arena(const Params& params)
      : params_(params), width_(params.width), height_(params.height) {}

  // Copies player `index` into the store; its id component only when the
  // player was just `added` (it never changes).
  void replicate(std::size_t index, bool added) {
    if (!params_.replicate) return;
    const Player& p = players_[index];
    const std::uint64_t id = index + 1;
    store_.set_pos(id, p.x, p.y, 0);
    if (added) store_.set_component_value(id, kIdComponent, p.id);
  }

  Params params_;
  float width_;
  float height_;
  std::vector<Player> players_;
  std::unordered_map<std::string, std::size_t> index_;  // id -> players_
  tessera::Replicated store_;
};

TESSERA_SHARD(Arena);
