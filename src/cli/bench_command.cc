// `tessera bench`: load tests of a running server.
//
//   tessera bench shard (--join URL|FUNCTION | --shard ID) [--url URL]
//       [--join-args JSON] [--bots N]
//       [--duration S] [--rate R] [--input JSON]... [--report FILE] ...
//   tessera bench merge A.json B.json ... [--out MERGED.json]
//   tessera bench plot REPORT.json [--out CHART.svg]
//
// `shard` prints a progress line on stderr every second and a summary on
// stdout; exit code 0 when at least one bot joined, 1 when none did or the
// run could not start, 2 for a usage error. The pieces are in
// src/loadtest/.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "loadtest/driver.h"
#include "loadtest/plot.h"
#include "loadtest/report.h"
#include "server/dev_secrets.h"
#include "server/env_config.h"

namespace tessera::cli {
namespace {

using json = nlohmann::json;

struct ShardArgs {
  loadtest::LoadTestOptions options;
  std::string join;
  std::string shard;     // --shard: mint tickets for this running shard
  std::string shard_id;  // --shard-id: what join requests ask for
  std::string params;
  std::string join_args;
  int64_t aim = -1;  // --aim ENTITY; -1: none
  std::string app_dir;
  std::string report_path;
  bool quiet = false;
};

constexpr char kShardHelp[] =
    "\nMany bots (asynchronous state machines on a few threads) join, send "
    "inputs at a fixed rate and time each input until its ACK or REJECT.\n\n"
    "Tickets come from the app's join function (--join NAME, a value "
    "starting with neither / nor http: each bot signs in as a guest, POST "
    "/api/auth/guest, then calls POST /api/functions/NAME with the guest's "
    "token and {params: --join-args}, and connects with the result's "
    "{shardId, subscriberId, ticket}), from a join endpoint (--join URL or "
    "a path on --url: each bot POSTs {shard, kind?, params?, subscriber: "
    "\"bot-<n>\"} and gets {shardId, subscriberId, ticket}; the dev "
    "server's is /api/dev/join) or are "
    "minted here for a running shard (--shard ID) with the secret in "
    "TESSERA_SHARD_TICKET_SECRET. `tessera dev APP` keeps its secret in "
    "APP/.tessera/dev-secrets.json (\"ticketSecret\"):\n"
    "  export TESSERA_SHARD_TICKET_SECRET=$(sed -n "
    "'s/.*\"ticketSecret\": *\"\\([^\"]*\\)\".*/\\1/p' "
    "examples/arena/.tessera/dev-secrets.json)\n"
    "or pass --app APP to read it from there.\n\n"
    "Input templates (--input, repeatable, sent in turn) are JSON whose "
    "strings may hold \"$rand:A:B\" (a real number in [A, B)), "
    "\"$int:A:B\" (an integer in [A, B]), \"$bot\" (the bot's number) and "
    "\"$sid\" (its subscriber id); a string that is only $rand, $int or "
    "$bot becomes a number. Example:\n"
    "  tessera bench shard --join /api/dev/join --kind arena --bots 200 "
    "--input '{\"move_to\":{\"x\":\"$rand:10:700\",\"y\":\"$rand:10:400\"}}'"
    "\nWith a join function of the app (here one named joinArena):\n"
    "  tessera bench shard --join joinArena --join-args '{\"team\":\"red\"}' "
    "--bots 300 --input '{\"move_to\":{\"x\":\"$rand:10:700\",\"y\":"
    "\"$rand:10:400\"}}'"
    "\n\nAiming (--aim ENTITY): each bot decodes the replicated entities of "
    "every FRAME and draws them like @tessera/client (interpolated "
    "--interp-delay ms behind the shard's tick, estimated from the frames' "
    "arrivals at --tick-rate); \"$aim:x\", \"$aim:y\" and \"$aim:z\" "
    "become where it draws ENTITY (no input while it is not drawn) and "
    "every input carries the tick drawn as its view tick. The summary "
    "counts the aimed shots acked and refused, with the REJECT texts. "
    "Example (examples/range):\n"
    "  tessera bench shard --join /api/dev/join --kind range --params "
    "'{\"history\":10}' --bots 20 --rate 5 --net-delay 100 --aim 1 "
    "--input '{\"shoot\":{\"aim\":[\"$aim:x\",\"$aim:y\"]}}'";

int RunShard(ShardArgs& a) {
  loadtest::LoadTestOptions& o = a.options;
  if (a.join.empty() == a.shard.empty()) {
    std::cerr << "error: give exactly one of --join FUNCTION|URL (a join "
                 "function or join requests) and --shard ID (tickets minted "
                 "here)\n";
    return 2;
  }
  if (!a.join.empty()) {
    o.join = a.join;
    o.shard = a.shard_id;
  } else {
    o.shard = a.shard;
    if (auto secret = server::EnvString(server::kEnvTicketSecret)) {
      o.ticket_secret = *secret;
    } else if (!a.app_dir.empty()) {
      Result<server::DevSecrets> secrets = server::ReadDevSecrets(a.app_dir);
      if (!secrets.ok()) {
        std::cerr << "error: " << secrets.status().message() << "\n";
        return 1;
      }
      o.ticket_secret = secrets->ticket_secret;
    } else {
      std::cerr << "error: --shard mints tickets and needs the server's "
                   "ticket secret in TESSERA_SHARD_TICKET_SECRET (for "
                   "`tessera dev APP`: \"ticketSecret\" in "
                   "APP/.tessera/dev-secrets.json, or pass --app APP)\n";
      return 2;
    }
  }
  if (!a.params.empty()) {
    o.params = json::parse(a.params, nullptr, /*allow_exceptions=*/false);
    if (o.params.is_discarded()) {
      std::cerr << "error: --params is not valid JSON\n";
      return 2;
    }
  }
  if (!a.join_args.empty()) {
    o.join_args = json::parse(a.join_args, nullptr, /*allow_exceptions=*/false);
    if (!o.join_args.is_object()) {
      std::cerr << "error: --join-args is not a JSON object\n";
      return 2;
    }
  }
  if (a.aim >= 0) o.aim = static_cast<uint64_t>(a.aim);
  const bool tty = isatty(STDERR_FILENO) != 0;
  loadtest::ProgressFn progress;
  if (!a.quiet) {
    progress = [&o, tty](const loadtest::SeriesPoint& second,
                         const loadtest::Counts& totals) {
      const std::string line =
          loadtest::FormatProgressLine(second, totals, o.bots);
      if (tty) {
        std::cerr << "\r" << line << "\x1b[K" << std::flush;
      } else {
        std::cerr << line << "\n" << std::flush;
      }
    };
  }
  Result<loadtest::Report> report = loadtest::RunLoadTest(o, progress);
  if (tty && !a.quiet) std::cerr << "\n";
  if (!report.ok()) {
    std::cerr << "error: " << report.status().message() << "\n";
    return report.status().code() == StatusCode::kInvalidArgument ? 2 : 1;
  }
  std::cout << loadtest::FormatSummary(*report) << std::flush;
  if (!a.report_path.empty()) {
    std::ofstream out(a.report_path);
    out << loadtest::ReportToJson(*report).dump(1) << "\n";
    if (!out.good()) {
      std::cerr << "error: cannot write " << a.report_path << "\n";
      return 1;
    }
  }
  return report->counts.bots_connected > 0 ? 0 : 1;
}

Result<loadtest::Report> LoadReport(const std::string& path) {
  std::ifstream in(path);
  if (!in) return IoError("cannot open " + path);
  std::stringstream text;
  text << in.rdbuf();
  const json value = json::parse(text.str(), nullptr, false);
  if (value.is_discarded()) return InvalidArgument(path + " is not JSON");
  Result<loadtest::Report> report = loadtest::ReportFromJson(value);
  if (!report.ok())
    return InvalidArgument(path + ": " + report.status().message());
  return report;
}

int Merge(const std::vector<std::string>& paths, const std::string& out_path) {
  std::vector<loadtest::Report> reports;
  for (const std::string& path : paths) {
    Result<loadtest::Report> report = LoadReport(path);
    if (!report.ok()) {
      std::cerr << "error: " << report.status().message() << "\n";
      return 1;
    }
    reports.push_back(std::move(report.value()));
  }
  Result<loadtest::Report> merged = loadtest::MergeReports(reports);
  if (!merged.ok()) {
    std::cerr << "error: " << merged.status().message() << "\n";
    return 1;
  }
  std::cout << loadtest::FormatSummary(*merged);
  if (!out_path.empty()) {
    std::ofstream out(out_path);
    out << loadtest::ReportToJson(*merged).dump(1) << "\n";
    if (!out.good()) {
      std::cerr << "error: cannot write " << out_path << "\n";
      return 1;
    }
  }
  return 0;
}

int Plot(const std::string& path, std::string out_path,
         const std::string& title) {
  Result<loadtest::Report> report = LoadReport(path);
  if (!report.ok()) {
    std::cerr << "error: " << report.status().message() << "\n";
    return 1;
  }
  if (out_path.empty()) {
    const size_t dot = path.rfind('.');
    out_path = (dot == std::string::npos ? path : path.substr(0, dot)) + ".svg";
  }
  std::ofstream out(out_path);
  out << loadtest::PlotReport(*report, {.title = title});
  if (!out.good()) {
    std::cerr << "error: cannot write " << out_path << "\n";
    return 1;
  }
  std::cout << "wrote " << out_path << "\n";
  return 0;
}

void RegisterShard(CLI::App& bench, int* exit_code) {
  auto a = std::make_shared<ShardArgs>();
  loadtest::LoadTestOptions& o = a->options;
  CLI::App* cmd = bench.add_subcommand(
      "shard",
      "Drive bots against shards: join, send inputs at a rate, time each "
      "input to its ACK; live progress, summary and --report JSON");
  cmd->footer(kShardHelp);
  cmd->add_option("--join", a->join,
                  "The app's join function (a name: guest sign-in, then "
                  "POST /api/functions/NAME), or a join endpoint: a URL, or "
                  "a path on --url (e.g. /api/dev/join)");
  cmd->add_option("--shard", a->shard,
                  "A running shard to join with tickets minted here (secret "
                  "in TESSERA_SHARD_TICKET_SECRET)");
  cmd->add_option("--url", o.url,
                  "The server; https:// connects to wss:// with TLS")
      ->capture_default_str();
  cmd->add_option("--shard-id", a->shard_id,
                  "The shard the join requests ask for")
      ->default_val("bench")
      ->capture_default_str();
  cmd->add_option("--shards", o.shards,
                  "Spread the bots over K shards: bot n uses \"<id>-<n % K>\"")
      ->capture_default_str();
  cmd->add_option("--kind", o.kind, "The kind the join requests ask for");
  cmd->add_option("--params", a->params,
                  "The params (JSON) the join requests carry");
  cmd->add_option("--join-args", a->join_args,
                  "A join function's params (JSON object; default {}), or "
                  "an object merged into each join request body");
  cmd->add_option("--aim", a->aim,
                  "Draw the entities like a client; $aim:x/y/z in the "
                  "templates follow entity ENTITY")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--interp-delay", o.interp_delay_ms,
                  "With --aim: draw this many ms behind the shard's tick")
      ->capture_default_str();
  cmd->add_option("--tick-rate", o.tick_rate,
                  "With --aim: the shard's ticks per second")
      ->capture_default_str();
  cmd->add_option("--app", a->app_dir,
                  "With --shard: read the ticket secret of `tessera dev "
                  "APP` when TESSERA_SHARD_TICKET_SECRET is unset");
  cmd->add_option("--bots", o.bots, "Number of bots")->capture_default_str();
  cmd->add_option("--bot-offset", o.bot_offset,
                  "Number of the first bot (for runs on several machines)")
      ->capture_default_str();
  cmd->add_option("--duration", o.duration_secs,
                  "Seconds of load, from the first connection")
      ->capture_default_str();
  cmd->add_option("--rate", o.rate, "Inputs per second per bot")
      ->capture_default_str();
  cmd->add_option("--ramp", o.ramp_secs, "Seconds over which the bots connect")
      ->capture_default_str();
  cmd->add_option("--inputs-per-bot", o.inputs_per_bot,
                  "Each bot sends this many inputs, then the run ends once "
                  "they are answered (0: send till --duration)")
      ->capture_default_str();
  cmd->add_option("--together", o.together_secs,
                  "Every bot sends its first input SECS after the start, "
                  "all at once (default: at a random point of the first "
                  "interval)");
  cmd->add_option("--threads", o.threads, "IO threads")->capture_default_str();
  cmd->add_option("--input", o.inputs,
                  "Input template (JSON; repeatable, sent in turn)");
  cmd->add_option("--net-delay", o.net_delay_ms,
                  "Delay each direction of every shard connection by MS "
                  "(an in-process TCP proxy)")
      ->capture_default_str();
  cmd->add_option("--net-jitter", o.net_jitter_ms,
                  "Vary that delay by up to +- MS (order is kept)")
      ->capture_default_str();
  cmd->add_option("--server-pid", o.server_pid,
                  "Report this process's CPU time and peak RSS (/proc)");
  cmd->add_option("--report", a->report_path, "Write every figure as JSON");
  cmd->add_option("--drain", o.drain_secs,
                  "Most seconds to wait for the last answers")
      ->capture_default_str();
  cmd->add_option("--connect-timeout", o.connect_timeout_secs,
                  "Seconds a bot may take from start to WELCOME")
      ->capture_default_str();
  cmd->add_flag("--insecure", o.insecure,
                "TLS without certificate verification");
  cmd->add_option("--ca-file", o.ca_file,
                  "Also trust the certificates in this PEM file (TLS)");
  cmd->add_flag("-q,--quiet", a->quiet, "No progress line");
  cmd->callback([a, exit_code] { *exit_code = RunShard(*a); });
}

}  // namespace

