// Test guest "lagcomp_raw": a replicated shard exporting a hand-written
// tessera_lag_compensation (the SDK would refuse these shapes) and no
// tessera_apply_input_at, for the host's start checks.
//
//   params  {"history": int, "delay": int, "size": int}
//     tessera_lag_compensation returns kOk with `u32 history, u32 delay`
//     (defaults 10 and 0) cut or zero-padded to `size` bytes (default 8)
//   inputs  {"noop": {}}; snapshot 0; one replicated entity 1 at (0, 0, 0).
#include <cstdint>
#include <string>
#include <string_view>

#include "tessera/shard_sdk.h"

struct Params {
  std::uint32_t history = 10;
  std::uint32_t delay = 0;
  std::uint32_t size = 8;
};
TESSERA_FIELDS(Params, history, delay, size);

struct Noop {};
TESSERA_FIELDS(Noop);

Params& Config() {
  static Params* params = new Params();
  return *params;
}

class LagCompRaw {
 public:
  static tessera::Result<LagCompRaw> init(std::string_view, Params params) {
    Config() = params;
    LagCompRaw shard;
    shard.store_.set_pos(1, 0, 0, 0);
    return shard;
  }
  tessera::Status apply_input(std::string_view, Noop) { return {}; }
  void tick(double) {}
  int snapshot() const { return 0; }
  tessera::Replicated* replicated() { return &store_; }

 private:
  tessera::Replicated store_;
};

TESSERA_SHARD(LagCompRaw);

extern "C" TESSERA_DETAIL_EXPORT("tessera_lag_compensation") std::int32_t
    lagcomp_raw_config() {
  std::string& out = tessera::detail::runtime().output;
  out.clear();
  tessera::detail::BinaryWriter w(out);
  w.u32(Config().history);
  w.u32(Config().delay);
  out.resize(Config().size, '\0');
  return tessera::abi::kOk;
}
