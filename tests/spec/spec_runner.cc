// The WebAssembly core spec conformance runner: converts each .wast script
// of the spec directory with wast2json, loads every module through the
// loader shards use (validation, fuel and interrupt instrumentation, wasm2c,
// the C compiler, tessera's runtime) and executes every command.
//
//   spec_runner [--quick] [--dir DIR] [--cache DIR] [--jobs N] [--verbose]
//               [--no-fuel] [--cc COMPILER] [SCRIPT...]
//
// --no-fuel loads modules without the fuel pass (shards always have it),
// to check that instrumentation changes no result.
//
// The directory is --dir, else $TESSERA_WASM_SPEC_DIR, else
// ../shared/wasm-spec beside the repository. When it is absent, or holds no
// .wast script, the runner says what to set and exits 2: a conformance run
// that runs nothing must not pass. Exit status 1 when any command fails
// (documented exceptions aside, see exceptions.cc) or a script cannot be
// converted.
// Commands that need a proposal tessera refuses by design (memory64, SIMD,
// threads, tail calls, exception handling, multi-memory: the loader refuses
// the module) count as "unsupported", apart from failures.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "module_pool.h"
#include "script_runner.h"
#include "wast_script.h"

namespace tessera::spec {
namespace {

namespace fs = std::filesystem;

// The quick tier (ctest spec_quick): well under a minute on 2 cores from a
// cold compile cache, and touching every kind of command.
const char* const kQuickScripts[] = {
    "i32",         "i64",           "f32_bitwise", "conversions",
    "memory_trap", "call_indirect", "traps",       "names",
    "fac",         "labels",        "br",          "start",
    "data",        "linking0",      "imports0",    "exports0",
    "func_ptrs",   "binary-leb128", "memory_size", "unwind",
};

struct Options {
  std::string dir;
  std::string cache_dir = TESSERA_SPEC_CACHE_DIR;
  int jobs =
      static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  bool quick = false;
  bool verbose = false;
  bool fuel = true;
  std::string c_compiler;  // --cc: the C compiler for generated code
  bool help = false;
  std::vector<std::string> scripts;
};

int Usage(bool help) {
  std::fprintf(
      help ? stdout : stderr,
      "usage: spec_runner [--quick] [--dir DIR] [--cache DIR] "
      "[--jobs N] [--verbose] [--no-fuel] [--cc COMPILER] [SCRIPT...]\n");
  return help ? 0 : 2;
}

bool ParseArgs(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&](std::string* out) {
      if (i + 1 >= argc) return false;
      *out = argv[++i];
      return true;
    };
    std::string v;
    if (a == "--help" || a == "-h") {
      o->help = true;
    } else if (a == "--quick") {
      o->quick = true;
    } else if (a == "--verbose" || a == "-v") {
      o->verbose = true;
    } else if (a == "--no-fuel") {
      o->fuel = false;
    } else if (a == "--dir") {
      if (!next(&o->dir)) return false;
    } else if (a == "--cache") {
      if (!next(&o->cache_dir)) return false;
    } else if (a == "--cc") {
      if (!next(&o->c_compiler)) return false;
    } else if (a == "--jobs") {
      if (!next(&v)) return false;
      o->jobs = std::max(1, std::atoi(v.c_str()));
    } else if (!a.empty() && a[0] == '-') {
      return false;
    } else {
      o->scripts.push_back(a);
    }
  }
  if (o->dir.empty()) {
    const char* env = std::getenv("TESSERA_WASM_SPEC_DIR");
    o->dir = env && *env ? env : TESSERA_SOURCE_DIR "/../shared/wasm-spec";
  }
  std::error_code ec;
  fs::path canonical = fs::weakly_canonical(o->dir, ec);
  if (!ec) o->dir = canonical.string();
  return true;
}

std::string Stem(std::string name) {
  if (name.size() > 5 && name.ends_with(".wast")) name.resize(name.size() - 5);
  return name;
}

