#include "app/crate_builder.h"

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "common/subprocess.h"

namespace tessera::app {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr char kTarget[] = "wasm32-unknown-unknown";
constexpr char kRecordFile[] = "cargo.txt";
constexpr char kPackages[] =
    "rustc cargo libstd-rust-dev-wasm32 lld-14 (scripts/install-deps)";

bool IsRustSdkDir(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / "Cargo.toml", ec) &&
         fs::is_regular_file(dir / "src" / "lib.rs", ec);
}

std::string ReadFileOrEmpty(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
}

// A TOML basic string.
std::string Toml(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// An SDK crate a build patches in: its package name and directory.
struct SdkPatch {
  std::string name;
  fs::path dir;
};

constexpr char kShardSdk[] = "tessera-shard-guest";
constexpr char kComputeSdk[] = "tessera-compute-sdk";

// The cargo configuration of every crate build: Debian's registry as the
// only source, offline, the SDK crates patched in, the release profile.
std::string CargoConfig(const BuildOptions& o,
                        const std::vector<SdkPatch>& patches) {
  std::string config =
      "# Written by `tessera shards build`; rewritten on every build.\n"
      "[source.crates-io]\nreplace-with = \"debian\"\n"
      "[source.debian]\ndirectory = " +
      Toml(o.cargo_registry) +
      "\n"
      "[net]\noffline = true\n"
      "[build]\nrustc = " +
      Toml(o.rustc) +
      "\n"
      "[term]\ncolor = \"never\"\n";
  if (!patches.empty()) config += "[patch.crates-io]\n";
  for (const SdkPatch& p : patches) {
    config += p.name + " = { path = " + Toml(p.dir.string()) + " }\n";
  }
  return config +
         "[profile.release]\nopt-level = \"s\"\nlto = true\n"
         "codegen-units = 1\npanic = \"abort\"\nstrip = true\n";
}

// Newest modification time of the files under `dir`, skipping target/ and
// dot-files; false if any cannot be read.
bool NewestInput(const fs::path& dir, fs::file_time_type* newest) {
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, ec), end;
  if (ec) return false;
  for (; it != end; it.increment(ec)) {
    if (ec) return false;
    const std::string name = it->path().filename().string();
    if (name == "target" || (!name.empty() && name[0] == '.')) {
      if (it->is_directory(ec)) it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file(ec)) continue;
    fs::file_time_type t = fs::last_write_time(it->path(), ec);
    if (ec) return false;
    if (t > *newest) *newest = t;
  }
  return true;
}

// The cdylib's .wasm among cargo's JSON messages (one per line), or "".
std::string ArtifactOf(const std::string& line) {
  nlohmann::json m = nlohmann::json::parse(line, nullptr, false);
  if (!m.is_object() || m.value("reason", "") != "compiler-artifact") return "";
  const nlohmann::json& kinds = m["target"]["kind"];
  bool cdylib = false;
  for (const auto& k : kinds) cdylib = cdylib || k == "cdylib";
  if (!cdylib) return "";
  for (const auto& f : m["filenames"]) {
    const std::string name = f.is_string() ? f.get<std::string>() : "";
    if (name.size() > 5 && name.substr(name.size() - 5) == ".wasm") return name;
  }
  return "";
}

// What to say before cargo's own output when a dependency is the problem.
std::string DependencyHint(const std::string& output,
                           const std::string& registry) {
  const std::string marker = "no matching package named `";
  size_t at = output.find(marker);
  if (at != std::string::npos) {
    at += marker.size();
    const std::string name = output.substr(at, output.find('`', at) - at);
    return "the crate depends on `" + name +
           "`, which Debian does not package (it is not in " + registry +
           "); use a crate Debian packages (`apt-cache search librust-`) or "
           "copy it into the crate as a path dependency\n";
  }
  const std::string version =
      "failed to select a version for the requirement `";
  at = output.find(version);
  if (at != std::string::npos) {
    at += version.size();
    const std::string req = output.substr(at, output.find('`', at) - at);
    return "the crate asks for `" + req +
           "`, a version Debian does not package (see the candidate "
           "versions below, in " +
           registry + ")\n";
  }
  if (output.find("the wasm32-unknown-unknown target is not supported by "
                  "default") != std::string::npos) {
    return "a dependency pulls in `getrandom`, which has no randomness "
           "source on wasm32-unknown-unknown (`rand` with its default "
           "features does): use `rand = { version = \"0.8\", "
           "default-features = false, features = [\"std_rng\", "
           "\"small_rng\"] }` seeded from the host (a compute module: the "
           "SDK's `rand` feature, tessera_compute_sdk::rng())\n";
  }
  return "";
}

