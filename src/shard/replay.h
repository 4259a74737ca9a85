// Replay of a recorded stretch of a shard's run (docs/record-replay.md):
// from the nearest save at or before the first tick wanted (or the run's
// init when it started from params and the log still holds its first
// tick), the logged inputs and dts go to a fresh GuestShard, tick by tick,
// and each tick's fuel, snapshot hash and outcome are compared with the
// record. The sandbox is deterministic, so the same module gives the same
// ticks bit for bit; a difference is a divergence (expected with another
// module).
//
// What the log does not hold is not replayed: messages from other shards
// (a tick that had them is flagged), keyed call results, transfers and the
// per-subscriber view hooks; a kind using them may diverge, and the replay
// says where. Failures of wall-clock limits (watchdog, tick budget) are not
// deterministic either.
#ifndef TESSERA_SHARD_REPLAY_H_
#define TESSERA_SHARD_REPLAY_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "shard/guest_shard.h"
#include "shard/input_log.h"

namespace tessera::shard {

struct ReplayRequest {
  uint64_t from = 1;  // first tick shown
  uint64_t to = 1;    // last tick run
  std::shared_ptr<const wasm::CompiledModule> module;
  KindConfig kind;
  std::string shard_id;
  GuestEnv env;
  // Restore from every save in the stretch as the recorded shard did (its
  // checkpoints, ShardHost::LogSave); off for another module, which then
  // runs on from its own state.
  bool follow_checkpoints = true;
};

struct ReplayedTick {
  const TickRecord* recorded = nullptr;  // in the run given to Replay
  bool shown = false;                    // tick >= from
  StepResult step;
  bool fuel_matches = false;
  bool snapshot_matches = false;  // hash (or both not taken)
  bool outcome_matches = false;   // stop reason and message
  bool diverged() const {
    return !fuel_matches || !snapshot_matches || !outcome_matches;
  }
};

struct ReplaySummary {
  uint64_t start_tick = 0;  // the save it began from (0: init or tick 0)
  bool from_save = false;
  uint64_t ticks_run = 0;
  uint64_t diverged = 0;          // ticks that differ from the record
  uint64_t first_divergence = 0;  // its tick, when diverged > 0
};

// The run of `log` to replay [from, to] from: the newest one that has
// tick `to` recorded. Errors: kNotFound listing the runs' tick ranges.
Result<const LoggedRun*> SelectRun(const ReadLog& log, uint64_t from,
                                   uint64_t to);

// Replays ticks up to request.to of `run`, calling `on_tick` for each
// (shown or not) in order; stops after a tick that stops the shard.
// Errors: kInvalidArgument (from > to), kNotFound (no starting point, or
// a tick missing from the log), and the module's start errors (restore
// refused, init failed).
// With `last`, the instance after the last tick is handed over there (a
// restarting host goes on from it: ShardHost's catch-up).
Result<ReplaySummary> Replay(
    const LoggedRun& run, const ReplayRequest& request,
    const std::function<void(const ReplayedTick&)>& on_tick,
    std::unique_ptr<GuestShard>* last = nullptr);

}  // namespace tessera::shard

#endif  // TESSERA_SHARD_REPLAY_H_
