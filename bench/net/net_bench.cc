// net_bench: bots playing the arena over loopback WebSockets, measuring
// input->ACK round trips and the server's CPU per input and per
// connection-second, for 100 and 1,000 connections on one shard.
//
//   net_bench [--url http://HOST:PORT [--pid PID] [--admin-token T]]
//             [--bots 100,1000] [--shards 1] [--rate 10] [--duration 10]
//             [--baseline 3] [--threads 2] [--quick]
//
// Without --url it starts `tessera dev` on a scratch copy of
// examples/arena (a port of its own) and stops it at the end. The
// baseline phase (bots connected, no inputs) is measured in the same run:
// the server's CPU per input is also given net of it. --quick is the
// smoke test: 20 bots for 1 s; it exits 1 unless every count adds up.
// Every snapshot lists every player of its shard, so the bytes sent grow
// with bots^2 / shards: --shards spreads the bots over several shards.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/net/round.h"
#include "common/subprocess.h"
#include "net/client/http_client.h"
#include "tests/e2e/server_process.h"

namespace tessera::bench {
namespace {

namespace fs = std::filesystem;

struct Options {
  std::string url;
  pid_t pid = 0;
  std::string admin_token;
  std::vector<int> bots = {100, 1000};
  int shards = 1;
  double rate = 10;
  double duration = 10;
  double baseline = 3;
  int threads = 2;
  bool quick = false;
};

[[noreturn]] void Usage(const std::string& error) {
  std::cerr << "net_bench: " << error
            << "\nusage: net_bench [--url http://HOST:PORT [--pid PID] "
               "[--admin-token T]] [--bots 100,1000] [--shards K] [--rate R] "
               "[--duration SECS] [--baseline SECS] [--threads N] "
               "[--quick]\n";
  std::exit(2);
}

Options ParseOptions(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) Usage(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--quick") {
      o.quick = true;
      o.bots = {20};
      o.duration = 1;
      o.baseline = 0.5;
    } else if (arg == "--url") {
      o.url = value();
    } else if (arg == "--pid") {
      o.pid = static_cast<pid_t>(std::stol(value()));
    } else if (arg == "--admin-token") {
      o.admin_token = value();
    } else if (arg == "--bots") {
      o.bots.clear();
      std::stringstream list(value());
      for (std::string n; std::getline(list, n, ',');) {
        o.bots.push_back(std::stoi(n));
      }
    } else if (arg == "--shards") {
      o.shards = std::stoi(value());
    } else if (arg == "--rate") {
      o.rate = std::stod(value());
    } else if (arg == "--duration") {
      o.duration = std::stod(value());
    } else if (arg == "--baseline") {
      o.baseline = std::stod(value());
    } else if (arg == "--threads") {
      o.threads = std::stoi(value());
    } else {
      Usage("unknown argument " + arg);
    }
  }
  if (o.bots.empty() || o.rate <= 0 || o.duration <= 0 || o.threads < 1 ||
      o.shards < 1) {
    Usage("bad value");
  }
  return o;
}

// "http://HOST:PORT" or "ws://HOST:PORT" -> host, port.
bool ParseUrl(const std::string& url, std::string* host, uint16_t* port) {
  const size_t scheme = url.find("://");
  std::string rest = scheme == std::string::npos ? url : url.substr(scheme + 3);
  rest = rest.substr(0, rest.find('/'));
  const size_t colon = rest.rfind(':');
  if (colon == std::string::npos) return false;
  *host = rest.substr(0, colon);
  *port = static_cast<uint16_t>(std::stoi(rest.substr(colon + 1)));
  return !host->empty() && *port != 0;
}

// A `tessera dev` of a scratch copy of the arena.
struct DevServer {
  fs::path dir;
  std::unique_ptr<e2e::ServerProcess> process;
  std::string admin_token;
  ~DevServer() {
    process.reset();
    if (!dir.empty()) fs::remove_all(dir);
  }
};

