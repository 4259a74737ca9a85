// The arena: players move to points inside a rectangle. Each subscriber's
// first accepted move_to adds their player; the snapshot lists every player.
#include <algorithm>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "tessera/shard_sdk.h"

struct Params {
  float width = 800;
  float height = 500;
};
TESSERA_FIELDS(Params, width, height);

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
    return Arena(params);
  }

  tessera::Status apply_input(std::string_view sid, Input input) {
    const MoveTo& move = std::get<MoveTo>(input);
    if (move.x < 0 || move.x > width_ || move.y < 0 || move.y > height_) {
      return tessera::Error("outside the arena");
    }
    auto it = std::find_if(players_.begin(), players_.end(),
                           [&](const Player& p) { return p.id == sid; });
    if (it == players_.end()) {
      players_.push_back(Player{std::string(sid), move.x, move.y});
    } else {
      it->x = move.x;
      it->y = move.y;
    }
    return tessera::Status();
  }

  void tick(double /*dt_seconds*/) {}

  Snapshot snapshot() const { return Snapshot{players_}; }

  // The players are the whole state worth keeping across a restart.
  std::vector<Player> save() const { return players_; }

  static tessera::Result<Arena> restore(std::string_view shard_id,
                                        Params params,
                                        std::vector<Player> players) {
    tessera::Result<Arena> arena = init(shard_id, params);
    if (arena.ok()) arena->players_ = std::move(players);
    return arena;
  }

 private:
  explicit Arena(const Params& params)
      : width_(params.width), height_(params.height) {}

  float width_;
  float height_;
  std::vector<Player> players_;
};

TESSERA_SHARD(Arena);
