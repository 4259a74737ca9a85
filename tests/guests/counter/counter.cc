// Test guest "counter": deterministic, with every optional export.
//   params   {"start": int}                 (default 0)
//   inputs   {"add": {"n": int}}            n <= 0 is rejected: "n must be
//   positive"
//            {"finish": {}}                 calls finish("done")
//   tick     increments ticks
//   snapshot {"value": int, "ticks": int, "last_sid": string}
//   save/restore the snapshot's fields (MessagePack).
// Built again as "counter2" (tests/guests/counter2) with COUNTER_ADD_FACTOR
// 10: the same state, another behaviour (add n adds 10 n), for hot reload.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "tessera/shard_sdk.h"

#ifndef COUNTER_ADD_FACTOR
#define COUNTER_ADD_FACTOR 1
#endif

struct Params {
  std::int64_t start = 0;
};
TESSERA_FIELDS(Params, start);

struct Add {
  std::int64_t n = 0;
};
TESSERA_FIELDS(Add, n);

struct Finish {};
TESSERA_FIELDS(Finish);

using Input = std::variant<Add, Finish>;

struct State {
  std::int64_t value = 0;
  std::int64_t ticks = 0;
  std::string last_sid;
};
TESSERA_FIELDS(State, value, ticks, last_sid);

class Counter {
 public:
  static tessera::Result<Counter> init(std::string_view, Params params) {
    Counter counter;
    counter.state_.value = params.start;
    return counter;
  }

  tessera::Status apply_input(std::string_view sid, Input input) {
    if (const Add* add = std::get_if<Add>(&input)) {
      if (add->n <= 0) return tessera::Error("n must be positive");
      state_.value += add->n * COUNTER_ADD_FACTOR;
    } else {
      tessera::finish("done");
    }
    state_.last_sid.assign(sid.data(), sid.size());
    return tessera::Status();
  }

  void tick(double) { ++state_.ticks; }

  const State& snapshot() const { return state_; }

  State save() const { return state_; }

  static tessera::Result<Counter> restore(std::string_view, Params,
                                          State state) {
    Counter counter;
    counter.state_ = std::move(state);
    return counter;
  }

 private:
  State state_;
};

TESSERA_SHARD(Counter);