// cargo's status lines ("   Compiling serde v1.0.152"): right-aligned verbs.
bool IsStatusLine(const std::string& line) {
  size_t i = line.find_first_not_of(' ');
  return i != std::string::npos && i > 0 && i + 1 < line.size() &&
         std::isupper(static_cast<unsigned char>(line[i])) &&
         line.compare(i, 7, "warning") != 0;
}

Status CheckToolchain(const BuildOptions& o) {
  std::error_code ec;
  for (const std::string& tool : {o.cargo, o.rustc}) {
    if (!fs::is_regular_file(tool, ec)) {
      return NotFound(tool + " was not found; on Debian install " + kPackages);
    }
  }
  Result<ProcessResult> sysroot = RunProcess({o.rustc, "--print", "sysroot"});
  if (!sysroot.ok()) return sysroot.status();
  std::string root = sysroot->output;
  while (!root.empty() && (root.back() == '\n' || root.back() == '\r')) {
    root.pop_back();
  }
  if (sysroot->exit_code != 0 ||
      !fs::is_directory(fs::path(root) / "lib" / "rustlib" / kTarget, ec)) {
    return NotFound(o.rustc + " has no standard library for " + kTarget +
                    "; on Debian install " + kPackages);
  }
  if (!fs::is_directory(o.cargo_registry, ec)) {
    return NotFound("the packaged crates directory " + o.cargo_registry +
                    " does not exist; on Debian install librust-serde-dev "
                    "librust-serde-derive-dev librust-serde-json-dev "
                    "librust-rmp-serde-dev (scripts/install-deps)");
  }
  return Status::Ok();
}

std::string FormatSize(uintmax_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " B";
  return std::to_string((bytes + 512) / 1024) + " KB";
}

std::string Display(const fs::path& p, const fs::path& base) {
  if (base.empty()) return p.string();
  fs::path rel = p.lexically_relative(base);
  return rel.empty() ? p.string() : rel.string();
}

}  // namespace

namespace {

// $env if set, else each candidate: the first that is an SDK crate.
Result<fs::path> FindSdkCrate(const char* env_name, const std::string& crate,
                              std::vector<fs::path> candidates) {
  if (const char* env = std::getenv(env_name); env && *env) {
    if (IsRustSdkDir(env)) return fs::path(env);
    return NotFound(std::string(env_name) + "=" + env + " is not the " + crate +
                    " crate (no Cargo.toml and src/lib.rs)");
  }
#ifdef TESSERA_SOURCE_DIR
  candidates.push_back(fs::path(TESSERA_SOURCE_DIR) / "sdk" / "rust" / crate);
#endif
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    candidates.push_back((exe.parent_path() / ".." / "share" / "tessera" /
                          "sdk" / "rust" / crate)
                             .lexically_normal());
  }
  std::string looked;
  for (const fs::path& c : candidates) {
    if (IsRustSdkDir(c)) return c;
    looked += (looked.empty() ? "" : ", ") + c.string();
  }
  return NotFound("the Rust SDK crate " + crate + " was not found (looked in " +
                  looked + "); set " + env_name);
}

// The SDK directory a build uses: `given` (checked) or found.
Result<fs::path> ResolveSdk(const fs::path& given, Result<fs::path> (*find)()) {
  fs::path dir = given;
  if (dir.empty()) {
    Result<fs::path> found = find();
    if (!found.ok()) return found.status();
    dir = *found;
  } else if (!IsRustSdkDir(dir)) {
    return NotFound(dir.string() + " is not a tessera Rust SDK crate");
  }
  std::error_code ec;
  return fs::absolute(dir, ec).lexically_normal();
}

