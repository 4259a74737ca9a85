#include "bench/net/round.h"

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "bench/net/bot.h"
#include "loadtest/io_threads.h"
#include "loadtest/proc_stats.h"
#include "net/client/http_client.h"

namespace tessera::bench {
namespace {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;
using json = nlohmann::json;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Dev-join tickets for subscribers "b0".."b<n-1>" (short ids keep the
// snapshot, which lists every player, small).
Result<std::vector<std::string>> JoinTickets(const RoundConfig& config) {
  auto http = net::client::HttpConnection::Connect(config.host, config.port);
  if (!http.ok()) return http.status();
  std::vector<std::string> tickets;
  const int shards = std::max(1, config.shards);
  for (int i = 0; i < config.bots; ++i) {
    const json body = {{"shard", RoundShardId(config, i % shards)},
                       {"kind", "arena"},
                       {"subscriber", "b" + std::to_string(i)}};
    auto r = (*http)->Request("POST", "/api/dev/join", body.dump(),
                              {{"Content-Type", "application/json"}});
    if (!r.ok()) return r.status();
    const json reply = json::parse(r->body, nullptr, false);
    if (r->status != 200 || !reply.is_object() || !reply.contains("ticket")) {
      return IoError("POST /api/dev/join: HTTP " + std::to_string(r->status) +
                     ": " + r->body);
    }
    tickets.push_back(reply["ticket"].get<std::string>());
  }
  return tickets;
}

std::optional<double> ServerCpu(pid_t pid) {
  return pid > 0 ? loadtest::ProcessCpuSeconds(pid) : std::nullopt;
}

std::optional<double> Diff(std::optional<double> a, std::optional<double> b) {
  if (!a || !b) return std::nullopt;
  return *b - *a;
}

void SleepSecs(double secs) {
  std::this_thread::sleep_for(std::chrono::duration<double>(secs));
}

}  // namespace

std::string RoundShardId(const RoundConfig& config, int k) {
  if (config.shards <= 1) return config.shard;
  return config.shard + "-" + std::to_string(k);
}

Result<RoundResult> RunRound(const RoundConfig& config) {
  Result<std::vector<std::string>> tickets = JoinTickets(config);
  if (!tickets.ok()) return tickets.status();

  std::atomic<int> phase{kJoining};
  InFlight in_flight;
  const int threads = std::max(1, config.threads);
  loadtest::IoThreads io(threads);
  std::vector<std::unique_ptr<BotStats>> stats;
  for (int t = 0; t < threads; ++t) {
    stats.push_back(std::make_unique<BotStats>(&phase, &in_flight));
  }
  // Each io thread ends once its bots have closed (after Release).
  io.Start();

  BotConfig base;
  base.endpoint =
      asio::ip::tcp::endpoint(asio::ip::make_address(config.host), config.port);
  base.host_header = config.host + ":" + std::to_string(config.port);
  base.inputs_per_sec = config.inputs_per_sec;
  std::vector<std::shared_ptr<Bot>> bots;
  loadtest::Countdown joined(config.bots);
  for (int i = 0; i < config.bots; ++i) {
    BotConfig c = base;
    c.shard = RoundShardId(config, i % std::max(1, config.shards));
    c.ticket = (*tickets)[i];
    c.seed = 0x5eed + static_cast<uint64_t>(i);
    const int t = i % threads;
    bots.push_back(std::make_shared<Bot>(io.ioc(t), c, stats[t].get()));
    asio::post(io.ioc(t), [bot = bots.back(), &joined] {
      bot->Join([&joined](bool) { joined.Done(); });
    });
  }
  const bool all_answered = joined.Wait(std::chrono::seconds(60));

  RoundResult result;
  auto start = Clock::now();
  if (all_answered) {
    phase = kBaseline;
    const auto cpu0 = ServerCpu(config.server_pid);
    SleepSecs(config.baseline_secs);
    const auto cpu1 = ServerCpu(config.server_pid);
    result.baseline_secs = SecondsSince(start);
    result.server_cpu_baseline = Diff(cpu0, cpu1);

    phase = kLoad;
    start = Clock::now();
    const double client0 = loadtest::SelfCpuSeconds();
    const auto until =
        start + std::chrono::duration_cast<Clock::duration>(
                    std::chrono::duration<double>(config.load_secs));
    for (size_t i = 0; i < bots.size(); ++i) {
      asio::post(io.ioc(static_cast<int>(i) % threads),
                 [bot = bots[i], until] { bot->StartInputs(until); });
    }
    std::this_thread::sleep_until(until);
    const auto cpu2 = ServerCpu(config.server_pid);
    result.load_secs = SecondsSince(start);
    result.server_cpu_load = Diff(cpu1, cpu2);
    result.client_cpu_load = loadtest::SelfCpuSeconds() - client0;

    phase = kDrain;  // the last inputs' answers
    in_flight.WaitForNone(std::chrono::milliseconds(
        static_cast<int64_t>(config.drain_timeout_secs * 1000)));
  }

  phase = kClosing;
  for (size_t i = 0; i < bots.size(); ++i) {
    asio::post(io.ioc(static_cast<int>(i) % threads),
               [bot = bots[i]] { bot->Close(); });
  }
  io.Release();
  // Bounded: a server that never answers the close must not hang us.
  if (!io.WaitDone(std::chrono::seconds(5))) io.Stop();
  io.Join();
  bots.clear();
  for (const auto& s : stats) result.stats.Merge(*s);
  if (!all_answered) {
    return Internal("only " + std::to_string(result.stats.joined) + " of " +
                    std::to_string(config.bots) + " bots joined in 60 s");
  }
  return result;
}

}  // namespace tessera::bench
