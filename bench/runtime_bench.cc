// runtime_bench: what running game code inside tessera's WebAssembly runtime
// costs, measured against the same code built natively, in the same run.
//
// Measured, all on the main thread:
//  - Workloads (bench/guest): the thread's CPU time (CLOCK_THREAD_CPUTIME_ID,
//    so time the thread spends preempted by other processes does not count)
//    of one call of each entry point, natively (g++ -O2, linked into this
//    binary) and through Instance::Call on the wasm32 build (wasm2c + cc),
//    once with fuel instrumentation (the production setting) and once
//    without. The parameter is grown until one native call takes --min-ms.
//    Repetitions interleave native, fuel and no-fuel runs so drift hits all
//    three alike; the table shows medians, the last line also the geometric
//    mean of ratios of the per-workload minimum times.
//  - Instance creation: wall time of Instance::Create of the bench module
//    (memory reservation, data segments), and of its destruction.
//  - Empty call: thread CPU time per Instance::Call of the exported `nop`,
//    including the argument checks and the guarded (setjmp) entry.
//  - Cold compile: LoadModule of the arena example, C++ and Rust
//    (examples/arena-rust) (the shard ABI) into an
//    empty cache directory: check + codegen (wasm2c) + C compile, wall
//    time, and the C compiler's CPU time.
//
// Exit code: 1 if any wasm checksum differs from the native one, the bench
// module fails to load or a workload call traps; timings and the arena
// compile are reported, never asserted.
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "guest/workloads.h"
#include "shard/shard_abi.h"
#include "wasm/instance.h"
#include "wasm/loader.h"

