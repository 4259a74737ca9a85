// compute_bench: what compute modules cost on this machine (issue 14 "Done
// when"; bench/compute/README.md). Every figure is printed with a baseline
// measured in the same run, and the whole report is written as JSON
// (--json PATH, default compute_bench.json in the working directory):
//
//   sandbox   ComputeInstance::Invoke of a trivial export vs an empty tick
//             and a bare host function call (in-process)
//   fuel      fuel per ms of thread CPU: the compute-unit calibration
//   http      invoke round trip over HTTP and server CPU per invoke vs GET
//             /healthz (the real binary)
//   compile   cold compile of the example modules vs the shard examples
//   ticking   1,000 modules at 10 Hz: CPU share and cadence vs empty tasks
//
// --quick (the ctest smoke run) makes every part small and skips the Rust
// compiles. Correctness alone decides the exit status (a module that does
// not answer, a compile that fails, ticks that never run), never timing.
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "bench/compute/compile_bench.h"
#include "bench/compute/http_bench.h"
#include "bench/compute/sandbox_bench.h"
#include "bench/compute/tick_bench.h"

namespace {

namespace fs = std::filesystem;

int Usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s [--quick] [--only sandbox,fuel,http,compile,ticking]"
               " [--json PATH]\n",
               argv0);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  std::string json_path = "compute_bench.json";
  std::set<std::string> only;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else if (std::strcmp(argv[i], "--json") == 0 && i + 1 < argc) {
      json_path = argv[++i];
    } else if (std::strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
      std::string list = argv[++i];
      size_t start = 0;
      while (start <= list.size()) {
        const size_t comma = list.find(',', start);
        only.insert(list.substr(start, comma - start));
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
    } else {
      return Usage(argv[0]);
    }
  }
  auto wanted = [&](const char* part) {
    return only.empty() || only.count(part) > 0;
  };
  const fs::path scratch =
      fs::temp_directory_path() /
      ("tessera-compute-bench-" + std::to_string(getpid()));
  fs::create_directories(scratch);
  const fs::path source_dir = TESSERA_SOURCE_DIR;
  nlohmann::json report = {{"quick", quick}};
  bool ok = true;
  if (wanted("sandbox")) {
    ok &= tessera::bench::RunSandboxCall(quick ? 2000 : 100000,
                                         &report["sandbox"]);
  }
  if (wanted("fuel")) {
    ok &= tessera::bench::RunFuelCalibration(quick, &report["fuel"]);
  }
  if (wanted("http")) {
    ok &= tessera::bench::RunHttpInvoke(source_dir, scratch / "http",
                                        quick ? 300 : 20000, &report["http"]);
  }
  if (wanted("compile")) {
    ok &= tessera::bench::RunColdCompiles(source_dir, scratch / "compile",
                                          /*rust=*/!quick, &report["compile"]);
  }
  if (wanted("ticking")) {
    ok &= tessera::bench::RunTicking(quick ? 50 : 1000, quick ? 1.0 : 10.0,
                                     scratch / "ticking", &report["ticking"]);
  }
  std::ofstream(json_path) << report.dump(2) << "\n";
  std::printf("\nreport: %s\n", json_path.c_str());
  std::error_code ec;
  fs::remove_all(scratch, ec);
  if (!ok) std::fprintf(stderr, "compute_bench: a check failed (above)\n");
  return ok ? 0 : 1;
}
