#include "bench/compute/tick_bench.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "common/clock.h"
#include "compute/compute_test_guests.h"
#include "compute/engine.h"
#include "compute/memory_compute_store.h"
#include "compute/policy.h"
#include "guest/worker_pool.h"

namespace tessera::bench {
namespace {

namespace fs = std::filesystem;
using namespace compute;  // NOLINT: bench-local

// "Compiles" every upload to one prebuilt test module (the upload names
// it), so the engine runs real modules without the toolchain.
class PrebuiltCompiler final : public SourceCompiler {
 public:
  explicit PrebuiltCompiler(fs::path dir) : dir_(std::move(dir)) {}
  CompileResult Compile(const VersionRecord& version) override {
    CompileResult result;
    auto it = version.files.find("module.cc");
    const std::string name =
        it == version.files.end() ? "" : it->second.substr(3);  // "// "
    Result<std::vector<uint8_t>> bytes = testing::ComputeGuestBytes(name);
    if (!bytes.ok()) {
      result.log = bytes.status().ToString();
      return result;
    }
    fs::create_directories(dir_);
    result.wasm = dir_ / (name + ".wasm");
    if (!fs::exists(result.wasm)) {
      std::ofstream(result.wasm, std::ios::binary)
          .write(reinterpret_cast<const char*>(bytes->data()),
                 static_cast<std::streamsize>(bytes->size()));
    }
    result.ok = true;
    result.size_bytes = static_cast<int64_t>(bytes->size());
    return result;
  }

 private:
  fs::path dir_;
};

// Process CPU time (user + system), µs.
double ProcessCpuUs() {
  std::ifstream in("/proc/self/stat");
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  const size_t close = text.rfind(')');
  std::istringstream fields(text.substr(close + 2));
  std::string f;
  unsigned long long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && fields >> f; ++i) {
    if (i == 14) utime = std::stoull(f);
    if (i == 15) stime = std::stoull(f);
  }
  return static_cast<double>(utime + stime) * 1e6 /
         static_cast<double>(sysconf(_SC_CLK_TCK));
}

double WallUs() { return static_cast<double>(RealClock::Get()->NowUs()); }

struct Share {
  double cpu_cores = 0;  // CPU seconds per wall second
  double cadence = 0;    // ticks run / ticks due
  double cpu_us_per_tick = 0;
  int64_t ticks = 0;
};

// The baseline: N tasks at 10 Hz on absolute deadlines, doing nothing.
class EmptyTask final : public guest::WorkerPool::Task {
 public:
  explicit EmptyTask(std::atomic<int64_t>* runs) : runs_(runs) {}
  std::optional<int64_t> Run(int64_t now_us) override {
    if (next_ == 0) next_ = now_us;
    runs_->fetch_add(1, std::memory_order_relaxed);
    next_ += 100'000;
    return next_;
  }

