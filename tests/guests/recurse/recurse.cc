// Test guest "recurse": tick recurses params.depth calls deep (default 10
// million), which exhausts the host's call stack limit. The recursion keeps
// its state in wasm locals, not in linear memory, so it is the host's native
// stack that runs out, not the guest's shadow stack.
//   params   {"depth": int}
//   inputs   {"noop": {}}
//   snapshot {"ticks": int, "result": int}
#include <cstdint>
#include <string_view>
#include <variant>

#include "tessera/shard_sdk.h"

struct Params {
  std::uint32_t depth = 10000000;
};
TESSERA_FIELDS(Params, depth);

struct Noop {};
TESSERA_FIELDS(Noop);

using Input = std::variant<Noop>;

struct Snapshot {
  std::int64_t ticks = 0;
  std::uint32_t result = 0;
};
TESSERA_FIELDS(Snapshot, ticks, result);

volatile std::uint32_t g_salt = 1;

// Not a tail call: the volatile read after the call must happen once per
// level, in order, so the compiler can turn this into neither a loop nor an
// accumulator.
__attribute__((noinline)) std::uint32_t Recurse(std::uint32_t depth) {
  if (depth == 0) return g_salt;
  const std::uint32_t below = Recurse(depth - 1);
  return below * 2654435761u + g_salt;
}

class Recursive {
 public:
  static tessera::Result<Recursive> init(std::string_view, Params params) {
    return Recursive(params.depth);
  }

  tessera::Status apply_input(std::string_view, Input) {
    return tessera::Status();
  }

  void tick(double) {
    ++snapshot_.ticks;
    snapshot_.result = Recurse(depth_);
  }

  const Snapshot& snapshot() const { return snapshot_; }

 private:
  explicit Recursive(std::uint32_t depth) : depth_(depth) {}

  std::uint32_t depth_;
  Snapshot snapshot_;
};

TESSERA_SHARD(Recursive);
