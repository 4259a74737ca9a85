// `tessera run APP-DIR --kind K [--params JSON] --ticks N [--inputs FILE]
//  [--shard-id ID]`: runs one shard of an app locally, synchronously, with
// no server: builds the kind if it is a source kind, loads its module
// (cached under APP-DIR/.tessera/cache), creates a GuestShard and drives N
// ticks back to back with dt = 1 / tickRate (no sleeping; the kind's limits
// all apply, the watchdog included).
//
// Output (stdout), one JSON object per line:
//   {"tick":N,"snapshot":<snapshot decoded to JSON>,"inputs":[
//      {"subscriber":"alice","accepted":true} |
//      {"subscriber":"bob","accepted":false,"rejection":"..."}]}
// and, when the shard stops: {"stopped":"finished"|"failed","message":"..."}.
// Ticks count from 1; an input line {"tick":3,"subscriber":"alice",
// "input":{...}} of the --inputs JSONL file is applied just before tick 3.
// Build progress and errors go to stderr.
//
// Exit code: 0 when the ticks ran (or the module finished); 1 when the shard
// failed or anything before it did (manifest, build, load, init).
#include <cstdint>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/local_shard.h"
#include "common/clock.h"
#include "common/status.h"
#include "guest/log_drain.h"
#include "guest/watchdog.h"
#include "shard/guest_shard.h"
#include "shard/shard_types.h"

