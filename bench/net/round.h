// One benchmark round: N bots join fresh arena shards (one by default;
// bot i joins shard i % shards) through the dev join, sit connected for a
// baseline period (frames only), then each sends moves at R inputs/s for D
// seconds; the round then waits for the last answers and closes every bot.
//
// Threading: RunRound runs on the calling thread plus `threads` io
// threads it starts and joins.
#ifndef TESSERA_BENCH_NET_ROUND_H_
#define TESSERA_BENCH_NET_ROUND_H_

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

#include "bench/net/bot_stats.h"
#include "common/status.h"

namespace tessera::bench {

struct RoundConfig {
  std::string host = "127.0.0.1";
  uint16_t port = 0;
  std::string shard;  // with shards > 1: "<shard>-<k>", k in [0, shards)
  int shards = 1;
  int bots = 100;
  double inputs_per_sec = 10;
  double load_secs = 10;
  double baseline_secs = 3;
  // Most time to wait for the answers to the last inputs.
  double drain_timeout_secs = 10;
  int threads = 2;
  pid_t server_pid = 0;  // 0: no server CPU figures
};

struct RoundResult {
  BotStats stats{nullptr, nullptr};  // merged over threads
  double baseline_secs = 0;          // measured wall time of each phase
  double load_secs = 0;
  // Server CPU seconds in each phase (nullopt without a pid).
  std::optional<double> server_cpu_baseline;
  std::optional<double> server_cpu_load;
  double client_cpu_load = 0;  // this process, load phase
};

// The id of shard `k` of the round.
std::string RoundShardId(const RoundConfig& config, int k);

// Errors: kIo if the dev join fails (e.g. not a dev server), kInternal if
// not every bot joined within 60 s.
Result<RoundResult> RunRound(const RoundConfig& config);

}  // namespace tessera::bench

#endif  // TESSERA_BENCH_NET_ROUND_H_
