#include "loadtest/driver.h"

#include <sys/resource.h>

#include <algorithm>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cinttypes>
#include <condition_variable>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "loadtest/bot.h"
#include "loadtest/delay_proxy.h"
#include "loadtest/io_threads.h"
#include "loadtest/proc_stats.h"
#include "loadtest/run_stats.h"
#include "net/client/url.h"

namespace tessera::loadtest {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;
using net::client::ParseUrl;
using net::client::ResolveUrl;
using net::client::Url;

Clock::duration Secs(double secs) {
  return std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(secs));
}

Status CheckOptions(const LoadTestOptions& o) {
  if (o.bots < 1) return InvalidArgument("--bots must be at least 1");
  if (o.bot_offset < 0) return InvalidArgument("--bot-offset must be >= 0");
  if (o.threads < 1 || o.threads > 256) {
    return InvalidArgument("--threads must be 1..256");
  }
  if (!(o.duration_secs > 0)) return InvalidArgument("--duration must be > 0");
  if (!(o.rate >= 0) || o.rate > 1000) {
    return InvalidArgument("--rate must be 0..1000 inputs per second");
  }
  if (!(o.ramp_secs >= 0) || o.ramp_secs > o.duration_secs) {
    return InvalidArgument("--ramp must be between 0 and --duration");
  }
  if (!(o.net_delay_ms >= 0) || !(o.net_jitter_ms >= 0) ||
      o.net_jitter_ms > o.net_delay_ms) {
    return InvalidArgument(
        "--net-delay must be >= 0 and --net-jitter between 0 and "
        "--net-delay");
  }
  if (o.together_secs > o.duration_secs) {
    return InvalidArgument("--together must be at most --duration");
  }
  if (o.shards < 1) return InvalidArgument("--shards must be at least 1");
  if (o.inputs_per_bot < 0) {
    return InvalidArgument("the inputs per bot must be >= 0");
  }
  if (o.shard.empty()) return InvalidArgument("the shard id is empty");
  if (o.rate > 0 && o.inputs.empty()) {
    return InvalidArgument(
        "--rate is above 0 but no --input template was given (add "
        "--input JSON, or --rate 0 to only connect)");
  }
  if (!(o.tick_rate > 0) || o.tick_rate > 1000) {
    return InvalidArgument("--tick-rate must be above 0 and at most 1000");
  }
  if (!(o.interp_delay_ms >= 0) || o.interp_delay_ms > 10000) {
    return InvalidArgument("--interp-delay must be 0..10000 ms");
  }
  if (!o.join_args.is_null() && !o.join_args.is_object()) {
    return InvalidArgument("--join-args must be a JSON object");
  }
  if (o.join_args.is_object() && o.join.empty()) {
    return InvalidArgument("--join-args needs --join (join requests)");
  }
  if (IsJoinFunction(o.join) && (!o.kind.empty() || !o.params.is_null())) {
    return InvalidArgument(
        "--kind and --params go into join requests to a URL; a join "
        "function (--join " +
        o.join + ") takes its params from --join-args");
  }
  if (o.join.empty() && o.ticket_secret.empty()) {
    return InvalidArgument(
        "without --join the bots mint their tickets: the ticket secret is "
        "missing (TESSERA_SHARD_TICKET_SECRET)");
  }
  return Status::Ok();
}

Result<tcp::endpoint> Resolve(const Url& url) {
  asio::io_context ioc;
  tcp::resolver resolver(ioc);
  boost::system::error_code ec;
  auto results = resolver.resolve(url.host, std::to_string(url.port), ec);
  if (ec || results.empty()) {
    return IoError("cannot resolve " + url.host + ": " + ec.message());
  }
  // Prefer IPv4 ("localhost" may list ::1 first, where the dev server
  // does not listen by default).
  for (const auto& entry : results) {
    if (entry.endpoint().address().is_v4()) return entry.endpoint();
  }
  return results.begin()->endpoint();
}