void RegisterBenchCommands(CLI::App& app, int* exit_code) {
  CLI::App* bench = app.add_subcommand(
      "bench",
      "Load tests: drive bots against a server, merge and plot "
      "their reports");
  bench->require_subcommand(1);
  RegisterShard(*bench, exit_code);

  auto merge_paths = std::make_shared<std::vector<std::string>>();
  auto merge_out = std::make_shared<std::string>();
  CLI::App* merge = bench->add_subcommand(
      "merge",
      "Combine the reports of runs made at the same time on several "
      "machines (counts and latency histograms add; series add per second)");
  merge->add_option("REPORT", *merge_paths, "Report files (JSON)")
      ->required()
      ->check(CLI::ExistingFile);
  merge->add_option("--out", *merge_out, "Write the merged report here");
  merge->callback([merge_paths, merge_out, exit_code] {
    *exit_code = Merge(*merge_paths, *merge_out);
  });

  auto plot_path = std::make_shared<std::string>();
  auto plot_out = std::make_shared<std::string>();
  auto plot_title = std::make_shared<std::string>();
  CLI::App* plot = bench->add_subcommand(
      "plot",
      "Draw a report's round trip (p50, p99) and inputs per second over "
      "time as an SVG chart");
  plot->add_option("REPORT", *plot_path, "Report file (JSON)")
      ->required()
      ->check(CLI::ExistingFile);
  plot->add_option("--out", *plot_out,
                   "The SVG file (default: the report's name with .svg)");
  plot->add_option("--title", *plot_title, "Chart title");
  plot->callback([plot_path, plot_out, plot_title, exit_code] {
    *exit_code = Plot(*plot_path, *plot_out, *plot_title);
  });
}

}  // namespace tessera::cli
