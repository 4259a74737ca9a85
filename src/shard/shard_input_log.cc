// ShardHost's input logs (shard_host.h "Input logs", docs/record-replay.md):
// what a shard of a recording kind appends to its InputLog: a run header
// at every start and reload, each tick's record, its saves, and what
// becomes of the log when the shard stops.
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "shard/hosted_shard.h"
#include "shard/input_log.h"
#include "shard/input_log_files.h"
#include "shard/replay.h"
#include "shard/shard_host.h"

namespace tessera::shard {

void ShardHost::StartInputLog(HostedShard& shard, const std::string* state,
                              uint64_t tick, bool reload) {
  const KindConfig& config = shard.kind->config;
  if (!config.record_inputs || options_.input_log_dir.empty()) return;
  if (shard.input_log == nullptr) {
    InputLogOptions options;
    options.ring_bytes = uint64_t{config.record_mb} << 20;
    Result<std::unique_ptr<InputLog>> opened =
        InputLog::Open(std::make_unique<DiskLogFiles>(
                           std::filesystem::path(options_.input_log_dir) /
                           InputLogDirName(shard.id)),
                       options);
    if (!opened.ok()) {
      DropInputLog(shard, opened.status());
      return;
    }
    shard.input_log = std::move(opened).value();
  }
  RunRecord run;
  // A reload is a run of its own in the log (another module), numbered on
  // from the shard's tick count.
  run.run_id = reload ? NewRunId() : shard.run_id;
  run.kind = config.name;
  {
    std::lock_guard<std::mutex> lock(shard.mu);
    run.module_version = shard.info.module_version;
  }
  run.params = shard.params;
  run.restored = state != nullptr;
  SaveRecord initial;
  if (state != nullptr) {
    initial.tick = tick;
    initial.state = *state;
  }
  Status begun =
      shard.input_log->BeginRun(run, state != nullptr ? &initial : nullptr);
  if (begun.ok()) begun = shard.input_log->Sync();
  if (!begun.ok()) DropInputLog(shard, begun);
}

void ShardHost::LogTick(HostedShard& shard, uint64_t tick,
                        std::vector<PendingInput>& inputs, int64_t dt_us,
                        const StepResult& step, bool snapshot_taken,
                        bool messages) {
  if (shard.input_log == nullptr) return;
  TickRecord record;
  record.tick = tick;
  record.dt_us = dt_us;
  record.fuel = step.fuel;
  record.snapshot_taken = snapshot_taken;
  record.messages = messages;
  if (snapshot_taken && step.outcome.stop != StopReason::kFailed) {
    record.snapshot_hash = SnapshotHash(step.snapshot);
  }
  record.stop = static_cast<uint8_t>(step.outcome.stop);
  record.message = step.outcome.message;
  record.inputs.reserve(inputs.size());
  for (PendingInput& in : inputs) {
    record.inputs.push_back(LoggedInput{std::move(in.subscriber), in.seq,
                                        std::move(in.bytes),
                                        std::move(in.rewind)});
  }
  // Group commit: one sync per tick, before the tick's frame (and the
  // ACKs in it) goes out, so no acknowledged input can be lost.
  Status written = shard.input_log->Append(record);
  if (written.ok()) written = shard.input_log->Sync();
  if (!written.ok()) DropInputLog(shard, written);
}

void ShardHost::LogSave(HostedShard& shard, const std::string& state,
                        bool checkpoint) {
  if (shard.input_log == nullptr) return;
  Status written =
      shard.input_log->Append(SaveRecord{shard.guest->ticks(), state});
  if (written.ok()) written = shard.input_log->Sync();
  if (!written.ok()) {
    DropInputLog(shard, written);
    return;
  }
  if (!checkpoint || !shard.guest->has_restore()) return;
  GuestEnv env;
  MakeGuestEnv(shard, &env);
  Result<std::unique_ptr<GuestShard>> fresh = GuestShard::Restore(
      shard.module, shard.kind->config, shard.id, shard.params, state, env);
  if (!fresh.ok()) {
    // It keeps its instance; a replay from this save would not start.
    DropInputLog(shard, Status(fresh.status().code(),
                               "the module did not restore its own save (" +
                                   fresh.status().message() + ")"));
    return;
  }
  (*fresh)->ContinueFrom(shard.guest->ticks(), shard.guest->fuel_used());
  shard.guest = std::move(fresh).value();
}

void ShardHost::CatchUpFromLog(const KindEntry& kind, std::string_view id,
                               std::string_view params,
                               const guest::SandboxEnv& env,
                               std::unique_ptr<GuestShard>* guest,
                               std::string* state, uint64_t* tick) {
  if (!kind.config.record_inputs || options_.input_log_dir.empty()) return;
  const std::string who = "shard \"" + std::string(id) + "\"";
  DiskLogFiles files(std::filesystem::path(options_.input_log_dir) /
                     InputLogDirName(id));
  Result<ReadLog> log = ReadInputLog(files);
  if (!log.ok()) {
    HostLog(id, who + " input log: " + log.status().message() +
                    "; restored from its save alone");
    return;
  }
  if (log->runs.empty() || log->runs.back().ticks.empty()) return;
  const LoggedRun& run = log->runs.back();
  if (run.run.module_version != kind.version) {
    HostLog(id, who + ": its logged ticks ran another module (" +
                    run.run.module_version + "); restored from its save alone");
    return;
  }
  const SaveRecord* from = nullptr;
  for (auto it = run.saves.rbegin(); it != run.saves.rend(); ++it) {
    if (it->state == *state) {
      from = &*it;
      break;
    }
  }
  if (from == nullptr) {
    HostLog(id, who +
                    ": its input log does not hold the state it was "
                    "saved with; restored from its save alone");
    return;
  }
  const uint64_t last = run.ticks.back().tick;
  if (last <= from->tick) return;
  ReplayRequest request;
  request.from = from->tick + 1;
  request.to = last;
  request.module = kind.module;
  request.kind = kind.config;
  request.shard_id = std::string(id);
  request.env = env;
  std::unique_ptr<GuestShard> replayed;
  Result<ReplaySummary> summary = Replay(
      run, request, [](const ReplayedTick&) {}, &replayed);
  Result<std::optional<std::string>> saved =
      summary.ok() && replayed->outcome().running()
          ? replayed->Save()
          : Result<std::optional<std::string>>(std::optional<std::string>());
  if (!summary.ok() || !saved.ok() || !saved->has_value()) {
    HostLog(id, who + ": its logged ticks did not run again (" +
                    (summary.ok() ? replayed->outcome().message
                                  : summary.status().message()) +
                    "); restored from its save alone");
    return;
  }
  Result<std::unique_ptr<GuestShard>> fresh =
      GuestShard::Restore(kind.module, kind.config, id, params, **saved, env);
  if (!fresh.ok()) {
    HostLog(id, who + ": " + fresh.status().message() +
                    "; restored from its save alone");
    return;
  }
  (*fresh)->ContinueFrom(last, replayed->fuel_used());
  *guest = std::move(fresh).value();
  *state = std::move(**saved);
  *tick = last;
  HostLog(id, who + " ran its " + std::to_string(last - from->tick) +
                  " logged ticks since its save again (to tick " +
                  std::to_string(last) + ")" +
                  (summary->diverged > 0
                       ? "; " + std::to_string(summary->diverged) +
                             " of them differed from the record"
                       : std::string()));
}

void ShardHost::EndInputLog(HostedShard& shard, StopReason reason) {
  if (shard.input_log == nullptr) return;
  const bool keep = reason == StopReason::kFailed ||
                    reason == StopReason::kFinished ||
                    reason == StopReason::kFenced;
  Status done = keep ? shard.input_log->Sync() : shard.input_log->Clear();
  if (!done.ok()) {
    HostLog(shard.id,
            "shard \"" + shard.id + "\" input log: " + done.message());
  } else if (keep && reason == StopReason::kFailed) {
    HostLog(shard.id, "shard \"" + shard.id +
                          "\" failed; its input log is kept for tessera "
                          "replay");
  }
  shard.input_log.reset();
}

void ShardHost::DropInputLog(HostedShard& shard, const Status& error) {
  HostLog(shard.id, "shard \"" + shard.id + "\" input log: " + error.message() +
                        "; the shard goes on without it");
  shard.input_log.reset();
}

}  // namespace tessera::shard
