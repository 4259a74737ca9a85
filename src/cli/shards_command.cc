// `tessera shards build [APP-DIR]` and `tessera shards check FILE.wasm`.
// Results go to stdout, errors to stderr; the exit code is 0 on success and
// 1 on failure (a refused module, a failed build, an unreadable file).
// `build` also runs the loader's checks on what it built, so a module the
// server would refuse fails at build time.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "app/builder.h"
#include "app/manifest.h"
#include "cli/commands.h"
#include "shard/shard_abi.h"
#include "wasm/loader.h"
#include "wasm/module_info.h"

namespace tessera::cli {
namespace {

namespace fs = std::filesystem;

constexpr uint32_t kPagesPerMiB = 16;  // 64 KiB pages

struct BuildArgs {
  std::string app_dir = ".";
  std::vector<std::string> kinds;
  unsigned jobs = 0;
  bool force = false;
  bool verbose = false;
};

Result<std::vector<uint8_t>> ReadBytes(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return IoError("cannot open " + file);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  if (in.bad()) return IoError("cannot read " + file);
  return bytes;
}

using shard::ShardCheckOptions;

// Runs the loader's checks on every module just built (or, for prebuilt
// kinds, found), so a module the server would refuse fails the build.
int CheckBuiltModules(const app::Manifest& manifest,
                      const std::vector<std::string>& only_kinds) {
  int rc = 0;
  for (const app::ShardKindSpec& kind : manifest.kinds) {
    if (!only_kinds.empty() &&
        std::find(only_kinds.begin(), only_kinds.end(), kind.config.name) ==
            only_kinds.end()) {
      continue;
    }
    Result<std::vector<uint8_t>> bytes = ReadBytes(kind.output.string());
    Status s = bytes.status();
    if (bytes.ok()) {
      s = wasm::CheckModule(*bytes, ShardCheckOptions(kind.config.memory_mb))
              .status();
    }
    if (!s.ok()) {
      std::cerr << "error: " << kind.config.name << ": " << kind.output.string()
                << " would be refused by the server: " << s.message() << "\n";
      rc = 1;
    }
  }
  return rc;
}

int RunBuild(const BuildArgs& args) {
  Result<app::Manifest> manifest = app::LoadManifest(args.app_dir);
  if (!manifest.ok()) {
    std::cerr << "error: " << manifest.status().message() << "\n";
    return 1;
  }
  app::BuildOptions options;
  options.only_kinds = args.kinds;
  options.jobs = args.jobs;
  options.force = args.force;
  options.verbose = args.verbose;
  Status s = app::BuildKinds(*manifest, options, std::cout);
  std::cout.flush();
  if (!s.ok()) {
    std::cerr << "error: " << s.message();
    if (s.message().empty() || s.message().back() != '\n') std::cerr << "\n";
    return 1;
  }
  return CheckBuiltModules(*manifest, args.kinds);
}

struct CheckArgs {
  std::string file;
  uint32_t memory_mb = 64;
  bool compile = false;
};

const char* ExternKindName(wasm::ExternKind kind) {
  switch (kind) {
    case wasm::ExternKind::kFunc:
      return "func";
    case wasm::ExternKind::kTable:
      return "table";
    case wasm::ExternKind::kMemory:
      return "memory";
    case wasm::ExternKind::kGlobal:
      return "global";
  }
  return "?";
}

std::string Mib(uint64_t pages) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(2)
    << static_cast<double>(pages) / kPagesPerMiB << " MiB";
  return s.str();
}

void PrintInfo(const wasm::ModuleInfo& info, uint32_t cap_pages) {
  size_t width = 0;
  for (const wasm::ExportEntry& e : info.exports) {
    width = std::max(width, e.name.size());
  }
  std::cout << "exports (" << info.exports.size() << "):\n";
  for (const wasm::ExportEntry& e : info.exports) {
    std::cout << "  " << std::left << std::setw(static_cast<int>(width))
              << e.name << "  " << std::setw(6) << ExternKindName(e.kind);
    int func = e.kind == wasm::ExternKind::kFunc ? info.FindFunc(e.name) : -1;
    if (func >= 0) std::cout << "  " << wasm::SigToString(info.funcs[func].sig);
    std::cout << "\n";
  }
  std::cout << "imports (" << info.imports.size() << "):\n";
  for (const std::string& i : info.imports) std::cout << "  " << i << "\n";
  if (info.has_memory) {
    std::cout << "memory: " << info.initial_pages << " pages ("
              << Mib(info.initial_pages) << ") initial";
    if (info.declared_max_pages) {
      std::cout << ", declared maximum " << *info.declared_max_pages
                << " pages (" << Mib(*info.declared_max_pages) << ")";
    }
    std::cout << ", capped at " << cap_pages << " pages (" << Mib(cap_pages)
              << ")";
    std::cout << "\n";
  } else {
    std::cout << "memory: none\n";
  }
  std::cout << "functions: " << info.function_count << " defined, "
            << info.code_bytes << " bytes of code\n";
}

// $XDG_CACHE_HOME/tessera/modules, else ~/.cache/tessera/modules.
Result<std::string> CacheDir() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && *xdg == '/') {
    return (fs::path(xdg) / "tessera" / "modules").string();
  }
  const char* home = std::getenv("HOME");
  if (home != nullptr && *home != '\0') {
    return (fs::path(home) / ".cache" / "tessera" / "modules").string();
  }
  return NotFound("no cache directory: set XDG_CACHE_HOME or HOME");
}