Result<std::unique_ptr<asio::ssl::context>> MakeTls(const LoadTestOptions& o) {
  auto tls =
      std::make_unique<asio::ssl::context>(asio::ssl::context::tls_client);
  boost::system::error_code ec;
  tls->set_default_verify_paths(ec);
  if (!o.ca_file.empty()) {
    tls->load_verify_file(o.ca_file, ec);
    if (ec) return IoError("--ca-file " + o.ca_file + ": " + ec.message());
  }
  tls->set_verify_mode(o.insecure ? asio::ssl::verify_none
                                  : asio::ssl::verify_peer);
  return tls;
}

// Everything a run needs before the first bot starts.
struct Setup {
  BotPlan plan;
  std::unique_ptr<asio::ssl::context> tls;
  tcp::endpoint shard_target;
};

Result<Setup> Prepare(const LoadTestOptions& o) {
  TESSERA_RETURN_IF_ERROR(CheckOptions(o));
  Setup setup;
  BotPlan& plan = setup.plan;
  for (const std::string& text : o.inputs) {
    Result<InputTemplate> tpl = InputTemplate::Parse(text);
    if (!tpl.ok()) return tpl.status();
    plan.inputs.push_back(std::move(tpl.value()));
  }
  Result<Url> base = ParseUrl(o.url);
  if (!base.ok()) return InvalidArgument("--url: " + base.status().message());
  plan.shard_url = *base;
  if (plan.shard_url.scheme == "http") plan.shard_url.scheme = "ws";
  if (plan.shard_url.scheme == "https") plan.shard_url.scheme = "wss";
  Result<tcp::endpoint> shard_target = Resolve(plan.shard_url);
  if (!shard_target.ok()) return shard_target.status();
  setup.shard_target = plan.shard_endpoint = *shard_target;

  const bool need_tls = plan.shard_url.tls();
  plan.join.shard = o.shard;
  plan.join.shards = o.shards;
  plan.join.kind = o.kind;
  plan.join.params = o.params;
  plan.join.extra = o.join_args;
  plan.ticket_secret = o.ticket_secret;
  plan.ticket_ttl_secs = static_cast<int64_t>(o.duration_secs + o.drain_secs +
                                              o.connect_timeout_secs) +
                         600;
  plan.join_by_request = !o.join.empty();
  plan.join_by_function = IsJoinFunction(o.join);
  bool join_tls = false;
  if (plan.join_by_function) {
    // A guest sign-in and the function's call, both on the server.
    if (base->scheme != "http" && base->scheme != "https") {
      return InvalidArgument(
          "--join with a function needs an http:// or https:// --url");
    }
    plan.function_path = FunctionPath(o.join);
    plan.function_args = o.join_args;
    plan.join_url = *base;
    plan.join_url.path = "/";
    plan.join_endpoint = *shard_target;
    join_tls = base->tls();
  } else if (plan.join_by_request) {
    Result<Url> join = ResolveUrl(*base, o.join);
    if (!join.ok())
      return InvalidArgument("--join: " + join.status().message());
    if (join->scheme != "http" && join->scheme != "https") {
      return InvalidArgument("--join must be an http:// or https:// URL");
    }
    plan.join_url = *join;
    Result<tcp::endpoint> join_target = Resolve(plan.join_url);
    if (!join_target.ok()) return join_target.status();
    plan.join_endpoint = *join_target;
    join_tls = join->tls();
  }
  if (need_tls || join_tls) {
    Result<std::unique_ptr<asio::ssl::context>> tls = MakeTls(o);
    if (!tls.ok()) return tls.status();
    setup.tls = std::move(tls.value());
  }
  plan.shard_tls = need_tls ? setup.tls.get() : nullptr;
  plan.join_tls = join_tls ? setup.tls.get() : nullptr;
  plan.rate = o.rate;
  plan.inputs_per_bot = o.inputs_per_bot;
  plan.aim = o.aim;
  plan.interp_delay_ms = o.interp_delay_ms;
  plan.tick_rate = o.tick_rate;
  const bool aims =
      std::any_of(plan.inputs.begin(), plan.inputs.end(),
                  [](const InputTemplate& t) { return t.aims(); });
  if (aims && !o.aim) {
    return InvalidArgument(
        "an --input template uses $aim:x/y/z but no --aim ENTITY was given");
  }
  plan.connect_timeout = std::chrono::milliseconds(
      static_cast<int64_t>(o.connect_timeout_secs * 1000));
  return setup;
}

void RaiseFileLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 &&
      limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
}

}  // namespace

Result<Report> RunLoadTest(const LoadTestOptions& o,
                           const ProgressFn& progress) {
  Result<Setup> prepared = Prepare(o);
  if (!prepared.ok()) return prepared.status();
  Setup& setup = *prepared;
  RaiseFileLimit();

  const int threads = o.threads;
  IoThreads io(threads);
  std::unique_ptr<DelayProxy> proxy;
  if (o.net_delay_ms > 0 || o.net_jitter_ms > 0) {
    DelayProxyOptions proxy_options;
    proxy_options.target = setup.shard_target;
    proxy_options.delay =
        std::chrono::microseconds(static_cast<int64_t>(o.net_delay_ms * 1000));
    proxy_options.jitter =
        std::chrono::microseconds(static_cast<int64_t>(o.net_jitter_ms * 1000));
    Result<std::unique_ptr<DelayProxy>> started =
        DelayProxy::Start(io.pointers(), proxy_options);
    if (!started.ok()) return started.status();
    proxy = std::move(*started);
    setup.plan.shard_endpoint = proxy->endpoint();
  }

  // Each io thread ends once its bots are done (after Release).
  io.Start();

  RunStats stats(threads);
  Report report;
  const std::optional<double> server_cpu0 =
      o.server_pid > 0 ? ProcessCpuSeconds(o.server_pid) : std::nullopt;
  const double client_cpu0 = SelfCpuSeconds();
  const Clock::time_point start = Clock::now();
  const Clock::time_point inputs_until = start + Secs(o.duration_secs);
  const std::optional<Clock::time_point> first_input_at =
      o.together_secs >= 0
          ? std::optional<Clock::time_point>(start + Secs(o.together_secs))
          : std::nullopt;

  std::vector<std::shared_ptr<Bot>> bots;
  bots.reserve(static_cast<size_t>(o.bots));
  for (int64_t i = 0; i < o.bots; ++i) {
    const int t = static_cast<int>(i % threads);
    bots.push_back(std::make_shared<Bot>(io.ioc(t), setup.plan,
                                         o.bot_offset + i, stats.shard(t)));
    const Clock::time_point at =
        start + Secs(o.ramp_secs * static_cast<double>(i) /
                     static_cast<double>(o.bots));
    asio::post(io.ioc(t), [bot = bots.back(), ioc = &io.ioc(t), at,
                           inputs_until, first_input_at] {
      auto timer = std::make_shared<asio::steady_timer>(*ioc, at);
      timer->async_wait([bot, timer, inputs_until,
                         first_input_at](boost::system::error_code) {
        bot->Start(inputs_until, first_input_at);
      });
    });
  }

  // One series point per second until `until`, or earlier once `done`.
  int64_t second = 0;
  auto sample_until = [&](Clock::time_point until,
                          const std::function<bool()>& done) {
    for (;;) {
      const Clock::time_point next = start + std::chrono::seconds(second + 1);
      if (done && done()) return;
      if (next > until) {
        // Poll for `done` till `until`; the partial second is kept.
        while (Clock::now() < until && !(done && done())) {
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        return;
      }
      while (Clock::now() < next) {
        if (done && done()) return;
        std::this_thread::sleep_for(std::min<Clock::duration>(
            next - Clock::now(), std::chrono::milliseconds(done ? 20 : 250)));
      }
      report.series.push_back(stats.TakeSecond(second++));
      if (progress) progress(report.series.back(), stats.Totals());
    }
  };
  // With a fixed number of inputs, the run ends once all are answered.
  const uint64_t bot_count = static_cast<uint64_t>(o.bots);
  sample_until(inputs_until, o.inputs_per_bot > 0
                                 ? std::function<bool()>([&stats, bot_count] {
                                     return stats.done_sending() == bot_count &&
                                            stats.in_flight() == 0;
                                   })
                                 : nullptr);
  // The answers to the last inputs.
  sample_until(inputs_until + Secs(o.drain_secs),
               [&stats] { return stats.in_flight() == 0; });
  report.elapsed_secs =
      std::chrono::duration<double>(Clock::now() - start).count();
  if (o.server_pid > 0) {
    const std::optional<double> cpu1 = ProcessCpuSeconds(o.server_pid);
    const std::optional<uint64_t> rss = PeakRssKib(o.server_pid);
    if (server_cpu0 && cpu1) {
      report.server =
          ServerUsage{o.server_pid, *cpu1 - *server_cpu0, rss.value_or(0)};
    }
  }

  for (size_t i = 0; i < bots.size(); ++i) {
    asio::post(io.ioc(static_cast<int>(i) % threads),
               [bot = bots[i]] { bot->Close(); });
  }
  // The close handshakes go through the proxy too.
  if (proxy) proxy->StopAccepting();
  io.Release();
  // Bounded: a server that never answers the close must not hang us.
  if (!io.WaitDone(std::chrono::seconds(3))) {
    if (proxy) proxy->Stop();
    if (!io.WaitDone(std::chrono::milliseconds(500))) io.Stop();
  }
  io.Join();
  report.client_cpu_seconds = SelfCpuSeconds() - client_cpu0;
  SeriesPoint last = stats.TakeSecond(second);
  if (last.sent + last.acked + last.refused + last.frames + last.errors > 0) {
    report.series.push_back(std::move(last));
  }
  report.counts = stats.Totals();
  for (auto& bot : bots) bot->Detach();
  bots.clear();
  proxy.reset();

  RunSettings& s = report.settings;
  s.url = o.url;
  s.join = setup.plan.join_by_function  ? "function " + o.join
           : setup.plan.join_by_request ? setup.plan.join_url.ToString()
                                        : "";
  s.shard = o.shard;
  s.bots = o.bots;
  s.bot_offset = o.bot_offset;
  s.rate = o.rate;
  s.duration_secs = o.duration_secs;
  s.ramp_secs = o.ramp_secs;
  s.threads = o.threads;
  s.net_delay_ms = o.net_delay_ms;
  s.net_jitter_ms = o.net_jitter_ms;
  s.inputs = o.inputs;
  if (o.aim) {
    s.aim = std::to_string(*o.aim);
    s.interp_delay_ms = o.interp_delay_ms;
    s.tick_rate = o.tick_rate;
  }
  return report;
}

std::string FormatProgressLine(const SeriesPoint& second, const Counts& totals,
                               int64_t bots) {
  char rtt[32] = "-";
  if (second.rtt_us.count() > 0) {
    std::snprintf(rtt, sizeof rtt, "%.1f ms",
                  second.rtt_us.Percentile(99) / 1000.0);
  }
  char line[256];
  std::snprintf(line, sizeof line,
                "[%4" PRId64 "s] %" PRIu64 "/%" PRId64
                " bots connected | %" PRIu64 " inputs/s, %" PRIu64
                " acked/s | p99 %s | %" PRIu64 " errors, %" PRIu64
                " connect failures",
                second.t + 1, second.connected, bots, second.sent, second.acked,
                rtt, totals.errors, totals.connect_failures);
  return line;
}

}  // namespace tessera::loadtest
