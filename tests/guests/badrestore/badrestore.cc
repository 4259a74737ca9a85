// Test guest "badrestore": saves fine, but every restore fails with
// "state is corrupt".
//   params   none;  inputs {"noop": {}}
//   save     the bytes "ticks=N" (raw)
//   snapshot {"ticks": int}
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "tessera/shard_sdk.h"

struct Params {};
TESSERA_FIELDS(Params);

struct Noop {};
TESSERA_FIELDS(Noop);

using Input = std::variant<Noop>;

struct Snapshot {
  std::int64_t ticks = 0;
};
TESSERA_FIELDS(Snapshot, ticks);

class BadRestore {
 public:
  static tessera::Result<BadRestore> init(std::string_view, Params) {
    return BadRestore();
  }

  tessera::Status apply_input(std::string_view, Input) {
    return tessera::Status();
  }

  void tick(double) { ++ticks_; }

  Snapshot snapshot() const { return Snapshot{ticks_}; }

  std::string save() const { return "ticks=" + std::to_string(ticks_); }

  static tessera::Result<BadRestore> restore(std::string_view, Params,
                                             std::string_view) {
    return tessera::Error("state is corrupt");
  }

 private:
  std::int64_t ticks_ = 0;
};

TESSERA_SHARD(BadRestore);