// The scripts to run, in name order. Errors: a requested script missing.
Result<std::vector<fs::path>> SelectScripts(const Options& o) {
  std::vector<std::string> wanted = o.scripts;
  if (o.quick)
    wanted.insert(wanted.end(), std::begin(kQuickScripts),
                  std::end(kQuickScripts));
  std::vector<fs::path> all;
  for (const auto& e : fs::directory_iterator(o.dir)) {
    if (e.path().extension() == ".wast") all.push_back(e.path());
  }
  std::sort(all.begin(), all.end());
  if (wanted.empty()) return all;
  std::vector<fs::path> out;
  for (const std::string& w : wanted) {
    fs::path p = fs::path(o.dir) / (Stem(w) + ".wast");
    if (!fs::exists(p)) return NotFound("no script " + p.string());
    if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Converts every script, `jobs` at a time.
std::vector<Result<Script>> ConvertAll(const std::vector<fs::path>& paths,
                                       const std::string& tmp, int jobs) {
  std::vector<Result<Script>> out(paths.size(), Internal("not converted"));
  std::atomic<size_t> next{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < jobs; ++t) {
    threads.emplace_back([&] {
      for (size_t i; (i = next.fetch_add(1)) < paths.size();) {
        out[i] = ConvertScript(paths[i].string(), tmp);
      }
    });
  }
  for (auto& t : threads) t.join();
  return out;
}

struct Totals {
  int passed = 0, failed = 0, skipped = 0, exceptions = 0, unsupported = 0,
      scripts = 0;
  std::map<std::string, int> skip_reasons;
  std::map<std::string, int> unsupported_reasons;
  std::vector<std::string> excepted;
};

void Print(const ScriptReport& r, bool verbose, Totals* t) {
  std::printf(
      "%-22s %5d passed %4d failed %4d skipped %3d exceptions %4d "
      "unsupported %6.1f s\n",
      r.name.c_str(), r.passed, r.failed, r.skipped, r.exceptions,
      r.unsupported, r.seconds);
  size_t shown = 0;
  for (const std::string& f : r.failures) {
    if (!verbose && ++shown > 20) {
      std::printf("    ... %zu more failures (--verbose shows all)\n",
                  r.failures.size() - 20);
      break;
    }
    std::printf("    FAIL %s\n", f.c_str());
  }
  if (verbose) {
    for (const std::string& e : r.excepted) {
      std::printf("    exception %s\n", e.c_str());
    }
  }
  t->passed += r.passed;
  t->failed += r.failed;
  t->skipped += r.skipped;
  t->exceptions += r.exceptions;
  t->unsupported += r.unsupported;
  ++t->scripts;
  for (const auto& [why, n] : r.skip_reasons) t->skip_reasons[why] += n;
  for (const auto& [what, n] : r.unsupported_reasons) {
    t->unsupported_reasons[what] += n;
  }
  for (const std::string& e : r.excepted)
    t->excepted.push_back(r.name + " " + e);
}

int Main(int argc, char** argv) {
  Options o;
  if (!ParseArgs(argc, argv, &o)) return Usage(false);
  if (o.help) return Usage(true);
  if (!fs::is_directory(o.dir)) {
    std::fprintf(stderr,
                 "spec: FAILED: no WebAssembly spec scripts at %s\n"
                 "  The conformance tests need the core spec scripts (the "
                 ".wast files of\n"
                 "  https://github.com/WebAssembly/spec, test/core). Put them "
                 "in ../shared/wasm-spec\n"
                 "  beside the repository (CI does), or set "
                 "TESSERA_WASM_SPEC_DIR=/path/to/wasm-spec\n"
                 "  (or pass --dir DIR).\n",
                 o.dir.c_str());
    return 2;
  }
  auto paths = SelectScripts(o);
  if (!paths.ok()) {
    std::fprintf(stderr, "spec: %s\n", paths.status().message().c_str());
    return 2;
  }
  if (paths->empty()) {
    std::fprintf(stderr,
                 "spec: FAILED: no .wast scripts in %s (set "
                 "TESSERA_WASM_SPEC_DIR to the spec's test/core "
                 "directory)\n",
                 o.dir.c_str());
    return 2;
  }
  auto t0 = std::chrono::steady_clock::now();
  char tmpl[] = "/tmp/tessera-spec-XXXXXX";
  if (!mkdtemp(tmpl)) {
    std::perror("spec: mkdtemp");
    return 2;
  }
  const std::string tmp = tmpl;
  std::printf("spec: %zu scripts from %s, %d compile jobs, cache %s%s\n",
              paths->size(), o.dir.c_str(), o.jobs, o.cache_dir.c_str(),
              o.fuel ? "" : ", no fuel pass");
  std::fflush(stdout);

  wasm::LoadOptions load;
  load.check.link_any_imports = true;
  load.cache_dir = o.cache_dir;
  load.fuel = o.fuel;
  if (!o.c_compiler.empty()) load.c_compiler = o.c_compiler;

  std::vector<Result<Script>> scripts = ConvertAll(*paths, tmp, o.jobs);
  Totals totals;
  int broken = 0;
  {
    ModulePool pool(load, o.jobs);
    std::vector<ModuleMap> maps(scripts.size());
    for (size_t i = 0; i < scripts.size(); ++i) {
      if (!scripts[i].ok()) continue;
      for (const std::string& f : ModuleFiles(*scripts[i])) {
        fs::path p = fs::path(scripts[i]->dir) / f;
        maps[i].emplace(f, pool.Load(p.string()));
      }
    }
    for (size_t i = 0; i < scripts.size(); ++i) {
      if (!scripts[i].ok()) {
        ++broken;
        std::printf("%-22s NOT CONVERTED: %s\n", (*paths)[i].filename().c_str(),
                    scripts[i].status().message().c_str());
        continue;
      }
      ScriptReport r = RunScript(*scripts[i], maps[i], load);
      maps[i].clear();  // unloads its modules
      Print(r, o.verbose, &totals);
      std::fflush(stdout);
    }
  }
  std::error_code ec;
  fs::remove_all(tmp, ec);

  double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  int total = totals.passed + totals.failed + totals.skipped +
              totals.exceptions + totals.unsupported;
  std::printf(
      "\nspec total: %d scripts, %d commands: %d passed, %d failed, %d "
      "skipped, %d documented exceptions, %d unsupported by design (%.1f "
      "s)\n",
      totals.scripts, total, totals.passed, totals.failed, totals.skipped,
      totals.exceptions, totals.unsupported, secs);
  for (const auto& [why, n] : totals.skip_reasons) {
    std::printf("  skipped %d: %s\n", n, why.c_str());
  }
  for (const auto& [what, n] : totals.unsupported_reasons) {
    std::printf("  unsupported %d: %s (refused by design, not a failure)\n", n,
                what.c_str());
  }
  if (!totals.excepted.empty()) {
    std::printf("  documented exceptions (docs/guest-abi.md):\n");
    for (const std::string& e : totals.excepted) {
      std::printf("    %s\n", e.c_str());
    }
  }
  if (broken) std::printf("  %d scripts could not be converted\n", broken);
  if (totals.passed == 0) {
    std::printf("  no command passed: nothing was tested\n");
    return 1;
  }
  return totals.failed == 0 && broken == 0 ? 0 : 1;
}

}  // namespace
}  // namespace tessera::spec

int main(int argc, char** argv) { return tessera::spec::Main(argc, argv); }
