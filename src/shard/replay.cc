#include "shard/replay.h"

#include <algorithm>
#include <utility>

namespace tessera::shard {
namespace {

std::string Range(const LoggedRun& run) {
  if (run.ticks.empty()) return "no ticks";
  return "ticks " + std::to_string(run.ticks.front().tick) + "-" +
         std::to_string(run.ticks.back().tick);
}

bool Holds(const LoggedRun& run, uint64_t tick) {
  return !run.ticks.empty() && run.ticks.front().tick <= tick &&
         run.ticks.back().tick >= tick;
}

std::vector<PendingInput> Inputs(const TickRecord& tick) {
  std::vector<PendingInput> inputs;
  inputs.reserve(tick.inputs.size());
  for (const LoggedInput& in : tick.inputs) {
    inputs.push_back(
        PendingInput{in.subscriber, in.seq, in.bytes, {}, in.rewind});
  }
  return inputs;
}

}  // namespace

Result<const LoggedRun*> SelectRun(const ReadLog& log, uint64_t from,
                                   uint64_t to) {
  for (auto it = log.runs.rbegin(); it != log.runs.rend(); ++it) {
    if (Holds(*it, to)) return &*it;
  }
  std::string runs;
  for (size_t i = 0; i < log.runs.size(); ++i) {
    runs += (i == 0 ? "" : "; ") + std::string("run ") + std::to_string(i + 1) +
            ": " + Range(log.runs[i]);
  }
  return NotFound("the log holds no run with ticks " + std::to_string(from) +
                  "-" + std::to_string(to) +
                  (runs.empty() ? " (it is empty)" : " (" + runs + ")"));
}

Result<ReplaySummary> Replay(
    const LoggedRun& run, const ReplayRequest& request,
    const std::function<void(const ReplayedTick&)>& on_tick,
    std::unique_ptr<GuestShard>* last) {
  if (request.from == 0 || request.from > request.to) {
    return InvalidArgument("--from must be at least 1 and at most --to");
  }
  ReplaySummary summary;
  // The newest save before `from` whose next tick the log still holds.
  const SaveRecord* save = nullptr;
  for (const SaveRecord& s : run.saves) {
    if (s.tick < request.from && (save == nullptr || s.tick >= save->tick) &&
        (Holds(run, s.tick + 1) || s.tick == request.to)) {
      save = &s;
    }
  }
  if (save == nullptr && (run.run.restored || !Holds(run, 1))) {
    return NotFound("the log holds no save at or before tick " +
                    std::to_string(request.from - 1) +
                    " to start from (its run: " + Range(run) + ", saves at " +
                    [&] {
                      std::string ticks;
                      for (const SaveRecord& s : run.saves) {
                        ticks += (ticks.empty() ? "" : ", ") +
                                 std::to_string(s.tick);
                      }
                      return ticks.empty() ? std::string("none") : ticks;
                    }() +
                    ")");
  }
  // Starts from `from` (nullptr: init) as the recorded shard did.
  const auto start =
      [&](const SaveRecord* from) -> Result<std::unique_ptr<GuestShard>> {
    Result<std::unique_ptr<GuestShard>> guest =
        from != nullptr
            ? GuestShard::Restore(request.module, request.kind,
                                  request.shard_id, run.run.params, from->state,
                                  request.env)
            : GuestShard::Create(request.module, request.kind, request.shard_id,
                                 run.run.params, request.env);
    if (!guest.ok()) {
      return Status(guest.status().code(),
                    std::string("the shard did not start from ") +
                        (from ? "its save at tick " + std::to_string(from->tick)
                              : std::string("init")) +
                        ": " + guest.status().message());
    }
    (*guest)->ContinueFrom(from != nullptr ? from->tick : 0, 0);
    return guest;
  };
  Result<std::unique_ptr<GuestShard>> guest = start(save);
  if (!guest.ok()) return guest.status();
  summary.from_save = save != nullptr;
  summary.start_tick = save != nullptr ? save->tick : 0;

  auto record = std::find_if(
      run.ticks.begin(), run.ticks.end(),
      [&](const TickRecord& t) { return t.tick == summary.start_tick + 1; });
  for (uint64_t tick = summary.start_tick + 1; tick <= request.to; ++tick) {
    if (record == run.ticks.end() || record->tick != tick) {
      return NotFound("the log holds no record of tick " +
                      std::to_string(tick));
    }
    if (request.follow_checkpoints && tick - 1 > summary.start_tick &&
        (*guest)->has_restore()) {
      for (const SaveRecord& s : run.saves) {
        if (s.tick != tick - 1) continue;
        Result<std::unique_ptr<GuestShard>> restored = start(&s);
        if (!restored.ok()) return restored.status();
        guest = std::move(restored);
        break;
      }
    }
    ReplayedTick replayed;
    replayed.recorded = &*record;
    replayed.shown = tick >= request.from;
    std::vector<PendingInput> inputs = Inputs(*record);
    replayed.step = (*guest)->Step(inputs, record->dt_us, nullptr,
                                   record->snapshot_taken, nullptr);
    const StepResult& step = replayed.step;
    replayed.fuel_matches = step.fuel == record->fuel;
    const bool taken =
        step.outcome.stop != StopReason::kFailed && record->snapshot_taken;
    replayed.snapshot_matches =
        taken ? SnapshotHash(step.snapshot) == record->snapshot_hash
              : record->stop == static_cast<uint8_t>(StopReason::kFailed) ||
                    !record->snapshot_taken;
    replayed.outcome_matches =
        static_cast<uint8_t>(step.outcome.stop) == record->stop &&
        step.outcome.message == record->message;
    ++summary.ticks_run;
    if (replayed.diverged()) {
      if (summary.diverged++ == 0) summary.first_divergence = tick;
    }
    on_tick(replayed);
    if (!step.outcome.running()) break;
    ++record;
  }
  if (last != nullptr) *last = std::move(guest).value();
  return summary;
}

}  // namespace tessera::shard
