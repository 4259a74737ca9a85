#include "bench/compute/compile_bench.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "app/builder.h"
#include "app/manifest.h"
#include "compute/source_compiler.h"

namespace tessera::bench {
namespace {

namespace fs = std::filesystem;

double NowMs() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Every regular file under `dir`, by path relative to it.
compute::SourceFiles ReadTree(const fs::path& dir) {
  compute::SourceFiles files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    const std::string rel = fs::relative(entry.path(), dir).generic_string();
    if (rel.ends_with(".md") || rel == "Cargo.lock") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    files[rel] = text.str();
  }
  return files;
}

// A cold compile of a compute example; -1 when it failed.
double CompileModule(const fs::path& dir, compute::Language language,
                     const fs::path& work, std::string* log) {
  compute::ToolchainOptions options;
  options.work_dir = work;
  auto compiler = compute::MakeToolchainCompiler(options);
  compute::VersionRecord version;
  version.module_id = 1;
  version.version_no = 1;
  version.language = language;
  version.sdk_version = "0.1.0";
  version.files = ReadTree(dir);
  version.source_hash =
      compute::SourceHash(language, version.sdk_version, version.files);
  const double t0 = NowMs();
  compute::CompileResult result = compiler->Compile(version);
  const double ms = NowMs() - t0;
  *log = result.log;
  return result.ok ? ms : -1;
}

// A cold forced build of a shard example app copied to `copy`.
double BuildShardApp(const fs::path& app, const fs::path& copy,
                     std::string* log) {
  std::error_code ec;
  fs::remove_all(copy, ec);
  fs::create_directories(copy, ec);
  fs::copy(app / "tessera.json", copy / "tessera.json", ec);
  fs::copy(app / "shards", copy / "shards", fs::copy_options::recursive, ec);
  if (ec) {
    *log = "copy: " + ec.message();
    return -1;
  }
  auto manifest = app::LoadManifest(copy);
  if (!manifest.ok()) {
    *log = manifest.status().ToString();
    return -1;
  }
  app::BuildOptions options;
  options.force = true;
  std::ostringstream progress;
  const double t0 = NowMs();
  Status built = app::BuildKinds(*manifest, options, progress);
  const double ms = NowMs() - t0;
  *log = progress.str() + built.message();
  return built.ok() ? ms : -1;
}

}  // namespace

bool RunColdCompiles(const fs::path& source_dir, const fs::path& scratch,
                     bool rust, nlohmann::json* out) {
  struct Pair {
    const char* language;
    const char* module_dir;
    compute::Language lang;
    const char* shard_app;
  };
  std::vector<Pair> pairs = {{"C++", "examples/compute/compute/shop",
                              compute::Language::kCpp, "examples/arena"}};
  if (rust) {
    pairs.push_back({"Rust", "examples/compute/compute/world-sim",
                     compute::Language::kRust, "examples/arena-rust"});
  }
  std::printf(
      "\nCold compile (ms; baseline: the shard example of the same "
      "language, forced build)\n");
  std::printf("  %-8s %-34s %10s %-22s %10s %7s\n", "", "compute module", "ms",
              "shard example", "ms", "ratio");
  bool ok = true;
  for (const Pair& p : pairs) {
    std::string log;
    const fs::path work = scratch / (std::string("compile-") + p.language);
    std::error_code ec;
    fs::remove_all(work, ec);
    const double module_ms =
        CompileModule(source_dir / p.module_dir, p.lang, work, &log);
    if (module_ms < 0) {
      std::fprintf(stderr, "compile %s failed:\n%s\n", p.module_dir,
                   log.c_str());
      ok = false;
      continue;
    }
    const double shard_ms =
        BuildShardApp(source_dir / p.shard_app,
                      scratch / (std::string("shard-") + p.language), &log);
    if (shard_ms < 0) {
      std::fprintf(stderr, "build %s failed:\n%s\n", p.shard_app, log.c_str());
      ok = false;
      continue;
    }
    std::printf("  %-8s %-34s %10.0f %-22s %10.0f %7.2f\n", p.language,
                p.module_dir + 9, module_ms, p.shard_app + 9, shard_ms,
                module_ms / shard_ms);
    (*out)[p.language] = {{"module", p.module_dir},
                          {"module_ms", module_ms},
                          {"shard_example", p.shard_app},
                          {"shard_ms", shard_ms},
                          {"ratio", module_ms / shard_ms}};
  }
  return ok;
}

}  // namespace tessera::bench
