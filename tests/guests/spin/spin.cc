// Test guest "spin": burns CPU in tick, for fuel and wall-clock limits.
//   params   {"mode": "loop" | "long" | other, "iterations": int}
//            loop: every tick runs forever; long: every tick runs
//            `iterations` (default 100000000) steps of arithmetic; any other
//            mode ticks normally.
//   inputs   {"noop": {}}, {"work": {"iterations": int}} (that many steps of
//            arithmetic in apply_input)
//   snapshot {"ticks": int, "mode": string}
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "tessera/shard_sdk.h"

struct Params {
  std::string mode;
  std::int64_t iterations = 100000000;
};
TESSERA_FIELDS(Params, mode, iterations);

struct Noop {};
TESSERA_FIELDS(Noop);

struct Work {
  std::int64_t iterations = 0;
};
TESSERA_FIELDS(Work, iterations);

using Input = std::variant<Noop, Work>;

struct Snapshot {
  std::int64_t ticks = 0;
  std::string mode;
};
TESSERA_FIELDS(Snapshot, ticks, mode);

// Volatile so the compiler can neither drop nor shorten the loops.
volatile std::uint64_t g_work = 0;

class Spin {
 public:
  static tessera::Result<Spin> init(std::string_view, Params params) {
    return Spin(std::move(params));
  }

  tessera::Status apply_input(std::string_view, Input input) {
    if (const Work* work = std::get_if<Work>(&input)) {
      for (std::int64_t i = 0; i < work->iterations; ++i) {
        g_work = g_work * 31 + static_cast<std::uint64_t>(i);
      }
    }
    return tessera::Status();
  }

  void tick(double) {
    ++ticks_;
    if (params_.mode == "loop") {
      for (;;) g_work = g_work + 1;
    }
    if (params_.mode == "long") {
      for (std::int64_t i = 0; i < params_.iterations; ++i) {
        g_work = g_work * 31 + static_cast<std::uint64_t>(i);
      }
    }
  }

  Snapshot snapshot() const { return Snapshot{ticks_, params_.mode}; }

 private:
  explicit Spin(Params params) : params_(std::move(params)) {}

  Params params_;
  std::int64_t ticks_ = 0;
};

TESSERA_SHARD(Spin);
