// `tessera replay APP-DIR --shard ID --from TICK --to TICK
//  [--module NEW.wasm] [--fail-on-divergence]`: re-runs ticks FROM..TO of a
// shard whose kind records its inputs ("recordInputs", docs/
// record-replay.md), from its input log under APP-DIR/.tessera/inputlog/,
// with no server: from the nearest save before FROM (or init), the logged
// inputs and dts go to the deterministic sandbox, and each tick is compared
// with what was recorded (fuel, snapshot hash, outcome).
//
// Output (stdout), one JSON object per line for each tick FROM..TO:
//   {"tick":N,"dtUs":50000,"inputs":[{"subscriber","seq","input":<decoded>,
//    "accepted":bool[,"rejection"]}],"snapshot":<decoded>,"fuel":F,
//    "recordedFuel":F,"match":true}
// with "diverged":["fuel","snapshot","outcome"] instead of a match, and
// "stopped"/"message" when the tick stopped the shard (a trap: "failed"
// and its failure line); then one summary line {"replay":{...}}.
// Notes (the starting point, skipped log bytes, divergence) go to stderr.
//
// Exit code: 0 when the replay ran and matched the record (a reproduced
// trap included) or --module was given (divergence expected, reported);
// 2 when it diverged (with --module only with --fail-on-divergence); 1 for
// any error (no log, range not held, module refused).
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/local_shard.h"
#include "common/clock.h"
#include "guest/log_drain.h"
#include "guest/watchdog.h"
#include "shard/input_log.h"
#include "shard/input_log_files.h"
#include "shard/replay.h"