Result<std::unique_ptr<DevServer>> StartDev() {
  auto dev = std::make_unique<DevServer>();
  dev->dir = fs::temp_directory_path() /
             ("tessera-net-bench-" + std::to_string(getpid()));
  fs::remove_all(dev->dir);
  fs::create_directories(dev->dir);
  const fs::path app = dev->dir / "arena";
  Result<ProcessResult> copy = RunProcess(
      {"cp", "-a", std::string(TESSERA_SOURCE_DIR) + "/examples/arena",
       app.string()});
  if (!copy.ok() || copy->exit_code != 0) return IoError("cannot copy arena");
  fs::remove(app / ".tessera/tessera.db");
  fs::remove(app / ".tessera/dev-secrets.json");
  e2e::SpawnOptions spawn;
  spawn.argv = {TESSERA_BIN, "dev", app.string(), "--port", "0", "--quiet"};
  spawn.log_path = dev->dir / "server.log";
  spawn.ready_timeout_ms = 300000;  // may compile the arena
  auto process = e2e::ServerProcess::Start(spawn);
  if (!process.ok()) return process.status();
  dev->process = std::move(*process);
  std::ifstream secrets(app / ".tessera/dev-secrets.json");
  const nlohmann::json j = nlohmann::json::parse(secrets, nullptr, false);
  if (j.is_object()) dev->admin_token = j.value("adminToken", "");
  return dev;
}

void PrintHeader(const Options& o, const std::string& target, bool cpu) {
  std::printf(
      "net_bench: %s, %d arena shard(s) per row; each bot sends %.0f "
      "inputs/s for %.0f s (after a %.1f s baseline with no inputs); "
      "%d client threads; %u cores%s\n\n",
      target.c_str(), o.shards, o.rate, o.duration, o.baseline, o.threads,
      std::thread::hardware_concurrency(),
      cpu ? "" : "; no server pid: no CPU figures");
  std::printf(
      "%6s %7s %8s %6s | %7s %7s %7s | %9s %9s %9s | %8s %8s | %7s %8s | "
      "%6s\n",
      "bots", "joined", "inputs", "answ%", "p50 ms", "p99 ms", "max ms",
      "us/input", "net", "bot CPU", "ms/con-s", "idle", "frm/b/s", "KB/b/s",
      "closes");
}

void PrintRow(int bots, RoundResult& r) {
  BotStats& s = r.stats;
  const double answered = static_cast<double>(s.acks + s.rejects);
  const double conn_secs = bots * r.load_secs;
  auto us_per_input = [&](std::optional<double> cpu) {
    return cpu && answered > 0 ? *cpu * 1e6 / answered : 0.0;
  };
  std::optional<double> net_cpu;
  if (r.server_cpu_load && r.server_cpu_baseline && r.baseline_secs > 0) {
    net_cpu = *r.server_cpu_load -
              *r.server_cpu_baseline * r.load_secs / r.baseline_secs;
  }
  uint64_t closes = 0;
  for (const auto& [code, n] : s.server_closes) closes += n;
  const double p50 = PercentileMs(s.rtt_us, 0.50);
  const double p99 = PercentileMs(s.rtt_us, 0.99);
  const double max = PercentileMs(s.rtt_us, 1.0);
  std::printf(
      "%6d %7llu %8llu %5.1f%% | %7.1f %7.1f %7.1f | %9.1f %9.1f %9.1f | "
      "%8.3f %8.3f | %7.1f %8.1f | %6llu\n",
      bots, static_cast<unsigned long long>(s.joined),
      static_cast<unsigned long long>(s.inputs_sent),
      s.inputs_sent ? 100.0 * answered / s.inputs_sent : 0.0, p50, p99, max,
      us_per_input(r.server_cpu_load), us_per_input(net_cpu),
      answered > 0 ? r.client_cpu_load * 1e6 / answered : 0.0,
      r.server_cpu_load ? *r.server_cpu_load * 1e3 / conn_secs : 0.0,
      r.server_cpu_baseline
          ? *r.server_cpu_baseline * 1e3 / (bots * r.baseline_secs)
          : 0.0,
      s.frames[kLoad] / conn_secs, s.bytes_received[kLoad] / 1024.0 / conn_secs,
      static_cast<unsigned long long>(closes));
  for (const auto& [code, n] : s.server_closes) {
    std::printf("       server closed %llu bots with %d\n",
                static_cast<unsigned long long>(n), code);
  }
  std::fflush(stdout);
}

