// replay_bench: what a kind's input log ("recordInputs",
// docs/record-replay.md) costs, each figure against a baseline measured in
// the same run: the same shards, inputs and ticks with the log off.
//
//   cpu     thread CPU per shard tick (inputs, tick, snapshot, the log's
//           record and its saves with their checkpoints), log on / off;
//   wall    wall time per shard tick, log on / off: what the log adds
//           before a tick's FRAME (and the ACKs in it) leaves, i.e. to an
//           input's round trip;
//   bytes   log bytes per input (a run with inputs minus the same run
//           without) and per tick without inputs.
//
// The counter test guest, 20 shards at 20 Hz on a manual host (a fake
// clock: no sleeping), 8 players each sending one input every tick, saves
// every 5 s. --quick (the ctest smoke run) runs fewer ticks. Correctness
// alone decides the exit status (the log holds every tick), never timing.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/clock.h"
#include "shard/input_log.h"
#include "shard/input_log_files.h"
#include "shard/shard_host.h"
#include "shard/test_guests.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using shard::testing::Msgpack;

constexpr int kShards = 20;
constexpr int kPlayers = 8;
constexpr int64_t kTickUs = 50'000;

struct Figures {
  double cpu_us_per_tick = 0;
  double wall_us_per_tick = 0;
  uint64_t log_bytes = 0;
  uint64_t inputs = 0;
  uint64_t logged_ticks = 0;
};

uint64_t DirBytes(const fs::path& dir) {
  uint64_t bytes = 0;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (it->is_regular_file(ec)) bytes += it->file_size(ec);
  }
  return bytes;
}

Figures RunOnce(bool record, bool with_inputs, int ticks, const fs::path& dir) {
  shard::KindRegistry kinds;
  shard::KindConfig kind;
  kind.name = "counter";
  kind.record_inputs = record;
  kind.idle_shutdown_secs = 0;  // no subscribers here
  auto module = shard::testing::LoadGuest("counter", kind.memory_mb);
  if (!module.ok() || !kinds.Add(kind, *module).ok()) {
    std::fprintf(stderr, "cannot load the counter guest: %s\n",
                 module.status().ToString().c_str());
    std::exit(1);
  }
  FakeClock clock(0);
  shard::HostOptions options;
  options.workers = 0;
  options.clock = &clock;
  options.save_interval_us = 5'000'000;
  if (record) options.input_log_dir = dir.string();
  shard::ShardHost host(&kinds, nullptr, nullptr, options);
  for (int s = 0; s < kShards; ++s) {
    if (!host.Create("counter", "c" + std::to_string(s), "").ok()) {
      std::fprintf(stderr, "cannot create shard c%d\n", s);
      std::exit(1);
    }
  }
  const std::string add = Msgpack({{"add", {{"n", 1}}}});
  Figures f;
  uint64_t seq = 0;
  int64_t cpu_us = 0, wall_us = 0, now = 0;
  for (int t = 0; t < ticks; ++t) {
    if (with_inputs) {
      for (int s = 0; s < kShards; ++s) {
        for (int p = 0; p < kPlayers; ++p) {
          (void)host.SubmitInput("c" + std::to_string(s),
                                 "player-" + std::to_string(p), ++seq, add);
          ++f.inputs;
        }
      }
    }
    now += kTickUs;
    clock.Set(now);
    const int64_t cpu0 = ThreadCpuClock::Get()->NowUs();
    const auto wall0 = std::chrono::steady_clock::now();
    host.StepForTest(now);
    wall_us += std::chrono::duration_cast<std::chrono::microseconds>(
                   std::chrono::steady_clock::now() - wall0)
                   .count();
    cpu_us += ThreadCpuClock::Get()->NowUs() - cpu0;
  }
  const double shard_ticks = static_cast<double>(ticks) * kShards;
  f.cpu_us_per_tick = static_cast<double>(cpu_us) / shard_ticks;
  f.wall_us_per_tick = static_cast<double>(wall_us) / shard_ticks;
  if (record) {
    f.log_bytes = DirBytes(dir);
    shard::DiskLogFiles files(dir / "c0");
    auto log = shard::ReadInputLog(files);
    if (log.ok() && !log->runs.empty()) {
      f.logged_ticks = log->runs.back().ticks.size();
    }
  }
  host.Shutdown();
  return f;
}

int Main(int argc, char** argv) {
  bool quick = false;
  for (int i = 1; i < argc; ++i) quick |= std::strcmp(argv[i], "--quick") == 0;
  const int ticks = quick ? 100 : 2000;
  char pattern[] = "/tmp/tessera-replay-bench-XXXXXX";
  if (mkdtemp(pattern) == nullptr) return 1;
  const fs::path dir = pattern;

  // Warm-up (module load and compile), then the measured runs.
  (void)RunOnce(false, true, 20, dir / "warm");
  Figures off = RunOnce(false, true, ticks, dir / "off");
  Figures on = RunOnce(true, true, ticks, dir / "on");
  Figures idle = RunOnce(true, false, ticks, dir / "idle");
  fs::remove_all(dir);

  const double bytes_per_input =
      static_cast<double>(on.log_bytes - idle.log_bytes) /
      static_cast<double>(on.inputs);
  const double bytes_per_idle_tick = static_cast<double>(idle.log_bytes) /
                                     (static_cast<double>(ticks) * kShards);
  std::printf(
      "replay_bench: %d shards x %d ticks, %d inputs per shard tick\n"
      "  cpu per shard tick   %8.1f us log on, %8.1f us off (x%.2f)\n"
      "  wall per shard tick  %8.1f us log on, %8.1f us off (x%.2f; +%.1f us "
      "before the FRAME)\n"
      "  log bytes            %8.1f per input, %.1f per tick without inputs\n",
      kShards, ticks, kPlayers, on.cpu_us_per_tick, off.cpu_us_per_tick,
      on.cpu_us_per_tick / off.cpu_us_per_tick, on.wall_us_per_tick,
      off.wall_us_per_tick, on.wall_us_per_tick / off.wall_us_per_tick,
      on.wall_us_per_tick - off.wall_us_per_tick, bytes_per_input,
      bytes_per_idle_tick);
  // Correctness: every tick of every run is in the log.
  if (on.logged_ticks != static_cast<uint64_t>(ticks) ||
      idle.logged_ticks != static_cast<uint64_t>(ticks)) {
    std::fprintf(stderr, "the log holds %llu and %llu ticks, not %d\n",
                 static_cast<unsigned long long>(on.logged_ticks),
                 static_cast<unsigned long long>(idle.logged_ticks), ticks);
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace tessera

int main(int argc, char** argv) { return tessera::Main(argc, argv); }
