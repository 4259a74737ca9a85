// What an aiming load-test bot sees (`tessera bench shard --aim`): the
// replicated entities drawn the way the TypeScript client draws them, so
// that the bot shoots at what a player's screen would show.
//
// - TickClock estimates the shard's current (fractional) tick from the
//   arrival times of its FRAMEs, anchored on the least-delayed frame of a
//   sliding window (clients/ts/src/game/clock.ts with a given tick rate).
// - Picture keeps one state per received FRAME (the decoded entities and
//   their incarnations) and renders at a fractional tick with the rules of
//   clients/ts/src/game/timeline.ts EntityTimeline.render: the last state A
//   at or before the render tick and the next one B; the entities of A;
//   each one B holds as the same incarnation moves linearly from its A to
//   its B position by t = clamp((r - A) / (B - A), 0, 1); no B: hold A.
//   That is also what the shard's lag-compensation history replays
//   (replication/sent_history.h), so the positions match exactly.
//
// Pure code: time is passed in. Not thread-safe (one bot's thread).
#ifndef TESSERA_LOADTEST_PICTURE_H_
#define TESSERA_LOADTEST_PICTURE_H_

#include <cstdint>
#include <deque>
#include <optional>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "replication/decoder.h"

namespace tessera::loadtest {

class TickClock {
 public:
  // `tick_ms`: the shard's nominal tick duration (> 0).
  explicit TickClock(double tick_ms);

  // The FRAME of `tick` arrived at local time `at_ms`. A tick older than
  // the last one starts over (a restarted shard); a repeated one is ignored.
  void Observe(uint64_t tick, double at_ms);
  // The shard's estimated tick at local time `now_ms`; nullopt before the
  // first frame.
  std::optional<double> TickAt(double now_ms) const;
  double tick_ms() const { return tick_ms_; }

 private:
  struct Sample {
    uint64_t tick;
    double at;
  };
  double LeastDelayedArrival(uint64_t tick) const;

  const double tick_ms_;
  std::deque<Sample> samples_;
  bool window_full_ = false;
  std::optional<double> ref_at_;  // tick ref_tick_ is current at ref_at_
  uint64_t ref_tick_ = 0;
  double last_at_ = 0;
};

// One entity as drawn.
struct DrawnPosition {
  uint64_t id = 0;
  double x = 0, y = 0, z = 0;
};

class Picture {
 public:
  // `max_states`: most received ticks kept (the oldest go first).
  explicit Picture(size_t max_states = 600) : max_states_(max_states) {}

  // Applies the `entities` payload of the FRAME of `tick` and records the
  // state after it. A payload before the first BASELINE is ignored (OK).
  // Errors: kInvalidArgument for a malformed payload (the picture then
  // waits for a new BASELINE, as the decoder does; reconnect).
  Status Push(uint64_t tick, std::string_view payload);

  // Draws at the fractional `render_tick` (prunes the states before the
  // one drawn as "from"). Returns the tick drawn: the render tick clamped
  // to [from, to] of the states it fell between, what the client stamps
  // on its inputs as view_tick; nullopt before any state.
  std::optional<double> Render(double render_tick);

  // Of the last Render: every drawn entity (ascending ids), and one.
  const std::vector<DrawnPosition>& drawn() const { return drawn_; }
  std::optional<DrawnPosition> Find(uint64_t id) const;

  size_t states() const { return states_.size(); }

 private:
  struct Held {
    uint64_t id;
    uint64_t gen;  // incarnation
    double x, y, z;
  };
  struct State {
    uint64_t tick;
    std::vector<Held> entities;  // ascending ids
  };
  static const Held* FindIn(const std::vector<Held>& held, uint64_t id);

  const size_t max_states_;
  replication::Decoder decoder_;
  std::deque<State> states_;
  std::vector<Held> current_;  // at the newest received tick
  bool has_current_ = false;
  uint64_t next_gen_ = 1;
  std::vector<DrawnPosition> drawn_;
};

}  // namespace tessera::loadtest

#endif  // TESSERA_LOADTEST_PICTURE_H_