namespace tessera::cli {
namespace {

namespace fs = std::filesystem;
using ordered_json = nlohmann::ordered_json;

struct ReplayArgs {
  std::string app_dir;
  std::string shard;
  uint64_t from = 0;
  uint64_t to = 0;
  std::string module;
  bool fail_on_divergence = false;
};

ordered_json TickLine(const shard::ReplayedTick& t, shard::Codec codec) {
  const shard::TickRecord& rec = *t.recorded;
  ordered_json inputs = ordered_json::array();
  for (size_t i = 0; i < rec.inputs.size(); ++i) {
    ordered_json in = {{"subscriber", rec.inputs[i].subscriber},
                       {"seq", rec.inputs[i].seq},
                       {"input", DecodeSnapshot(rec.inputs[i].bytes, codec)}};
    if (i < t.step.inputs.size()) {
      in["accepted"] = t.step.inputs[i].accepted;
      if (!t.step.inputs[i].accepted) {
        in["rejection"] = t.step.inputs[i].rejection;
      }
    }
    inputs.push_back(std::move(in));
  }
  ordered_json line = {
      {"tick", rec.tick}, {"dtUs", rec.dt_us}, {"inputs", std::move(inputs)}};
  if (t.step.outcome.stop != shard::StopReason::kFailed && rec.snapshot_taken) {
    line["snapshot"] = DecodeSnapshot(t.step.snapshot, codec);
  }
  line["fuel"] = t.step.fuel;
  line["recordedFuel"] = rec.fuel;
  if (rec.messages) line["messagesNotReplayed"] = true;
  if (t.diverged()) {
    ordered_json what = ordered_json::array();
    if (!t.fuel_matches) what.push_back("fuel");
    if (!t.snapshot_matches) what.push_back("snapshot");
    if (!t.outcome_matches) what.push_back("outcome");
    line["diverged"] = std::move(what);
  } else {
    line["match"] = true;
  }
  if (!t.step.outcome.running()) {
    line["stopped"] = shard::StopReasonName(t.step.outcome.stop);
    line["message"] = t.step.outcome.message;
  }
  return line;
}

std::string Describe(const shard::ReplayedTick& t) {
  const shard::TickRecord& rec = *t.recorded;
  std::string what;
  if (!t.fuel_matches) {
    what += "fuel " + std::to_string(t.step.fuel) + " (recorded " +
            std::to_string(rec.fuel) + ")";
  }
  if (!t.snapshot_matches)
    what += std::string(what.empty() ? "" : ", ") + "snapshot";
  if (!t.outcome_matches) {
    what += std::string(what.empty() ? "" : ", ") + "outcome \"" +
            t.step.outcome.message + "\" (recorded \"" + rec.message + "\")";
  }
  return "tick " + std::to_string(rec.tick) + " differs: " + what;
}

int Replay(const ReplayArgs& args) {
  const fs::path dir = fs::path(args.app_dir) / ".tessera" / "inputlog" /
                       shard::InputLogDirName(args.shard);
  shard::DiskLogFiles files(dir);
  Result<shard::ReadLog> log = shard::ReadInputLog(files);
  if (!log.ok()) {
    std::cerr << "error: " << log.status().message() << "\n";
    return 1;
  }
  for (const std::string& note : log->notes) {
    std::cerr << "note: " << note << "\n";
  }
  if (log->runs.empty()) {
    std::cerr << "error: no input log for shard \"" << args.shard << "\" in "
              << dir.string()
              << " (its kind needs \"recordInputs\": true; a shard that "
                 "stopped idle or on request leaves none)\n";
    return 1;
  }
  Result<const shard::LoggedRun*> run =
      shard::SelectRun(*log, args.from, args.to);
  if (!run.ok()) {
    std::cerr << "error: " << run.status().message() << "\n";
    return 1;
  }
  const shard::RunRecord& header = (*run)->run;
  Result<AppKind> kind = ResolveKind(args.app_dir, header.kind, false);
  if (!kind.ok()) {
    std::cerr << "error: " << kind.status().message() << "\n";
    return 1;
  }
  Result<server::LoadedKind> module = LoadKind(*kind, args.module);
  if (!module.ok()) {
    std::cerr << "error: " << module.status().message() << "\n";
    return 1;
  }
  const bool same_module = module->version == header.module_version;
  if (!same_module) {
    std::cerr << "note: the module replayed (" << module->version
              << ") is not the one recorded (" << header.module_version
              << "): divergence is expected\n";
  }

  guest::Watchdog watchdog(RealClock::Get());
  watchdog.Start();
  shard::ReplayRequest request;
  request.from = args.from;
  request.to = args.to;
  request.module = module->module;
  request.kind = kind->spec.config;
  request.shard_id = args.shard;
  request.follow_checkpoints = same_module;
  request.env.watchdog = &watchdog;
  request.env.forward_log = [source = "shard " + args.shard](
                                int level, std::string_view text) {
    guest::LogDrain::WriteToStderr(guest::LogDrain::FormatLine(
        source, level, text, shard::GuestShard::kMaxLogLineBytes));
  };
  const shard::Codec codec = request.kind.codec;
  Result<shard::ReplaySummary> summary =
      shard::Replay(**run, request, [&](const shard::ReplayedTick& t) {
        if (t.diverged()) std::cerr << "divergence: " << Describe(t) << "\n";
        if (t.shown) std::cout << Dump(TickLine(t, codec)) << "\n";
      });
  if (!summary.ok()) {
    std::cerr << "error: " << summary.status().message() << "\n";
    return 1;
  }
  std::cout << Dump(
                   ordered_json{{"replay",
                                 {{"shard", args.shard},
                                  {"from", args.from},
                                  {"to", args.to},
                                  {"startedFrom",
                                   summary->from_save
                                       ? "save at tick " +
                                             std::to_string(summary->start_tick)
                                       : std::string("init")},
                                  {"ticks", summary->ticks_run},
                                  {"diverged", summary->diverged},
                                  {"module", module->version},
                                  {"recordedModule", header.module_version}}}})
            << "\n";
  std::cout.flush();
  if (summary->diverged == 0) return 0;
  return (args.module.empty() || args.fail_on_divergence) ? 2 : 0;
}

}  // namespace

void RegisterReplayCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<ReplayArgs>();
  CLI::App* replay = app.add_subcommand(
      "replay",
      "Replay recorded ticks of a shard (its kind sets recordInputs) from its "
      "input log, checking them against the record");
  replay
      ->add_option("APP-DIR", args->app_dir,
                   "App directory holding tessera.json")
      ->required();
  replay->add_option("--shard", args->shard, "The shard's id")->required();
  replay->add_option("--from", args->from, "First tick to print")
      ->required()
      ->check(CLI::PositiveNumber);
  replay->add_option("--to", args->to, "Last tick to run")->required();
  replay->add_option("--module", args->module,
                     "Replay the same inputs on this .wasm instead of the "
                     "kind's module (divergence reported, exit 0)");
  replay->add_flag("--fail-on-divergence", args->fail_on_divergence,
                   "With --module: exit 2 when it diverges");
  replay->callback([args, exit_code] { *exit_code = Replay(*args); });
}

}  // namespace tessera::cli