 private:
  std::atomic<int64_t>* runs_;
  int64_t next_ = 0;
};

Share RunEmptyTasks(int n, double seconds) {
  guest::WorkerPool pool;
  std::atomic<int64_t> runs{0};
  for (int i = 0; i < n; ++i) {
    (void)pool.Add(std::make_shared<EmptyTask>(&runs));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // settle
  const int64_t r0 = runs.load();
  const double c0 = ProcessCpuUs(), w0 = WallUs();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  const double c1 = ProcessCpuUs(), w1 = WallUs();
  const int64_t ticks = runs.load() - r0;
  pool.Shutdown();
  Share s;
  s.cpu_cores = (c1 - c0) / (w1 - w0);
  s.ticks = ticks;
  s.cadence = static_cast<double>(ticks) / (n * 10.0 * (w1 - w0) / 1e6);
  s.cpu_us_per_tick = ticks > 0 ? (c1 - c0) / static_cast<double>(ticks) : 0;
  return s;
}

Result<Share> RunEngine(int n, double seconds, const std::string& guest,
                        const fs::path& scratch) {
  MemoryComputeStore store;
  PrebuiltCompiler compiler(scratch / "prebuilt");
  guest::WorkerPool pool;
  std::mutex mu;
  std::condition_variable cv;
  int compiled = 0;
  EngineOptions options;
  options.store = &store;
  options.compiler = &compiler;
  options.workers = &pool;
  options.cache_dir = scratch / "cache";
  Result<Policy> ceilings =
      ParseCeilings(R"({"maxModules": 100000, "maxTickHz": 60})");
  if (!ceilings.ok()) return ceilings.status();
  options.ceilings = *ceilings;
  options.on_compiled = [&](const VersionRecord&) {
    std::lock_guard<std::mutex> lock(mu);
    ++compiled;
    cv.notify_all();
  };
  ComputeEngine engine(options);
  TESSERA_RETURN_IF_ERROR(engine.Start());
  auto policy =
      engine.SetPolicy(R"({"maxModules": )" + std::to_string(n) + "}");
  if (!policy.ok()) return policy.status();
  for (int i = 0; i < n; ++i) {
    const std::string name = "m" + std::to_string(i);
    auto m = engine.UpsertModule(name, "bench", /*always_on=*/true);
    if (!m.ok()) return m.status();
    DeployRequest deploy;
    deploy.module = name;
    deploy.language = Language::kCpp;
    deploy.files = {{"module.cc", "// " + guest}};
    auto v = engine.DeployVersion(deploy);
    if (!v.ok()) return v.status();
    TriggerRecord tick;
    tick.type = TriggerType::kTick;
    tick.tick_hz = 10;
    auto t = engine.UpsertTrigger({name, tick});
    if (!t.ok()) return t.status();
  }
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return compiled >= n; });
  }
  for (int i = 0; i < n; ++i) {
    auto on = engine.SetEnabled("m" + std::to_string(i), true);
    if (!on.ok()) return on.status();
  }
  // Every module loaded (instance + init) before measuring.
  const double deadline = WallUs() + 120e6;
  while (engine.counters().loaded_modules < n && WallUs() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (engine.counters().loaded_modules < n) {
    return Status(StatusCode::kDeadlineExceeded,
                  std::to_string(engine.counters().loaded_modules) + " of " +
                      std::to_string(n) + " modules loaded");
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // settle
  const ComputeEngine::Counters k0 = engine.counters();
  const double c0 = ProcessCpuUs(), w0 = WallUs();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  const double c1 = ProcessCpuUs(), w1 = WallUs();
  const ComputeEngine::Counters k1 = engine.counters();
  engine.Shutdown();
  pool.Shutdown();
  if (k1.failures != k0.failures) {
    return Status(StatusCode::kInternal,
                  std::to_string(k1.failures - k0.failures) + " failed runs");
  }
  Share s;
  s.ticks = k1.ticks - k0.ticks;
  s.cpu_cores = (c1 - c0) / (w1 - w0);
  s.cadence = static_cast<double>(s.ticks) / (n * 10.0 * (w1 - w0) / 1e6);
  s.cpu_us_per_tick =
      s.ticks > 0 ? (c1 - c0) / static_cast<double>(s.ticks) : 0;
  return s;
}

void Row(const char* name, const Share& s, unsigned cores) {
  std::printf("  %-44s %8.3f %8.1f%% %9.3f %10.1f\n", name, s.cpu_cores,
              100.0 * s.cpu_cores / cores, s.cadence, s.cpu_us_per_tick);
}

nlohmann::json ToJson(const Share& s, unsigned cores) {
  return {{"cpu_cores", s.cpu_cores},
          {"cpu_share_pct_of_machine", 100.0 * s.cpu_cores / cores},
          {"cadence", s.cadence},
          {"ticks", s.ticks},
          {"cpu_us_per_tick", s.cpu_us_per_tick}};
}

}  // namespace

bool RunTicking(int modules, double seconds, const fs::path& scratch,
                nlohmann::json* out) {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  std::printf(
      "\n%d modules ticking at 10 Hz for %.0f s (in-process engine, "
      "%u worker threads)\n",
      modules, seconds, cores);
  std::printf("  %-44s %8s %9s %9s %10s\n", "", "cores", "machine", "cadence",
              "cpu µs/tick");
  const Share base = RunEmptyTasks(modules, seconds);
  Row("baseline: empty pool tasks at 10 Hz", base, cores);
  (*out)["baseline_empty_tasks"] = ToJson(base, cores);
  bool ok = true;
  for (const char* guest : {"echo", "counter"}) {
    Result<Share> s = RunEngine(modules, seconds, guest, scratch / guest);
    if (!s.ok()) {
      std::fprintf(stderr, "ticking %s: %s\n", guest,
                   s.status().ToString().c_str());
      ok = false;
      continue;
    }
    const std::string name =
        std::string("engine, ") + guest +
        (std::string(guest) == "echo" ? " (empty tick)"
                                      : " (state get+set, a log line)");
    Row(name.c_str(), *s, cores);
    (*out)[guest] = ToJson(*s, cores);
    (*out)[guest]["cpu_ratio_to_baseline"] =
        base.cpu_cores > 0 ? s->cpu_cores / base.cpu_cores : 0;
    if (s->ticks == 0) ok = false;
  }
  return ok;
}

}  // namespace tessera::bench
