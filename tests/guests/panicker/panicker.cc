// Test guest "panicker": panics on purpose.
//   params   {"at": int}  tick number (from 1) that calls
//            tessera::panic("boom at tick N"); default 1
//   inputs   {"panic": {}} panics at once: "boom in apply_input"
//   snapshot {"ticks": int}
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "tessera/shard_sdk.h"

struct Params {
  std::int64_t at = 1;
};
TESSERA_FIELDS(Params, at);

struct Panic {};
TESSERA_FIELDS(Panic);

using Input = std::variant<Panic>;

struct Snapshot {
  std::int64_t ticks = 0;
};
TESSERA_FIELDS(Snapshot, ticks);

class Panicker {
 public:
  static tessera::Result<Panicker> init(std::string_view, Params params) {
    return Panicker(params.at);
  }

  tessera::Status apply_input(std::string_view, Input) {
    tessera::panic("boom in apply_input");
  }

  void tick(double) {
    ++ticks_;
    if (ticks_ == at_) tessera::panic("boom at tick " + std::to_string(ticks_));
  }

  Snapshot snapshot() const { return Snapshot{ticks_}; }

 private:
  explicit Panicker(std::int64_t at) : at_(at) {}

  std::int64_t at_;
  std::int64_t ticks_ = 0;
};

TESSERA_SHARD(Panicker);
