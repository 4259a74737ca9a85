// Runs a load test: thousands of bots (state machines, see bot.h) on a few
// io threads join one or more shards, ramp up, send inputs at a fixed rate
// for the duration, wait for the last answers and close; the figures are
// sampled every second. The core of `tessera bench shard`.
//
// Threading: RunLoadTest blocks the calling thread, which samples the
// figures, and runs `threads` io threads it starts and joins (plus the
// delay proxy's connections on the same threads).
#ifndef TESSERA_LOADTEST_DRIVER_H_
#define TESSERA_LOADTEST_DRIVER_H_

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "loadtest/report.h"

namespace tessera::loadtest {

struct LoadTestOptions {
  std::string url = "http://localhost:4321";  // the shards' server
  // The join endpoint (absolute, or a path on `url`); empty: tickets are
  // minted with `ticket_secret` for shard `shard`.
  std::string join;
  std::string ticket_secret;
  std::string shard = "bench";  // the shard id (a prefix when shards > 1)
  int64_t shards = 1;
  std::string kind;       // posted in join requests when set
  nlohmann::json params;  // posted in join requests when not null
  // An object whose members are merged into each join request body.
  nlohmann::json join_args;
  int64_t bots = 10;
  int64_t bot_offset = 0;  // bot numbers start here
  double duration_secs = 10;
  double rate = 10;  // inputs per second per bot
  // > 0: each bot sends this many inputs (within the duration, which then
  // only bounds the run), and the run ends once they are all answered.
  int64_t inputs_per_bot = 0;
  double ramp_secs = 0;
  // >= 0 (--together): every bot sends its first input this many seconds
  // after the run starts (a bot joined later at its WELCOME), all at once,
  // then one every 1/rate; < 0: at a random point of its first interval.
  double together_secs = -1;
  int threads = 2;
  std::vector<std::string> inputs;  // input templates (input_template.h)
  double net_delay_ms = 0;
  double net_jitter_ms = 0;
  pid_t server_pid = 0;   // 0: no server figures
  double drain_secs = 5;  // most time to wait for the last answers
  double connect_timeout_secs = 10;
  bool insecure = false;  // TLS without certificate checks
  std::string ca_file;    // PEM certificates to trust besides the system's
  // --aim: the bots draw entities like a client and $aim tokens follow
  // this entity (bot.h).
  std::optional<uint64_t> aim;
  double interp_delay_ms = 100;
  double tick_rate = 20;
};

// Called once a second with that second's figures and the totals so far.
using ProgressFn =
    std::function<void(const SeriesPoint& second, const Counts& totals)>;

// Errors: kInvalidArgument for bad options (with the reason), kIo when the
// server's address does not resolve, the CA file cannot be read or the
// proxy cannot start. A run in
// which bots fail is not an error: the report counts the failures.
Result<Report> RunLoadTest(const LoadTestOptions& options,
                           const ProgressFn& progress);

// "[ 12s] 998/1000 bots | 9,980 inputs/s | p99 14.2 ms | 0 errors".
std::string FormatProgressLine(const SeriesPoint& second, const Counts& totals,
                               int64_t bots);

}  // namespace tessera::loadtest

#endif  // TESSERA_LOADTEST_DRIVER_H_