namespace tessera::bench {
namespace {

namespace fs = std::filesystem;
using wasm::Instance;
using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// CPU time consumed by the calling thread.
double ThreadCpuMs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

// CPU time (user + sys) of the terminated, waited-for child processes: the
// C compiler runs LoadModule starts.
double ChildrenCpuMs() {
  rusage ru;
  getrusage(RUSAGE_CHILDREN, &ru);
  auto ms = [](const timeval& tv) {
    return tv.tv_sec * 1e3 + tv.tv_usec / 1e3;
  };
  return ms(ru.ru_utime) + ms(ru.ru_stime);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct Options {
  bool quick = false;
  int reps = 7;
  double min_ms = 50;  // minimum native time of one repetition
  int creations = 1000;
  int calls = 1000000;
  std::string arena = TESSERA_BENCH_ARENA_WASM;
  bool arena_given = false;
  std::string opt_level = "-O2";  // for the generated C
  std::string cache_dir;          // kept, with the generated C, if given
  std::string only;               // run just this workload, nothing else
};

void Usage() {
  std::fprintf(stderr,
               "usage: runtime_bench [--quick] [--reps N] [--min-ms MS]\n"
               "                     [--arena PATH] [--opt -O2|-O3|...]\n"
               "                     [--cache DIR] [--only WORKLOAD]\n"
               "  --quick   smoke test: 1 repetition of ~2 ms, no arena\n"
               "  --cache   compile the bench module into DIR and keep the\n"
               "            generated C there (default: a temporary dir)\n"
               "  --only    time one workload (sim, astar, nbody) and skip\n"
               "            the other measurements\n");
}

bool ParseArgs(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> const char* {
      return i + 1 < argc ? argv[++i] : nullptr;
    };
    const char* v = nullptr;
    if (a == "--quick") {
      o->quick = true;
      o->reps = 1;
      o->min_ms = 2;
      o->creations = 100;
      o->calls = 100000;
    } else if (a == "--reps" && (v = value())) {
      o->reps = std::max(1, std::atoi(v));
    } else if (a == "--min-ms" && (v = value())) {
      o->min_ms = std::atof(v);
    } else if (a == "--arena" && (v = value())) {
      o->arena = v;
      o->arena_given = true;
    } else if (a == "--opt" && (v = value())) {
      o->opt_level = v;
    } else if (a == "--cache" && (v = value())) {
      o->cache_dir = v;
    } else if (a == "--only" && (v = value())) {
      o->only = v;
    } else {
      Usage();
      return false;
    }
  }
  return true;
}

std::optional<std::vector<uint8_t>> ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return std::nullopt;
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

// One way of running the bench module: a compiled module and an instance.
struct Tier {
  const char* label;
  bool fuel;
  std::shared_ptr<const wasm::CompiledModule> module;
  std::unique_ptr<Instance> instance;
  wasm::LoadStats stats;
};

bool LoadTier(const char* path, const std::vector<uint8_t>& wasm_bytes,
              const Options& o, const std::string& cache_dir, Tier* tier) {
  wasm::LoadOptions lo;
  lo.fuel = tier->fuel;
  lo.cache_dir = cache_dir;
  lo.opt_level = o.opt_level;
  lo.keep_c_source = !o.cache_dir.empty();
  auto m = wasm::LoadModule(wasm_bytes, lo, &tier->stats);
  if (!m.ok()) {
    std::fprintf(stderr, "loading %s (%s): %s\n", path, tier->label,
                 m.status().ToString().c_str());
    return false;
  }
  tier->module = *m;
  auto inst = Instance::Create(tier->module);
  if (!inst.ok()) {
    std::fprintf(stderr, "instantiating (%s): %s\n", tier->label,
                 inst.status().ToString().c_str());
    return false;
  }
  tier->instance = std::move(*inst);
  return true;
}

struct Workload {
  const char* name;  // also the wasm export
  unsigned long long (*native)(unsigned);
  // Rust rows: the C++ version, whose checksum the native one must equal.
  unsigned long long (*reference)(unsigned) = nullptr;
};

const Workload kWorkloads[] = {
    {"sim", tessera_bench_sim},
    {"astar", tessera_bench_astar},
    {"nbody", tessera_bench_nbody},
};

// The same workloads in Rust (bench/guest-rust), native build.
extern "C" {
unsigned long long tessera_rust_bench_sim(unsigned ticks);
unsigned long long tessera_rust_bench_astar(unsigned searches);
unsigned long long tessera_rust_bench_nbody(unsigned steps);
}
const Workload kRustWorkloads[] = {
    {"sim", tessera_rust_bench_sim, tessera_bench_sim},
    {"astar", tessera_rust_bench_astar, tessera_bench_astar},
    {"nbody", tessera_rust_bench_nbody, tessera_bench_nbody},
};

// Runs one workload call in a tier; returns its checksum, or nullopt if the
// call failed (the message is printed).
std::optional<uint64_t> RunWasm(Tier& tier, int func, unsigned n, double* ms) {
  tier.instance->SetFuel(wasm::kUnlimitedFuel);
  uint64_t args[1] = {n};
  uint64_t result[1] = {0};
  double t0 = ThreadCpuMs();
  Status st = tier.instance->Call(func, args, result);
  *ms = ThreadCpuMs() - t0;
  if (!st.ok()) {
    std::fprintf(stderr, "wasm call failed (%s): %s\n", tier.label,
                 st.ToString().c_str());
    return std::nullopt;
  }
  return result[0];
}

uint64_t RunNative(const Workload& w, unsigned n, double* ms) {
  double t0 = ThreadCpuMs();
  uint64_t sum = w.native(n);
  *ms = ThreadCpuMs() - t0;
  return sum;
}

// Grows the parameter until one native call takes at least `min_ms`.
unsigned Calibrate(const Workload& w, double min_ms) {
  unsigned n = 1;
  for (;;) {
    double ms = 0;
    RunNative(w, n, &ms);
    if (ms >= min_ms || n >= (1u << 30)) return n;
    double scale = ms > 0 ? min_ms * 1.1 / ms : 100;
    n = static_cast<unsigned>(n * std::clamp(scale, 2.0, 100.0));
  }
}

struct Row {
  const char* name;
  unsigned n;
  // Medians and minima; [t]: tier t.
  double native_ms = NAN, ms[2] = {NAN, NAN};
  double native_min_ms = NAN, min_ms[2] = {NAN, NAN};
  bool match = true;
};

// Times one workload in every tier; returns false on a checksum mismatch or
// a failed call.
bool RunWorkload(const Workload& w, std::vector<Tier>& tiers, const Options& o,
                 Row* row) {
  row->name = w.name;
  row->n = Calibrate(w, o.min_ms);
  std::vector<double> native_ms;
  std::vector<std::vector<double>> tier_ms(tiers.size());
  std::vector<bool> reported(tiers.size());  // one mismatch message per tier
  double ms = 0;
  const uint64_t expected = RunNative(w, row->n, &ms);  // warm-up
  if (w.reference != nullptr && w.reference(row->n) != expected) {
    std::fprintf(stderr, "%s(%u): the Rust checksum differs from C++'s\n",
                 w.name, row->n);
    row->match = false;
  }
  for (int rep = -1; rep < o.reps; ++rep) {  // rep -1: warm-up
    if (rep >= 0) {
      uint64_t sum = RunNative(w, row->n, &ms);
      native_ms.push_back(ms);
      if (sum != expected) {
        std::fprintf(stderr, "%s: native checksum is not deterministic\n",
                     w.name);
        row->match = false;
      }
    }
    for (size_t t = 0; t < tiers.size(); ++t) {
      int func = tiers[t].instance->info().FindFunc(w.name);
      auto sum = RunWasm(tiers[t], func, row->n, &ms);
      if (!sum) {
        row->match = false;
        return false;
      }
      if (rep >= 0) tier_ms[t].push_back(ms);
      if (*sum != expected && !reported[t]) {
        reported[t] = true;
        std::fprintf(stderr,
                     "%s(%u): checksum mismatch: native %016llx, wasm (%s) "
                     "%016llx\n",
                     w.name, row->n, static_cast<unsigned long long>(expected),
                     tiers[t].label, static_cast<unsigned long long>(*sum));
      }
      if (*sum != expected) row->match = false;
    }
  }
  row->native_ms = Median(native_ms);
  row->native_min_ms = *std::min_element(native_ms.begin(), native_ms.end());
  for (size_t t = 0; t < tiers.size(); ++t) {
    row->ms[t] = Median(tier_ms[t]);
    row->min_ms[t] = *std::min_element(tier_ms[t].begin(), tier_ms[t].end());
  }
  return row->match;
}

// Median Instance::Create and destruction times of `count` instances.
void TimeCreation(Tier& tier, int count, double* create_us,
                  double* destroy_us) {
  std::vector<double> create, destroy;
  for (int i = 0; i < count; ++i) {
    auto t0 = Clock::now();
    auto inst = Instance::Create(tier.module);
    create.push_back(MsSince(t0) * 1000);
    if (!inst.ok()) continue;
    auto t1 = Clock::now();
    inst->reset();
    destroy.push_back(MsSince(t1) * 1000);
  }
  *create_us = Median(create);
  *destroy_us = destroy.empty() ? NAN : Median(destroy);
}

// ns per Instance::Call of the empty export `nop`: median over batches.
double TimeEmptyCall(Tier& tier, int calls, int batches) {
  Instance& inst = *tier.instance;
  int nop = inst.info().FindFunc("nop");
  for (int i = 0; i < calls / 10; ++i) (void)inst.Call(nop, {}, {});
  std::vector<double> per_call_ns;
  for (int b = 0; b < batches; ++b) {
    int failures = 0;
    double t0 = ThreadCpuMs();
    for (int i = 0; i < calls; ++i) failures += !inst.Call(nop, {}, {}).ok();
    per_call_ns.push_back((ThreadCpuMs() - t0) * 1e6 / calls);
    if (failures) return NAN;
  }
  return Median(per_call_ns);
}

// Cold LoadModule of one arena module (`label`: C++ or Rust), fuel on and
// off, into fresh caches.
void ArenaColdCompile(const Options& o, const fs::path& tmp,
                      const std::string& label, const std::string& path,
                      const std::string& build_hint) {
  std::printf("\nCold compile of the %s arena module (the shard ABI, %s):\n",
              label.c_str(), o.opt_level.c_str());
  if (o.quick && !o.arena_given) {
    std::printf("  skipped (--quick)\n");
    return;
  }
  auto bytes = ReadFile(path);
  if (!bytes) {
    std::printf("  skipped: no module at %s\n  (run `%s`)\n", path.c_str(),
                build_hint.c_str());
    return;
  }
  std::printf("  %s (%zu bytes)\n", path.c_str(), bytes->size());
  std::printf("  %-8s %9s %10s %10s %10s %9s %11s\n", "fuel", "check ms",
              "codegen ms", "compile ms", "total ms", "dlopen ms", "cc cpu ms");
  for (bool fuel : {true, false}) {
    wasm::LoadOptions lo;
    lo.check = shard::ShardCheckOptions(64);
    lo.fuel = fuel;
    lo.opt_level = o.opt_level;
    lo.cache_dir =
        (tmp / (label + (fuel ? "-arena-fuel" : "-arena-nofuel"))).string();
    wasm::LoadStats s;
    double cc_cpu_ms = ChildrenCpuMs();
    auto m = wasm::LoadModule(*bytes, lo, &s);
    cc_cpu_ms = ChildrenCpuMs() - cc_cpu_ms;
    if (!m.ok()) {
      std::printf("  %-8s failed: %s\n", fuel ? "on" : "off",
                  m.status().ToString().c_str());
      continue;
    }
    std::printf("  %-8s %9.1f %10.1f %10.1f %10.1f %9.2f %11.1f\n",
                fuel ? "on" : "off", s.check_ms, s.codegen_ms, s.compile_ms,
                s.check_ms + s.codegen_ms + s.compile_ms, s.dlopen_ms,
                cc_cpu_ms);
  }
  std::printf(
      "  (wall ms from LoadStats; cc cpu ms: user+sys CPU time of the "
      "C compiler\n   processes, which other load on the machine "
      "does not inflate)\n");
}

#if defined(__clang__)
constexpr char kNativeCompiler[] = "clang++ " __clang_version__;
#else
constexpr char kNativeCompiler[] = "g++ " __VERSION__;
#endif

// Prints the workload table of one language; returns false if any
// checksum differed.
bool WorkloadTable(std::span<const Workload> workloads, const char* language,
                   std::vector<Tier>& tiers, const Options& o) {
  std::printf(
      "\n%s workloads: thread CPU ms, median of %d repetition(s), each >= "
      "%.0f ms natively\n",
      language, o.reps, o.min_ms);
  std::printf("%-7s %8s %10s %12s %7s %12s %7s  %s\n", "", "n", "native ms",
              "tessera ms", "ratio", "no-fuel ms", "ratio", "checksums");
  bool ok = true;
  double log_med[2] = {0, 0}, log_min[2] = {0, 0};
  int rows = 0;
  for (const Workload& w : workloads) {
    if (!o.only.empty() && o.only != w.name) continue;
    Row r;
    ok &= RunWorkload(w, tiers, o, &r);
    ++rows;
    for (int t = 0; t < 2; ++t) {
      log_med[t] += std::log(r.ms[t] / r.native_ms);
      log_min[t] += std::log(r.min_ms[t] / r.native_min_ms);
    }
    std::printf("%-7s %8u %10.2f %12.2f %6.3fx %12.2f %6.3fx  %s\n", r.name,
                r.n, r.native_ms, r.ms[0], r.ms[0] / r.native_ms, r.ms[1],
                r.ms[1] / r.native_ms, r.match ? "equal" : "MISMATCH");
  }
  if (rows == 0) {
    std::fprintf(stderr, "no workload named `%s`\n", o.only.c_str());
    return false;
  }
  std::printf("%-7s %8s %10s %12s %6.3fx %12s %6.3fx  (target <= 1.15x)\n",
              "geomean", "", "", "", std::exp(log_med[0] / rows), "",
              std::exp(log_med[1] / rows));
  std::printf("%-7s %8s %10s %12s %6.3fx %12s %6.3fx  (ratios of minima)\n", "",
              "", "", "", std::exp(log_min[0] / rows), "",
              std::exp(log_min[1] / rows));
  std::printf("(n: sim ticks, astar searches, nbody steps)\n");
  return ok;
}

int Main(int argc, char** argv) {
  Options o;
  if (!ParseArgs(argc, argv, &o)) return 2;
  auto bytes = ReadFile(TESSERA_BENCH_WASM);
  if (!bytes) {
    std::fprintf(stderr, "cannot read %s\n", TESSERA_BENCH_WASM);
    return 1;
  }
  fs::path tmp =
      fs::temp_directory_path() / ("tessera-bench-" + std::to_string(getpid()));
  fs::create_directories(tmp);
  // Removes the temporary caches on every return, after the tiers (whose
  // modules are dlopened from there) are gone.
  struct RemoveOnExit {
    fs::path dir;
    ~RemoveOnExit() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  } remove_tmp{tmp};
  std::string cache =
      o.cache_dir.empty() ? (tmp / "bench").string() : o.cache_dir;

  std::printf("tessera runtime_bench%s\n", o.quick ? " --quick" : "");
  std::printf("  native:  %s -O2 -ffp-contract=off -fno-math-errno\n",
              kNativeCompiler);
  std::printf("  tessera: clang++ --target=wasm32 -O2 -> wasm2c -> cc %s\n",
              o.opt_level.c_str());
  std::printf(
      "  Rust:    rustc -C opt-level=3 (lto) natively and to wasm32 "
      "-> wasm2c -> cc %s\n",
      o.opt_level.c_str());
  auto rust_bytes = ReadFile(TESSERA_BENCH_RUST_WASM);
  if (!rust_bytes) {
    std::fprintf(stderr, "cannot read %s\n", TESSERA_BENCH_RUST_WASM);
    return 1;
  }
  std::vector<Tier> tiers(2), rust_tiers(2);
  tiers[0] = {"fuel on", true, nullptr, nullptr, {}};
  tiers[1] = {"fuel off", false, nullptr, nullptr, {}};
  rust_tiers[0] = {"fuel on", true, nullptr, nullptr, {}};
  rust_tiers[1] = {"fuel off", false, nullptr, nullptr, {}};
  const struct {
    const char* path;
    const std::vector<uint8_t>& bytes;
    std::vector<Tier>& tiers;
  } modules[] = {{TESSERA_BENCH_WASM, *bytes, tiers},
                 {TESSERA_BENCH_RUST_WASM, *rust_bytes, rust_tiers}};
  for (const auto& m : modules) {
    for (Tier& t : m.tiers) {
      if (!LoadTier(m.path, m.bytes, o, cache, &t)) return 1;
      std::printf(
          "  %s (%zu bytes), %s: %s, check %.1f + codegen "
          "%.1f + compile %.1f ms\n",
          fs::path(m.path).filename().c_str(), m.bytes.size(), t.label,
          t.stats.cache_hit ? "cache hit" : "cold", t.stats.check_ms,
          t.stats.codegen_ms, t.stats.compile_ms);
    }
  }

  bool ok = WorkloadTable(kWorkloads, "C++", tiers, o);
  ok &= WorkloadTable(kRustWorkloads, "Rust", rust_tiers, o);

  if (o.only.empty()) {
    std::printf("\nPer-instance and per-call costs (bench module):\n");
    std::printf("  %-8s %16s %17s %15s\n", "fuel", "create us (wall)",
                "destroy us (wall)", "empty call ns");
    const int batches = o.quick ? 1 : 5;
    for (Tier& t : tiers) {
      double create_us = 0, destroy_us = 0;
      TimeCreation(t, o.creations, &create_us, &destroy_us);
      double call_ns = TimeEmptyCall(t, o.calls, batches);
      std::printf("  %-8s %16.2f %17.2f %15.1f\n", t.fuel ? "on" : "off",
                  create_us, destroy_us, call_ns);
    }
    std::printf(
        "  (medians: %d creations; `nop` called %d times per batch, CPU "
        "time, %d batch(es))\n",
        o.creations, o.calls, batches);
    ArenaColdCompile(o, tmp, "C++", o.arena,
                     "tessera shards build examples/arena, or pass --arena "
                     "PATH");
    if (!o.arena_given) {
      ArenaColdCompile(o, tmp, "Rust", TESSERA_BENCH_ARENA_RUST_WASM,
                       "tessera shards build examples/arena-rust");
    }
  }

  if (!ok) std::printf("\nFAILED: wasm and native checksums differ\n");
  return ok ? 0 : 1;
}

}  // namespace
}  // namespace tessera::bench

int main(int argc, char** argv) { return tessera::bench::Main(argc, argv); }