// Whether the crate's Cargo.toml names `crate` (as a dependency, usually;
// a stray mention only adds a patch cargo does not use).
bool Mentions(const std::string& cargo_toml, const std::string& crate) {
  return cargo_toml.find(crate) != std::string::npos;
}

struct CrateJob {
  CrateBuildSpec spec;
  fs::path display_base;   // outputs are shown relative to it
  bool shard_sdk = false;  // patch the shard SDK even when not named
};

Status BuildOneCrate(const CrateJob& job, const BuildOptions& options,
                     std::ostream& progress) {
  const CrateBuildSpec& spec = job.spec;
  const std::string& name = spec.name;
  std::error_code ec;
  const fs::path cargo_toml = spec.crate_dir / "Cargo.toml";
  if (!fs::is_regular_file(cargo_toml, ec)) {
    return NotFound(name + ": " + cargo_toml.string() +
                    " does not exist (\"crate\" names a Rust crate "
                    "directory)");
  }
  const std::string manifest_text = ReadFileOrEmpty(cargo_toml);
  std::vector<SdkPatch> patches;
  if (job.shard_sdk || Mentions(manifest_text, kShardSdk)) {
    Result<fs::path> dir = ResolveSdk(options.rust_sdk_dir, FindRustSdkDir);
    if (!dir.ok()) return dir.status();
    patches.push_back({kShardSdk, *dir});
  }
  if (Mentions(manifest_text, kComputeSdk)) {
    Result<fs::path> dir =
        ResolveSdk(options.rust_compute_sdk_dir, FindRustComputeSdkDir);
    if (!dir.ok()) return dir.status();
    patches.push_back({kComputeSdk, *dir});
  }

  const fs::path build_dir = spec.build_dir.lexically_normal();
  const fs::path cargo_home = fs::absolute(build_dir / "cargo-home", ec);
  const fs::path target_dir = fs::absolute(build_dir / "cargo-target", ec);
  const fs::path record_dir = build_dir / "obj" / name;
  const std::string config = CargoConfig(options, patches);
  // `env` sets CARGO_HOME for cargo alone: its config.toml is ours, and
  // ~/.cargo (rustup's) is never read.
  const std::vector<std::string> argv = {
      "env",
      "CARGO_HOME=" + cargo_home.string(),
      "RUSTC=" + options.rustc,
      options.cargo,
      "build",
      "--release",
      "--offline",
      std::string("--target=") + kTarget,
      "--message-format=json-render-diagnostics",
      "--manifest-path=" + fs::absolute(cargo_toml, ec).string(),
      "--target-dir=" + target_dir.string()};
  const std::string record = JoinCommand(argv) + "\n" + config;

  fs::file_time_type built = fs::last_write_time(spec.output, ec);
  if (!ec && !options.force &&
      ReadFileOrEmpty(record_dir / kRecordFile) == record) {
    fs::file_time_type newest = fs::file_time_type::min();
    bool inputs_read = NewestInput(spec.crate_dir, &newest);
    for (const SdkPatch& p : patches) {
      inputs_read = inputs_read && NewestInput(p.dir, &newest);
    }
    if (inputs_read && newest <= built) {
      progress << name << ": up to date ("
               << Display(spec.output, job.display_base) << ")\n";
      return Status::Ok();
    }
  }

  TESSERA_RETURN_IF_ERROR(CheckToolchain(options));
  for (const fs::path& dir : {cargo_home, record_dir}) {
    fs::create_directories(dir, ec);
    if (ec) {
      return IoError(name + ": cannot create " + dir.string() + ": " +
                     ec.message());
    }
  }
  fs::remove(record_dir / kRecordFile, ec);
  {
    std::ofstream out(cargo_home / "config.toml", std::ios::binary);
    out << config;
    if (!out) return IoError(name + ": cannot write the cargo config");
  }

  const Clock::time_point start = Clock::now();
  progress << name << ": cargo build --release (" << kTarget << ", offline, "
           << options.cargo_registry << ")\n";
  if (options.verbose) progress << "  " << JoinCommand(argv) << "\n";
  progress.flush();
  std::string pending, artifact, diagnostics;
  const auto on_line = [&](const std::string& line) {
    if (!line.empty() && line[0] == '{') {
      std::string a = ArtifactOf(line);
      if (!a.empty()) artifact = a;
    } else if (IsStatusLine(line)) {
      progress << line << "\n";
      progress.flush();
    } else {
      diagnostics += line + "\n";
    }
  };
  Result<ProcessResult> r = RunProcess(argv, [&](std::string_view chunk) {
    pending.append(chunk);
    for (size_t nl; (nl = pending.find('\n')) != std::string::npos;) {
      on_line(pending.substr(0, nl));
      pending.erase(0, nl + 1);
    }
  });
  if (!pending.empty()) on_line(pending);
  if (!r.ok()) {
    return Status(r.status().code(), name + ": " + r.status().message());
  }
  if (r->exit_code != 0) {
    return InvalidArgument(
        name + ": cargo build failed (" + options.cargo + " exited with " +
        (r->exit_code < 0 ? std::string("a signal")
                          : "status " + std::to_string(r->exit_code)) +
        "): " + DependencyHint(diagnostics, options.cargo_registry) +
        (diagnostics.empty() ? "\n" : "\n" + diagnostics));
  }
  if (!diagnostics.empty()) progress << diagnostics;  // warnings, verbatim
  if (artifact.empty()) {
    return InvalidArgument(name +
                           ": cargo built no cdylib; the crate needs "
                           "[lib] crate-type = [\"cdylib\"]");
  }
  const fs::path temp = spec.output.string() + ".tmp";
  fs::create_directories(spec.output.parent_path(), ec);
  fs::copy_file(artifact, temp, fs::copy_options::overwrite_existing, ec);
  if (!ec) fs::rename(temp, spec.output, ec);
  if (ec) {
    return IoError(name + ": cannot write " + spec.output.string() + ": " +
                   ec.message());
  }
  {
    std::ofstream out(record_dir / kRecordFile, std::ios::binary);
    out << record;
  }
  const uintmax_t size = fs::file_size(spec.output, ec);
  const double secs =
      std::chrono::duration<double>(Clock::now() - start).count();
  progress << name << ": built " << Display(spec.output, job.display_base)
           << " (" << FormatSize(size) << ") in " << std::fixed
           << std::setprecision(1) << secs << " s\n";
  progress.flush();
  return Status::Ok();
}

}  // namespace

