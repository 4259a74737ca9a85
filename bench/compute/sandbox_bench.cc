#include "bench/compute/sandbox_bench.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "common/clock.h"
#include "compute/compute_test_guests.h"
#include "compute/module_instance.h"
#include "guest/watchdog.h"

namespace tessera::bench {
namespace {

using compute::CallLimits;
using compute::CallOutcome;
using compute::ComputeInstance;
using compute::HostCallResult;
using compute::HostCalls;

// Host functions a trivial call never uses much: answers at once.
class NullCalls final : public HostCalls {
 public:
  int64_t NowMs() override { return ++now_; }
  void FillRandom(std::span<uint8_t> out) override {
    std::fill(out.begin(), out.end(), uint8_t{7});
  }
  HostCallResult GetState(std::string* bytes) override {
    bytes->clear();
    return HostCallResult::Error(-1, "no state");
  }
  HostCallResult SetState(std::string_view) override {
    return HostCallResult::Ok();
  }
  HostCallResult EmitEvent(std::string_view, std::string_view) override {
    return HostCallResult::Ok();
  }
  HostCallResult EmitChannel(std::string_view, std::string_view) override {
    return HostCallResult::Ok();
  }
  HostCallResult EmitSpatial(std::string_view, float, float, float,
                             std::string_view) override {
    return HostCallResult::Ok();
  }
  void Log(int, std::string_view) override {}