// The smoke test's checks; prints each failure.
bool CountsAddUp(int bots, const BotStats& s) {
  bool ok = true;
  auto check = [&](bool good, const std::string& what) {
    if (!good) std::printf("net_bench --quick: FAILED: %s\n", what.c_str());
    ok = ok && good;
  };
  check(s.joined == static_cast<uint64_t>(bots),
        std::to_string(s.joined) + " of " + std::to_string(bots) + " joined");
  check(s.inputs_sent > 0, "no input sent");
  check(s.acks + s.rejects == s.inputs_sent,
        std::to_string(s.acks) + " ACKs + " + std::to_string(s.rejects) +
            " REJECTs != " + std::to_string(s.inputs_sent) + " inputs");
  check(s.rejects == 0, std::to_string(s.rejects) + " inputs rejected");
  check(s.rtt_us.size() == s.acks + s.rejects, "round trips missing");
  check(s.frames[kLoad] > 0, "no frame during the load");
  check(s.errors == 0, std::to_string(s.errors) + " client errors");
  check(s.server_closes.empty(), "the server closed bots");
  return ok;
}

int Main(int argc, char** argv) {
  const Options o = ParseOptions(argc, argv);
  std::string host = "127.0.0.1";
  uint16_t port = 0;
  pid_t pid = o.pid;
  std::string admin_token = o.admin_token;
  std::unique_ptr<DevServer> dev;
  std::string target;
  if (!o.url.empty()) {
    if (!ParseUrl(o.url, &host, &port)) Usage("bad --url " + o.url);
    target = o.url;
  } else {
    Result<std::unique_ptr<DevServer>> started = StartDev();
    if (!started.ok()) {
      std::cerr << "net_bench: " << started.status().ToString() << "\n";
      return 1;
    }
    dev = std::move(*started);
    port = dev->process->port();
    pid = dev->process->pid();
    admin_token = dev->admin_token;
    target = "tessera dev examples/arena (pid " + std::to_string(pid) + ")";
  }
  PrintHeader(o, target, pid > 0);
  bool ok = true;
  for (int bots : o.bots) {
    RoundConfig config;
    config.host = host;
    config.port = port;
    config.shard =
        "bench-" + std::to_string(bots) + "-" + std::to_string(getpid());
    config.bots = bots;
    config.shards = o.shards;
    config.inputs_per_sec = o.rate;
    config.load_secs = o.duration;
    config.baseline_secs = o.baseline;
    config.threads = o.threads;
    config.server_pid = pid;
    Result<RoundResult> r = RunRound(config);
    if (!r.ok()) {
      std::printf("%6d  failed: %s\n", bots, r.status().ToString().c_str());
      ok = false;
    } else {
      PrintRow(bots, *r);
      if (o.quick) ok = CountsAddUp(bots, r->stats) && ok;
    }
    // Free the server for the next row.
    for (int k = 0; k < config.shards && !admin_token.empty(); ++k) {
      net::client::HttpCall(host, port, "POST",
                            "/api/shards/" + RoundShardId(config, k) + "/stop",
                            "", {{"Authorization", "Bearer " + admin_token}});
    }
  }
  std::printf(
      "\nanswered = inputs with an ACK or REJECT; us/input = server CPU per "
      "answered input (net: minus the baseline's CPU rate); bot CPU = this "
      "driver's CPU per input; ms/con-s = server CPU per connection-second "
      "under load (idle: in the baseline); frm/b/s, KB/b/s = frames and "
      "bytes each bot received per second.\n");
  if (o.quick) std::printf("net_bench --quick: %s\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}

}  // namespace
}  // namespace tessera::bench

int main(int argc, char** argv) { return tessera::bench::Main(argc, argv); }