Result<fs::path> FindRustSdkDir() {
  return FindSdkCrate("TESSERA_RUST_SDK_DIR", kShardSdk, {});
}

Result<fs::path> FindRustComputeSdkDir() {
  std::vector<fs::path> candidates;
  if (const char* env = std::getenv("TESSERA_RUST_SDK_DIR"); env && *env) {
    fs::path shard_sdk(env);
    if (!shard_sdk.has_filename()) shard_sdk = shard_sdk.parent_path();
    candidates.push_back(shard_sdk.parent_path() / kComputeSdk);
  }
  return FindSdkCrate("TESSERA_RUST_COMPUTE_SDK_DIR", kComputeSdk,
                      std::move(candidates));
}

Status BuildCrate(const CrateBuildSpec& spec, const BuildOptions& options,
                  std::ostream& progress) {
  return BuildOneCrate({spec, fs::path(), false}, options, progress);
}

Status BuildCrateKind(const Manifest& manifest, const ShardKindSpec& spec,
                      const BuildOptions& options, std::ostream& progress) {
  CrateJob job;
  job.spec.name = spec.config.name;
  job.spec.crate_dir = spec.crate_dir;
  job.spec.output = spec.output;
  job.spec.build_dir = (manifest.dir / kBuildDirName).lexically_normal();
  job.display_base = manifest.dir;
  job.shard_sdk = true;
  return BuildOneCrate(job, options, progress);
}

}  // namespace tessera::app