namespace tessera::cli {
namespace {

using json = nlohmann::json;
// Output objects keep their keys in the documented order.
using ordered_json = nlohmann::ordered_json;

struct RunArgs {
  std::string app_dir;
  std::string kind;
  std::string params;  // JSON; empty means "no params"
  uint64_t ticks = 0;
  std::string inputs_file;
  std::string shard_id = "local";
};

// Encodes a JSON value in the kind's codec.
std::string Encode(const json& value, shard::Codec codec) {
  if (codec == shard::Codec::kJson) return Dump(value);
  std::vector<uint8_t> bytes = json::to_msgpack(value);
  return std::string(bytes.begin(), bytes.end());
}

// Inputs of the JSONL file by tick, in file order, encoded in `codec`.
Result<std::map<uint64_t, std::vector<shard::PendingInput>>> ReadInputs(
    const std::string& file, shard::Codec codec) {
  std::map<uint64_t, std::vector<shard::PendingInput>> by_tick;
  if (file.empty()) return by_tick;
  std::ifstream in(file);
  if (!in) return IoError("cannot open " + file);
  std::string line;
  uint64_t line_no = 0, seq = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = file + ":" + std::to_string(line_no) + ": ";
    json entry = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (entry.is_discarded() || !entry.is_object()) {
      return InvalidArgument(where + "not a JSON object");
    }
    auto tick = entry.find("tick");
    auto subscriber = entry.find("subscriber");
    auto input = entry.find("input");
    if (tick == entry.end() || !tick->is_number_unsigned() ||
        tick->get<uint64_t>() == 0) {
      return InvalidArgument(where + "\"tick\" must be an integer >= 1");
    }
    if (subscriber == entry.end() || !subscriber->is_string()) {
      return InvalidArgument(where + "\"subscriber\" must be a string");
    }
    if (input == entry.end()) {
      return InvalidArgument(where + "\"input\" is missing");
    }
    by_tick[tick->get<uint64_t>()].push_back(shard::PendingInput{
        subscriber->get<std::string>(), ++seq, Encode(*input, codec), {}, {}});
  }
  if (in.bad()) return IoError("cannot read " + file);
  return by_tick;
}

void PrintStopped(const shard::TickOutcome& outcome) {
  std::cout << Dump(ordered_json{
                   {"stopped", shard::StopReasonName(outcome.stop)},
                   {"message", outcome.message}})
            << "\n";
}

int Run(const RunArgs& args) {
  Result<AppKind> kind = ResolveKind(args.app_dir, args.kind, true);
  if (!kind.ok()) {
    std::cerr << "error: " << kind.status().message() << "\n";
    return 1;
  }
  const shard::KindConfig& config = kind->spec.config;

  std::string params;
  if (!args.params.empty()) {
    json value = json::parse(args.params, nullptr, /*allow_exceptions=*/false);
    if (value.is_discarded()) {
      std::cerr << "error: --params is not valid JSON\n";
      return 1;
    }
    params = Encode(value, config.codec);
  }
  auto inputs = ReadInputs(args.inputs_file, config.codec);
  if (!inputs.ok()) {
    std::cerr << "error: " << inputs.status().message() << "\n";
    return 1;
  }

  auto module = LoadKind(*kind);
  if (!module.ok()) {
    std::cerr << "error: " << module.status().message() << "\n";
    return 1;
  }

  guest::Watchdog watchdog(RealClock::Get());
  watchdog.Start();
  shard::GuestEnv env;
  env.watchdog = &watchdog;
  // Written at once (one process, one shard, the developer's terminal: the
  // lines stay in step with the snapshots), but cut and escaped as the
  // server does.
  env.forward_log = [source = "shard " + args.shard_id](int level,
                                                        std::string_view text) {
    guest::LogDrain::WriteToStderr(guest::LogDrain::FormatLine(
        source, level, text, shard::GuestShard::kMaxLogLineBytes));
  };
  auto guest = shard::GuestShard::Create(module->module, config, args.shard_id,
                                         params, env);
  if (!guest.ok()) {
    std::cerr << "error: the shard did not start: " << guest.status().message()
              << "\n";
    return 1;
  }
  shard::GuestShard& g = **guest;

  const int64_t dt_us =
      1000000 / (config.tick_rate == 0 ? 1 : config.tick_rate);
  static const std::vector<shard::PendingInput> kNoInputs;
  for (uint64_t tick = 1; tick <= args.ticks; ++tick) {
    auto it = inputs->find(tick);
    const auto& pending = it == inputs->end() ? kNoInputs : it->second;
    shard::StepResult step = g.Step(pending, dt_us);
    if (step.outcome.stop != shard::StopReason::kFailed) {
      ordered_json results = ordered_json::array();
      for (size_t i = 0; i < step.inputs.size(); ++i) {
        ordered_json r = {{"subscriber", pending[i].subscriber},
                          {"accepted", step.inputs[i].accepted}};
        if (!step.inputs[i].accepted) {
          r["rejection"] = step.inputs[i].rejection;
        }
        results.push_back(std::move(r));
      }
      std::cout << Dump(ordered_json{{"tick", tick},
                                     {"snapshot", DecodeSnapshot(step.snapshot,
                                                                 config.codec)},
                                     {"inputs", std::move(results)}})
                << "\n";
    }
    if (!step.outcome.running()) {
      PrintStopped(step.outcome);
      std::cout.flush();
      return step.outcome.stop == shard::StopReason::kFailed ? 1 : 0;
    }
  }
  std::cout.flush();
  return 0;
}

}  // namespace

void RegisterRunCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* run = app.add_subcommand(
      "run",
      "Run one shard of an app locally for N ticks, printing each tick's "
      "snapshot as a JSON line");
  run->add_option("APP-DIR", args->app_dir,
                  "App directory holding tessera.json")
      ->required();
  run->add_option("-k,--kind", args->kind, "The shard kind to run")->required();
  run->add_option("-p,--params", args->params,
                  "Params as JSON (converted to the kind's codec)");
  run->add_option("-n,--ticks", args->ticks, "How many ticks to run")
      ->required();
  run->add_option("-i,--inputs", args->inputs_file,
                  "JSONL file of inputs: {\"tick\":3,\"subscriber\":\"alice\","
                  "\"input\":{...}}");
  run->add_option("--shard-id", args->shard_id, "The shard's id")
      ->capture_default_str();
  run->callback([args, exit_code] { *exit_code = Run(*args); });
}

}  // namespace tessera::cli
