// The result of a `tessera bench shard` run, as figures that add up
// across runs (so reports of several machines merge), with its JSON form
// (see docs in ReportToJson) and the human summary.
#ifndef TESSERA_LOADTEST_REPORT_H_
#define TESSERA_LOADTEST_REPORT_H_

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "loadtest/histogram.h"

namespace tessera::loadtest {

using CountMap = std::map<std::string, uint64_t>;

// Inputs made from templates with $aim tokens (`--aim`): shots at where
// the bot draws the entity. A REJECT is a refused shot (a shard that
// counts a miss rejects it, e.g. examples/range's "miss").
struct AimCounts {
  uint64_t sent = 0;
  uint64_t acked = 0;
  uint64_t refused = 0;
  CountMap refusals;       // REJECT text -> shots
  uint64_t not_drawn = 0;  // sending times skipped: the entity was not drawn

  void Add(const AimCounts& other);
};

// Moves between shards the bots followed (TRANSFER, then a connection to
// the target with its ticket; loadtest/transfer_tracker.h).
struct TransferCounts {
  uint64_t followed = 0;  // reached the target's first FRAME
  uint64_t failed = 0;    // the target's connection failed, or a loop
  CountMap failures;      // reason -> moves
  // The answer of the last input before the TRANSFER (the moving input)
  // -> the first FRAME from the target, in microseconds.
  Histogram time_us;
  Histogram notice_us;     // that answer -> the TRANSFER (the server's part)
  Histogram reconnect_us;  // TRANSFER -> the first FRAME from the target

  void Add(const TransferCounts& other);
};

// What the bots saw: every field adds up over bots, threads and machines.
struct Counts {
  uint64_t bots_connected = 0;  // bots that got a WELCOME
  uint64_t connect_failures = 0;
  CountMap connect_failure_reasons;  // reason -> bots
  CountMap disconnects;  // close code ("1006": no close frame) -> bots,
                         // for connections the server or network ended
  uint64_t inputs_sent = 0;
  uint64_t inputs_acked = 0;
  uint64_t inputs_refused = 0;    // REJECT
  CountMap refusals;              // REJECT text -> inputs
  uint64_t in_flight_at_end = 0;  // unanswered when the bots closed
  uint64_t inputs_lost = 0;       // unanswered when the connection was lost
  Histogram rtt_us;               // INPUT -> its ACK or REJECT
  uint64_t frames = 0;            // FRAME messages received
  uint64_t bytes = 0;             // WebSocket payload bytes received
  double bot_seconds = 0;         // time connected, summed over bots
  uint64_t errors = 0;            // undecodable messages, stray answers
  AimCounts aimed;
  TransferCounts transfers;
  // A bot's first connection: the WebSocket connect -> its first FRAME
  // (connect, HELLO, WELCOME, the first tick's FRAME), in microseconds.
  Histogram first_frame_us;

  void Add(const Counts& other);
};

// One second of the run (t = seconds since the start, from 0).
struct SeriesPoint {
  int64_t t = 0;
  uint64_t connected = 0;  // bots connected at the end of the second
  uint64_t sent = 0;
  uint64_t acked = 0;
  uint64_t refused = 0;
  uint64_t frames = 0;
  uint64_t bytes = 0;
  uint64_t errors = 0;
  Histogram rtt_us;  // answers received in this second

  void Add(const SeriesPoint& other);  // sums everything but t
};

// The command line of the run (summed or listed by Merge).
struct RunSettings {
  std::string url;
  std::string join;   // the join endpoint, "function <name>", or ""
  std::string shard;  // --shard or --shard-id
  int64_t bots = 0;
  int64_t bot_offset = 0;
  double rate = 0;  // inputs per second per bot
  double duration_secs = 0;
  double ramp_secs = 0;
  int64_t threads = 0;
  double net_delay_ms = 0;
  double net_jitter_ms = 0;
  std::vector<std::string> inputs;  // the templates
  std::string aim;                  // --aim entity id; empty: none
  double interp_delay_ms = 0;       // with --aim
  double tick_rate = 0;             // with --aim
};

struct ServerUsage {
  int64_t pid = 0;
  double cpu_seconds = 0;     // user + system, from start to end of the run
  uint64_t peak_rss_kib = 0;  // VmHWM at the end
};

struct Report {
  RunSettings settings;
  int64_t machines = 1;     // reports merged into this one
  double elapsed_secs = 0;  // wall time from the first connect to the end
  Counts counts;
  std::optional<ServerUsage> server;
  double client_cpu_seconds = 0;  // the bench processes' own CPU
  std::vector<SeriesPoint> series;
};

nlohmann::json ReportToJson(const Report& report);
// Errors: kInvalidArgument naming the field that is missing or malformed.
Result<Report> ReportFromJson(const nlohmann::json& value);

// Combines reports of runs made at the same time (several machines against
// one server): counts, histograms and bots add; series add second by
// second; the server's figures are the largest seen (each machine measures
// the same server); elapsed time is the longest. Errors: kInvalidArgument
// when `reports` is empty.
Result<Report> MergeReports(const std::vector<Report>& reports);

// The human summary printed at the end of a run.
std::string FormatSummary(const Report& report);

// "1000 normal", "4006 shard_stopped", ... for a close code's key.
std::string CloseCodeName(const std::string& code);

}  // namespace tessera::loadtest

#endif  // TESSERA_LOADTEST_REPORT_H_
