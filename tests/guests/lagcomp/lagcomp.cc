// Test guest "lagcomp": replication and lag compensation, reporting what
// each input's Rewind said. Deterministic; no clock.
//
//   params  {"lag": bool, "replicate": bool, "history": int, "delay": int,
//            "movers": int, "budget": int}
//     lag        lag_compensation() on (default true)
//     replicate  replicated() returns the store (default true); false turns
//                replication off, which the host refuses with lag on
//     history    history_ticks (default 10); delay max_view_delay_ms
//                (default 0: the ABI's default, 250)
//     movers     entities 10, 11, ... starting at (0, 20 * (i + 1), 1),
//                each moving +1 in x per tick (default 2)
//     budget     replication max_bytes_per_tick (default 0: none)
//   precision 0.01, no interest.
//   inputs (every one but noop is refused with a report, in quotes):
//     {"noop": {}}                 accepted by both apply_input and
//                                  apply_input_at
//     {"probe": {"id": int}}       apply_input: "apply_input: probe N";
//                                  apply_input_at: "at T now N behind B: N
//                                  at (x, y, z)" or "...: N not drawn"
//     {"near": {"x", "y", "z", "radius"}}
//                                  apply_input: "apply_input: near";
//                                  apply_input_at: "at T now N behind B:
//                                  near [id id ...]"
//     numbers printed with %g.
//   snapshot {"ticks": int}
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "tessera/shard_sdk.h"

struct Params {
  bool lag = true;
  bool replicate = true;
  std::uint32_t history = 10;
  std::uint32_t delay = 0;
  std::uint32_t movers = 2;
  std::uint32_t budget = 0;
};
TESSERA_FIELDS(Params, lag, replicate, history, delay, movers, budget);

struct Noop {};
TESSERA_FIELDS(Noop);
struct Probe {
  std::uint64_t id = 0;
};
TESSERA_FIELDS(Probe, id);
struct Near {
  double x = 0;
  double y = 0;
  double z = 0;
  double radius = 0;
};
TESSERA_FIELDS(Near, x, y, z, radius);

using Input = std::variant<Noop, Probe, Near>;

struct Snapshot {
  std::uint64_t ticks = 0;
};
TESSERA_FIELDS(Snapshot, ticks);

std::string Num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

class LagComp {
 public:
  static tessera::Result<LagComp> init(std::string_view, Params params) {
    LagComp shard(params);
    for (std::uint32_t i = 0; i < params.movers; ++i) {
      shard.store_.set_pos(10 + i, 0, 20.0 * (i + 1), 1);
    }
    return shard;
  }

  tessera::Status apply_input(std::string_view, Input input) {
    if (std::holds_alternative<Probe>(input)) {
      return tessera::Error("apply_input: probe " +
                            std::to_string(std::get<Probe>(input).id));
    }
    if (std::holds_alternative<Near>(input)) {
      return tessera::Error("apply_input: near");
    }
    return {};
  }

  tessera::Status apply_input_at(std::string_view, Input input,
                                 const tessera::Rewind& rewind) {
    const std::string at = "at " + Num(rewind.tick()) + " now " +
                           std::to_string(rewind.now_tick()) + " behind " +
                           Num(rewind.ticks_behind()) + ": ";
    if (const Probe* p = std::get_if<Probe>(&input)) {
      const std::optional<tessera::Vec3> pos = rewind.position_at(p->id);
      if (!pos)
        return tessera::Error(at + std::to_string(p->id) + " not drawn");
      return tessera::Error(at + std::to_string(p->id) + " at (" + Num(pos->x) +
                            ", " + Num(pos->y) + ", " + Num(pos->z) + ")");
    }
    if (const Near* n = std::get_if<Near>(&input)) {
      std::string ids;
      for (const auto& [id, pos] :
           rewind.entities_near({n->x, n->y, n->z}, n->radius)) {
        ids += (ids.empty() ? "" : " ") + std::to_string(id);
      }
      return tessera::Error(at + "near [" + ids + "]");
    }
    return {};
  }

  void tick(double) {
    ++ticks_;
    for (std::uint32_t i = 0; i < params_.movers; ++i) {
      store_.set_pos(10 + i, static_cast<double>(ticks_), 20.0 * (i + 1), 1);
    }
  }

  Snapshot snapshot() const { return Snapshot{ticks_}; }

  tessera::Replicated* replicated() {
    return params_.replicate ? &store_ : nullptr;
  }
  tessera::ReplicationConfig replication_config() const {
    return tessera::ReplicationConfig{0.01, params_.budget, false};
  }

  std::optional<tessera::LagCompensation> lag_compensation() const {
    if (!params_.lag) return std::nullopt;
    return tessera::LagCompensation(params_.history, params_.delay);
  }

 private:
  explicit LagComp(Params params) : params_(params) {}

  Params params_;
  std::uint64_t ticks_ = 0;
  tessera::Replicated store_;
};

TESSERA_SHARD(LagComp);