 private:
  int64_t now_ = 0;
};

double NowUs() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double CpuUs() { return static_cast<double>(ThreadCpuClock::Get()->NowUs()); }

Result<std::unique_ptr<ComputeInstance>> Make(const char* name,
                                              guest::Watchdog* watchdog) {
  auto module = compute::testing::LoadComputeGuest(name);
  if (!module.ok()) return module.status();
  compute::InstanceOptions options;
  options.max_run_ms = 10'000;
  guest::SandboxEnv env;
  env.watchdog = watchdog;
  return ComputeInstance::Create(*module, options, env);
}

void PrintRow(const char* name, const Summary& wall, double cpu_us) {
  std::printf("  %-46s %9.2f %9.2f %9.2f\n", name, wall.p50, wall.p99, cpu_us);
}

nlohmann::json ToJson(const Summary& s, double cpu_us) {
  return {{"p50_us", s.p50},
          {"p99_us", s.p99},
          {"mean_us", s.mean},
          {"cpu_us_per_call", cpu_us},
          {"calls", s.n}};
}

}  // namespace

Summary Summarize(std::vector<double>& samples) {
  Summary s;
  s.n = samples.size();
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  auto at = [&](double q) {
    size_t i = static_cast<size_t>(q * static_cast<double>(samples.size()));
    return samples[std::min(i, samples.size() - 1)];
  };
  s.p50 = at(0.50);
  s.p99 = at(0.99);
  double sum = 0;
  for (double v : samples) sum += v;
  s.mean = sum / static_cast<double>(samples.size());
  return s;
}

bool RunSandboxCall(int calls, nlohmann::json* out) {
  guest::Watchdog watchdog(RealClock::Get());
  auto made = Make("echo", &watchdog);
  if (!made.ok()) {
    std::fprintf(stderr, "sandbox: %s\n", made.status().ToString().c_str());
    return false;
  }
  ComputeInstance& instance = **made;
  NullCalls host;
  CallLimits limits;
  limits.fuel = 10'000'000;
  limits.max_run_ms = 1000;
  if (!instance.Init(host, limits).ok) {
    std::fprintf(stderr, "sandbox: echo init failed\n");
    return false;
  }
  const std::string input =
      R"({"export":"echo","params":{},"callerUserId":"bench"})";
  std::vector<double> invoke_wall, tick_wall, bare_wall;
  invoke_wall.reserve(calls);
  tick_wall.reserve(calls);
  bare_wall.reserve(calls);
  int64_t fuel = 0;
  // Warm up (first calls touch fresh pages).
  for (int i = 0; i < 100; ++i) (void)instance.Invoke(input, host, limits);
  double cpu0 = CpuUs();
  for (int i = 0; i < calls; ++i) {
    const double t0 = NowUs();
    CallOutcome r = instance.Invoke(input, host, limits);
    invoke_wall.push_back(NowUs() - t0);
    if (!r.ok || r.output != input) {
      std::fprintf(stderr, "sandbox: echo returned \"%s\" (%s)\n",
                   r.output.c_str(), r.error.c_str());
      return false;
    }
    fuel = r.fuel_used;
  }
  const double invoke_cpu = (CpuUs() - cpu0) / calls;
  cpu0 = CpuUs();
  for (int i = 0; i < calls; ++i) {
    const double t0 = NowUs();
    CallOutcome r = instance.Tick(100, host, limits);
    tick_wall.push_back(NowUs() - t0);
    if (!r.ok) {
      std::fprintf(stderr, "sandbox: tick failed: %s\n", r.error.c_str());
      return false;
    }
  }
  const double tick_cpu = (CpuUs() - cpu0) / calls;
  // The baseline: one host function as the engine answers it, without the
  // sandbox (a virtual call; batches of 1000 so the clock's cost is small).
  HostCalls* calls_ptr = &host;
  volatile int64_t sink = 0;
  cpu0 = CpuUs();
  for (int i = 0; i < calls; ++i) {
    const double t0 = NowUs();
    for (int k = 0; k < 1000; ++k) sink = sink + calls_ptr->NowMs();
    bare_wall.push_back((NowUs() - t0) / 1000);
  }
  const double bare_cpu = (CpuUs() - cpu0) / calls / 1000;
  Summary inv = Summarize(invoke_wall), tick = Summarize(tick_wall),
          bare = Summarize(bare_wall);
  std::printf("\nSandbox call alone (in-process, %d calls each; µs)\n", calls);
  std::printf("  %-46s %9s %9s %9s\n", "", "p50", "p99", "cpu/call");
  PrintRow("ComputeInstance::Invoke, trivial export (echo)", inv, invoke_cpu);
  PrintRow("ComputeInstance::Tick, empty tick", tick, tick_cpu);
  std::printf("  %-46s %9.4f %9.4f %9.4f\n",
              "baseline: bare host function call (virtual)", bare.p50, bare.p99,
              bare_cpu);
  std::printf(
      "  invoke fuel per call: %lld; invoke p50 = %.0fx the bare call, "
      "%.2fx the empty tick (target: invoke <= 5 µs)\n",
      static_cast<long long>(fuel), inv.p50 / std::max(bare.p50, 1e-3),
      inv.p50 / std::max(tick.p50, 1e-3));
  (*out)["invoke"] = ToJson(inv, invoke_cpu);
  (*out)["invoke"]["fuel_per_call"] = fuel;
  (*out)["empty_tick"] = ToJson(tick, tick_cpu);
  (*out)["bare_host_call"] = ToJson(bare, bare_cpu);
  return true;
}

bool RunFuelCalibration(bool quick, nlohmann::json* out) {
  guest::Watchdog watchdog(RealClock::Get());
  auto made = Make("busy", &watchdog);
  if (!made.ok()) {
    std::fprintf(stderr, "fuel: %s\n", made.status().ToString().c_str());
    return false;
  }
  ComputeInstance& instance = **made;
  NullCalls host;
  CallLimits limits;
  limits.fuel = int64_t{1} << 50;
  limits.max_run_ms = 60'000;
  if (!instance.Init(host, limits).ok) return false;
  std::printf("\nFuel calibration (the busy module's loop; thread CPU)\n");
  std::printf("  %12s %14s %10s %14s\n", "iterations", "fuel", "cpu ms",
              "fuel per ms");
  std::vector<double> rates;
  const std::vector<int64_t> sizes =
      quick ? std::vector<int64_t>{200'000, 400'000}
            : std::vector<int64_t>{1'000'000, 4'000'000, 16'000'000, 16'000'000,
                                   16'000'000};
  nlohmann::json rows = nlohmann::json::array();
  for (int64_t n : sizes) {
    const std::string input = R"({"export":"spin","params":{"iterations":)" +
                              std::to_string(n) + R"(},"callerUserId":""})";
    CallOutcome r = instance.Invoke(input, host, limits);
    if (!r.ok) {
      std::fprintf(stderr, "fuel: busy invoke failed: %s\n", r.error.c_str());
      return false;
    }
    const double cpu_ms = static_cast<double>(r.cpu_us) / 1000.0;
    const double rate =
        cpu_ms > 0 ? static_cast<double>(r.fuel_used) / cpu_ms : 0;
    rates.push_back(rate);
    std::printf("  %12lld %14lld %10.2f %14.0f\n", static_cast<long long>(n),
                static_cast<long long>(r.fuel_used), cpu_ms, rate);
    rows.push_back({{"iterations", n},
                    {"fuel", r.fuel_used},
                    {"cpu_ms", cpu_ms},
                    {"fuel_per_ms", rate}});
  }
  Summary s = Summarize(rates);
  std::printf(
      "  => 1 compute unit (1 ms of CPU) ~= %.0f fuel on this machine "
      "(median of %zu)\n",
      s.p50, s.n);
  (*out)["runs"] = rows;
  (*out)["fuel_per_cpu_ms"] = s.p50;
  return s.p50 > 0;
}

}  // namespace tessera::bench
