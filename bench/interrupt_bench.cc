// interrupt_bench: how long a guest's tight loop runs on after another
// thread calls Instance::RequestInterrupt() (what the watchdog does). It
// reports, never asserts: the runtime test only checks that the interrupt
// stops the loop at all (src/wasm/runtime_test.cc), because a latency bound
// in a test flakes on a busy machine.
//
//   interrupt_bench [--runs N]
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "wasm/instance.h"
#include "wasm/loader.h"
#include "wasm/testing/wat.h"

namespace {

using namespace tessera::wasm;
using Clock = std::chrono::steady_clock;

const char kSpin[] = R"((module
  (memory (export "memory") 1)
  (func (export "spin") (loop $l (br $l)))
))";

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 200;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--runs" && i + 1 < argc) {
      runs = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: interrupt_bench [--runs N]\n");
      return 2;
    }
  }
  const std::filesystem::path cache =
      std::filesystem::temp_directory_path() /
      ("tessera-interrupt-bench-" + std::to_string(getpid()));
  LoadOptions options;
  options.cache_dir = cache.string();
  auto module = LoadModule(testing::Wat(kSpin), options);
  if (!module.ok()) {
    std::fprintf(stderr, "loading: %s\n", module.status().ToString().c_str());
    return 1;
  }
  std::vector<double> latencies_us;
  for (int run = 0; run < runs; ++run) {
    auto inst = Instance::Create(*module);
    if (!inst.ok()) {
      std::fprintf(stderr, "instantiating: %s\n",
                   inst.status().ToString().c_str());
      return 1;
    }
    Instance* raw = inst->get();
    raw->SetFuel(int64_t{1} << 62);
    std::atomic<int64_t> requested_ns{0};
    std::thread interrupter([raw, &requested_ns] {
      // Let the loop get going (a bench may guess; a test must not).
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      requested_ns = Clock::now().time_since_epoch().count();
      raw->RequestInterrupt();
    });
    tessera::Status st = raw->Call(raw->info().FindFunc("spin"), {}, {});
    const int64_t returned_ns = Clock::now().time_since_epoch().count();
    interrupter.join();
    if (st.ok() || raw->last_trap() != TrapKind::kInterrupted) {
      std::fprintf(stderr, "run %d: not interrupted: %s\n", run,
                   st.ToString().c_str());
      return 1;
    }
    latencies_us.push_back(
        static_cast<double>(returned_ns - requested_ns.load()) / 1000.0);
  }
  std::error_code ec;
  std::filesystem::remove_all(cache, ec);
  std::printf(
      "interrupt -> return of a tight loop, %d runs: median %.1f us, p99 "
      "%.1f us, max %.1f us\n",
      runs, Percentile(latencies_us, 0.5), Percentile(latencies_us, 0.99),
      *std::max_element(latencies_us.begin(), latencies_us.end()));
  return 0;
}