int RunCheck(const CheckArgs& args) {
  Result<std::vector<uint8_t>> bytes = ReadBytes(args.file);
  if (!bytes.ok()) {
    std::cerr << "error: " << bytes.status().message() << "\n";
    return 1;
  }
  const wasm::CheckOptions check = ShardCheckOptions(args.memory_mb);
  Result<wasm::ModuleInfo> info = wasm::CheckModule(*bytes, check);
  if (!info.ok()) {
    std::cerr << "refused: " << info.status().message() << "\n";
    return 1;
  }
  std::cout << "ok: " << args.file << "\n";
  PrintInfo(*info, check.memory_cap_pages);
  if (!args.compile) return 0;

  Result<std::string> cache_dir = CacheDir();
  if (!cache_dir.ok()) {
    std::cerr << "error: " << cache_dir.status().message() << "\n";
    return 1;
  }
  wasm::LoadOptions load;
  load.check = check;
  load.cache_dir = *cache_dir;
  wasm::LoadStats stats;
  const auto start = std::chrono::steady_clock::now();
  auto module = wasm::LoadModule(*bytes, load, &stats);
  const double total_ms = std::chrono::duration<double, std::milli>(
                              std::chrono::steady_clock::now() - start)
                              .count();
  if (!module.ok()) {
    std::cerr << "compile failed: " << module.status().message() << "\n";
    return 1;
  }
  std::cout << std::fixed << std::setprecision(1) << "compiled in " << total_ms
            << " ms (" << (stats.cache_hit ? "cache hit" : "cache miss")
            << "; check " << stats.check_ms << " ms, codegen "
            << stats.codegen_ms << " ms, compile " << stats.compile_ms
            << " ms, dlopen " << stats.dlopen_ms << " ms)\n"
            << "cache: " << *cache_dir << "\n";
  return 0;
}

}  // namespace

void RegisterShardsCommands(CLI::App& app, int* exit_code) {
  CLI::App* shards =
      app.add_subcommand("shards", "Build and inspect shard modules");
  shards->require_subcommand(1);

  auto build_args = std::make_shared<BuildArgs>();
  CLI::App* build = shards->add_subcommand(
      "build",
      "Compile an app's source shard kinds (tessera.json) to WebAssembly");
  build
      ->add_option("APP-DIR", build_args->app_dir,
                   "App directory holding tessera.json")
      ->capture_default_str();
  build->add_option("-k,--kind", build_args->kinds,
                    "Build only this kind (repeatable)");
  build->add_option("-j,--jobs", build_args->jobs,
                    "Parallel compiler processes (default: one per core)");
  build->add_flag("--force", build_args->force,
                  "Rebuild even if outputs are up to date");
  build->add_flag("-v,--verbose", build_args->verbose,
                  "Print each compiler command");
  build->callback(
      [build_args, exit_code] { *exit_code = RunBuild(*build_args); });

  auto check_args = std::make_shared<CheckArgs>();
  CLI::App* check = shards->add_subcommand(
      "check", "Check that a module is one tessera will run, and describe it");
  check->add_option("FILE.wasm", check_args->file, "The module to check")
      ->required();
  check
      ->add_option("--memory-mb", check_args->memory_mb,
                   "Memory cap to check against, in MiB")
      ->capture_default_str()
      ->check(CLI::Range(1, 4096));
  check->add_flag("--compile", check_args->compile,
                  "Also compile it (through the module cache) and report "
                  "the time taken");
  check->callback(
      [check_args, exit_code] { *exit_code = RunCheck(*check_args); });
}

}  // namespace tessera::cli
