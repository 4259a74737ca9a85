// Threading: BuildKinds plans on the calling thread, then runs compiler
// processes on up to `jobs` worker threads (all compiles, then all links).
// Workers share one mutex guarding the progress stream, the step counter,
// each kind's state and the failure list; a compiler process runs outside
// the lock.
#include "app/builder.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iterator>
#include <mutex>
#include <sstream>
#include <system_error>
#include <thread>

#include "app/crate_builder.h"
#include "app/depfile.h"
#include "app/guest_pch.h"
#include "common/subprocess.h"

namespace tessera::app {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Stands for the compiler-rt archive in recorded link commands: finding it
// needs the compiler, which an up-to-date check should not.
constexpr char kBuiltinsToken[] = "<wasm32-builtins>";
constexpr char kCommandsFile[] = "commands.txt";

std::string DescribeExit(const std::string& tool, int exit_code) {
  if (exit_code < 0) return tool + " was killed by a signal";
  return tool + " exited with status " + std::to_string(exit_code);
}

bool IsCSource(const fs::path& p) { return p.extension() == ".c"; }

// *.cc and *.cpp (and *.c if `with_c`) directly in `dir`, sorted by name.
Result<std::vector<fs::path>> ListSources(const fs::path& dir, bool with_c) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    const fs::path& p = it->path();
    if ((p.extension() == ".cc" || p.extension() == ".cpp" ||
         (with_c && IsCSource(p))) &&
        it->is_regular_file(ec)) {
      out.push_back(p);
    }
  }
  if (ec) return IoError(dir.string() + ": cannot list: " + ec.message());
  std::sort(out.begin(), out.end());
  return out;
}

// Where an SDK finds tessera/abi.h: its own include/ (an installed SDK),
// else include/ of the source tree it sits in (<repo>/sdk/cpp ->
// <repo>/include). Empty if neither holds it.
fs::path AbiIncludeDir(const fs::path& sdk_dir) {
  std::error_code ec;
  for (const fs::path& dir :
       {sdk_dir / "include",
        (sdk_dir / ".." / ".." / "include").lexically_normal()}) {
    if (fs::is_regular_file(dir / "tessera" / "abi.h", ec)) return dir;
  }
  return {};
}

bool IsSdkDir(const fs::path& dir) { return !AbiIncludeDir(dir).empty(); }

struct Step {
  size_t plan = 0;     // index into the plans
  std::string what;    // "compiling arena.cc"
  std::string action;  // "compiling shards/arena/arena.cc", for errors
  std::string tool;    // argv[0], for errors
  std::vector<std::string> argv;
  bool reuse = false;  // the object is current: not run (quick builds)
};

// One stale source kind and how to build it.
struct KindPlan {
  const ShardKindSpec* spec = nullptr;
  std::string name;
  fs::path obj_dir;
  fs::path output;       // spec->output, or QuickOutput(spec) when quick
  fs::path temp_output;  // linked here, then renamed to output
  std::vector<fs::path> objects;
  std::vector<Step> compiles;
  Step link;
  std::string commands;  // every command line, recorded after a build
  // Guarded by the build's mutex once workers run.
  bool failed = false;
  bool started = false;
  Clock::time_point start_time;
};

std::string ReadFileOrEmpty(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
}

// True when the output exists, was built by the same commands and is newer
// than every source and every header the sources included last time.
bool UpToDate(const KindPlan& plan, const std::vector<fs::path>& sources) {
  if (ReadFileOrEmpty(plan.obj_dir / kCommandsFile) != plan.commands) {
    return false;
  }
  std::vector<fs::path> depfiles;
  for (const fs::path& obj : plan.objects) {
    depfiles.emplace_back(obj.string() + ".d");
  }
  return NewerThanInputs(plan.output, sources, depfiles);
}

// The object exists and is newer than every input its depfile lists.
bool ObjectCurrent(const fs::path& obj) {
  return NewerThanInputs(obj, {}, {fs::path(obj.string() + ".d")});
}

std::string Display(const fs::path& p, const fs::path& base) {
  fs::path rel = p.lexically_relative(base);
  return rel.empty() ? p.string() : rel.string();
}

std::string FormatSize(uintmax_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " B";
  return std::to_string((bytes + 512) / 1024) + " KB";
}

// Runs `fn(i)` for i in [0, n) on up to `jobs` threads.
void ParallelFor(size_t n, unsigned jobs,
                 const std::function<void(size_t)>& fn) {
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < n; i = next++) fn(i);
  };
  const size_t threads = std::min<size_t>(std::max(1u, jobs), n);
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
}

class Build {
 public:
  Build(const Manifest& m, const BuildOptions& o, std::ostream& progress)
      : manifest_(m), options_(o), progress_(progress) {}

  Status Run();

 private:
  Status PlanKind(const ShardKindSpec& spec);
  void RunStep(Step& step);
  void FinishKind(KindPlan& plan);
  void Fail(KindPlan& plan, Status status);  // requires mu_
  Status ResolveBuiltins();
  Status BuildCrates();
  // The compile flags besides the files (sdk/cpp/BUILD.md: MVP plus
  // sign-extension and mutable globals only; the host refuses SIMD,
  // threads, bulk memory, ...).
  std::vector<std::string> CFlags() const;
  std::vector<std::string> CxxFlags() const;
  fs::path PchPath() const {
    return manifest_.dir / kBuildDirName / "obj-quick" / "pch" / "sdk.pch";
  }

  const Manifest& manifest_;
  const BuildOptions& options_;
  std::ostream& progress_;
  fs::path sdk_dir_;
  fs::path abi_include_dir_;  // holds tessera/abi.h
  std::vector<fs::path> sdk_sources_;
  std::string builtins_;
  std::vector<KindPlan> plans_;
  std::vector<const ShardKindSpec*> crates_;

  std::mutex mu_;
  size_t step_counter_ = 0;  // guarded by mu_
  size_t total_steps_ = 0;
  std::vector<Status> failures_;  // guarded by mu_
};

Status Build::PlanKind(const ShardKindSpec& spec) {
  const std::string& name = spec.config.name;
  std::error_code ec;
  if (!fs::is_directory(spec.source, ec)) {
    return NotFound(name + ": source directory " + spec.source.string() +
                    " does not exist");
  }
  Result<std::vector<fs::path>> own =
      ListSources(spec.source, /*with_c=*/false);
  if (!own.ok()) {
    return Status(own.status().code(), name + ": " + own.status().message());
  }
  if (own->empty()) {
    return NotFound(name + ": no .cc or .cpp files in " + spec.source.string());
  }

  KindPlan plan;
  plan.spec = &spec;
  plan.name = name;
  plan.obj_dir = (manifest_.dir / kBuildDirName /
                  (options_.quick ? "obj-quick" : "obj") / name)
                     .lexically_normal();
  plan.output = options_.quick ? QuickOutput(manifest_, spec) : spec.output;
  plan.temp_output = fs::path(plan.output.string() + ".tmp");

  std::vector<fs::path> sources = *own;
  sources.insert(sources.end(), sdk_sources_.begin(), sdk_sources_.end());
  for (size_t i = 0; i < sources.size(); ++i) {
    const bool from_sdk = i >= own->size();
    const fs::path& src = sources[i];
    const fs::path obj_dir = from_sdk ? plan.obj_dir / "sdk" : plan.obj_dir;
    const fs::path obj = obj_dir / (src.filename().string() + ".o");
    Step step;
    step.what = "compiling " + std::string(from_sdk ? "sdk/" : "") +
                src.filename().string();
    step.action = "compiling " + src.string();
    // Flags as sdk/cpp/BUILD.md: MVP plus sign-extension and mutable
    // globals only (the host refuses SIMD, threads, bulk memory, ...).
    const bool is_c = IsCSource(src);
    step.tool = is_c ? options_.cc : options_.cxx;
    step.argv = {step.tool};
    const std::vector<std::string> flags = is_c ? CFlags() : CxxFlags();
    step.argv.insert(step.argv.end(), flags.begin(), flags.end());
    if (!is_c && options_.quick && !from_sdk) {
      step.argv.insert(step.argv.end(), {"-include-pch", PchPath().string()});
    }
    step.argv.insert(step.argv.end(), {"-MMD", "-MF", obj.string() + ".d", "-c",
                                       src.string(), "-o", obj.string()});
    // Quick builds keep the SDK's objects while they are newer than what
    // they were compiled from: only the shard's own files are compiled.
    step.reuse = options_.quick && from_sdk && ObjectCurrent(obj);
    plan.objects.push_back(obj);
    plan.compiles.push_back(std::move(step));
  }

  Step& link = plan.link;
  link.what = "linking " + spec.output.filename().string();
  link.action = "linking " + spec.output.string();
  link.tool = options_.wasm_ld;
  // Reactor model (crt1-reactor.o exports _initialize); the shadow stack
  // first in memory, so overflowing it traps instead of corrupting data.
  const fs::path libdir = fs::path(options_.sysroot) / "lib" / "wasm32-wasi";
  link.argv = {options_.wasm_ld,
               "--no-entry",
               "--strip-all",
               "--stack-first",
               "-z",
               "stack-size=" + std::to_string(options_.stack_bytes),
               "-L" + libdir.string(),
               (libdir / "crt1-reactor.o").string()};
  for (const fs::path& obj : plan.objects) link.argv.push_back(obj.string());
  for (const char* lib : {"-lc++", "-lc++abi", "-lc", kBuiltinsToken, "-o"}) {
    link.argv.push_back(lib);
  }
  link.argv.push_back(plan.temp_output.string());

  for (const Step& s : plan.compiles) {
    for (const std::string& a : s.argv) plan.commands += a + ' ';
    plan.commands += '\n';
  }
  for (const std::string& a : link.argv) plan.commands += a + ' ';
  plan.commands += '\n';

  if (!options_.force && UpToDate(plan, sources)) {
    progress_ << name << ": up to date (" << Display(plan.output, manifest_.dir)
              << ")\n";
    return Status::Ok();
  }
  plans_.push_back(std::move(plan));
  return Status::Ok();
}

// The compiler-rt builtins archive for wasm32, as the compiler reports it.
Status Build::ResolveBuiltins() {
  Result<ProcessResult> r =
      RunProcess({options_.cc, "--target=wasm32-wasi",
                  "--sysroot=" + options_.sysroot, "-print-libgcc-file-name"});
  if (!r.ok()) return r.status();
  std::string path = r->output;
  while (!path.empty() && (path.back() == '\n' || path.back() == '\r')) {
    path.pop_back();
  }
  std::error_code ec;
  if (r->exit_code != 0 || path.empty() || !fs::is_regular_file(path, ec)) {
    return NotFound("the wasm32 compiler-rt builtins were not found (" +
                    options_.cc + " reported \"" + path +
                    "\"); on Debian install libclang-rt-14-dev-wasm32");
  }
  builtins_ = path;
  return Status::Ok();
}

std::vector<std::string> Build::CFlags() const {
  return {"--target=wasm32-wasi",
          "--sysroot=" + options_.sysroot,
          "-mcpu=mvp",
          "-msign-ext",
          "-mmutable-globals",
          options_.quick ? "-O0" : options_.opt_level,
          "-std=c11",
          "-Wall",
          "-Wextra"};
}

std::vector<std::string> Build::CxxFlags() const {
  std::vector<std::string> flags = {"--target=wasm32-wasi",
                                    "--sysroot=" + options_.sysroot,
                                    "-mcpu=mvp",
                                    "-msign-ext",
                                    "-mmutable-globals",
                                    options_.quick ? "-O0" : options_.opt_level,
                                    "-std=c++20",
                                    "-fno-exceptions",
                                    "-fno-rtti",
                                    "-Wall",
                                    "-Wextra",
                                    "-I" + (sdk_dir_ / "include").string()};
  if (abi_include_dir_ != sdk_dir_ / "include") {
    flags.push_back("-I" + abi_include_dir_.string());
  }
  return flags;
}

void Build::Fail(KindPlan& plan, Status status) {
  plan.failed = true;
  failures_.push_back(std::move(status));
}

void Build::RunStep(Step& step) {
  KindPlan& plan = plans_[step.plan];
  std::vector<std::string> argv = step.argv;
  for (std::string& a : argv) {
    if (a == kBuiltinsToken) a = builtins_;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (plan.failed) return;
    if (!plan.started) {
      plan.started = true;
      plan.start_time = Clock::now();
    }
    progress_ << "[" << ++step_counter_ << "/" << total_steps_ << "] "
              << plan.name << ": " << step.what << "\n";
    if (options_.verbose) {
      progress_ << "  " << JoinCommand(argv) << "\n";
    }
    progress_.flush();
  }
  Result<ProcessResult> r = RunProcess(argv);
  std::lock_guard<std::mutex> lock(mu_);
  if (!r.ok()) {
    Fail(plan, Status(r.status().code(), plan.name + ": " + step.action + ": " +
                                             r.status().message()));
    return;
  }
  if (r->exit_code != 0) {
    Fail(plan, InvalidArgument(plan.name + ": " + step.action + " failed (" +
                               DescribeExit(step.tool, r->exit_code) + "):\n" +
                               r->output));
    return;
  }
  if (!r->output.empty()) {  // warnings, verbatim
    progress_ << r->output;
    if (r->output.back() != '\n') progress_ << "\n";
    progress_.flush();
  }
}

// After a successful link: publish the module and record the commands.
void Build::FinishKind(KindPlan& plan) {
  std::error_code ec;
  fs::rename(plan.temp_output, plan.output, ec);
  if (ec) {
    std::lock_guard<std::mutex> lock(mu_);
    Fail(plan, IoError(plan.name + ": cannot write " + plan.output.string() +
                       ": " + ec.message()));
    return;
  }
  {
    std::ofstream out(plan.obj_dir / kCommandsFile, std::ios::binary);
    out << plan.commands;
  }
  const uintmax_t size = fs::file_size(plan.output, ec);
  std::lock_guard<std::mutex> lock(mu_);
  const double secs =
      std::chrono::duration<double>(Clock::now() - plan.start_time).count();
  std::ostringstream line;
  line << plan.name << ": built " << Display(plan.output, manifest_.dir) << " ("
       << FormatSize(size) << ") in " << std::fixed << std::setprecision(1)
       << secs << " s\n";
  progress_ << line.str();
  progress_.flush();
}

Status Build::Run() {
  std::vector<const ShardKindSpec*> selected;
  for (const std::string& want : options_.only_kinds) {
    const ShardKindSpec* spec = manifest_.FindKind(want);
    if (spec == nullptr) {
      return InvalidArgument("no shard kind \"" + want + "\" in the manifest");
    }
    if (!spec->is_built()) {
      return InvalidArgument(want +
                             ": is a prebuilt module (\"wasm\"), not "
                             "built from source");
    }
    (spec->is_crate() ? crates_ : selected).push_back(spec);
  }
  if (options_.only_kinds.empty()) {
    for (const ShardKindSpec& spec : manifest_.kinds) {
      if (spec.is_built()) {
        (spec.is_crate() ? crates_ : selected).push_back(&spec);
        continue;
      }
      std::error_code ec;
      if (!fs::is_regular_file(spec.wasm, ec)) {
        return NotFound(spec.config.name + ": prebuilt module " +
                        spec.wasm.string() + " does not exist");
      }
      progress_ << spec.config.name << ": prebuilt ("
                << Display(spec.wasm, manifest_.dir) << ")\n";
    }
  }
  if (selected.empty()) return BuildCrates();

  if (!options_.sdk_dir.empty()) {
    if (!IsSdkDir(options_.sdk_dir)) {
      return NotFound(options_.sdk_dir.string() +
                      " is not a tessera C++ SDK (no tessera/abi.h in its "
                      "include/ or in ../../include)");
    }
    sdk_dir_ = options_.sdk_dir;
  } else {
    Result<fs::path> sdk = FindSdkDir();
    if (!sdk.ok()) return sdk.status();
    sdk_dir_ = *sdk;
  }
  abi_include_dir_ = AbiIncludeDir(sdk_dir_);
  std::error_code ec;
  if (fs::is_directory(sdk_dir_ / "src", ec)) {
    Result<std::vector<fs::path>> srcs =
        ListSources(sdk_dir_ / "src", /*with_c=*/true);
    if (!srcs.ok()) return srcs.status();
    sdk_sources_ = *srcs;
  }

  plans_.reserve(selected.size());
  for (const ShardKindSpec* spec : selected) {
    TESSERA_RETURN_IF_ERROR(PlanKind(*spec));
  }
  if (plans_.empty()) return BuildCrates();

  TESSERA_RETURN_IF_ERROR(ResolveBuiltins());
  if (options_.quick) {
    std::vector<std::string> sdk_headers;
    if (fs::is_regular_file(sdk_dir_ / "include/tessera/shard_sdk.h", ec)) {
      sdk_headers.push_back("tessera/shard_sdk.h");
    }
    Result<fs::path> pch = EnsureGuestPch(PchPath().parent_path(), options_.cxx,
                                          CxxFlags(), sdk_headers);
    if (!pch.ok()) return pch.status();
  }
  std::vector<Step*> compiles;
  for (size_t p = 0; p < plans_.size(); ++p) {
    KindPlan& plan = plans_[p];
    for (const fs::path& dir :
         {plan.obj_dir / "sdk", plan.output.parent_path()}) {
      fs::create_directories(dir, ec);
      if (ec) {
        return IoError(plan.name + ": cannot create " + dir.string() + ": " +
                       ec.message());
      }
    }
    // A build that stops half way must not look up to date.
    fs::remove(plan.obj_dir / kCommandsFile, ec);
    for (Step& s : plan.compiles) {
      s.plan = p;
      if (!s.reuse) compiles.push_back(&s);
    }
    plan.link.plan = p;
    total_steps_ += 1;
  }

  const unsigned jobs = options_.jobs != 0
                            ? options_.jobs
                            : std::max(1u, std::thread::hardware_concurrency());
  total_steps_ += compiles.size();
  ParallelFor(compiles.size(), jobs, [&](size_t i) { RunStep(*compiles[i]); });
  ParallelFor(plans_.size(), jobs, [&](size_t i) {
    RunStep(plans_[i].link);
    bool ok;
    {
      std::lock_guard<std::mutex> lock(mu_);
      ok = !plans_[i].failed;
    }
    if (ok) FinishKind(plans_[i]);
  });

  return BuildCrates();
}

// Crate kinds one at a time (cargo runs its own jobs), after the C++ kinds;
// then every failure of both.
Status Build::BuildCrates() {
  for (const ShardKindSpec* spec : crates_) {
    Status s = BuildCrateKind(manifest_, *spec, options_, progress_);
    if (!s.ok()) failures_.push_back(std::move(s));
  }
  if (failures_.empty()) return Status::Ok();
  std::string message;
  for (const Status& s : failures_) {
    if (!message.empty() && message.back() != '\n') message += '\n';
    message += s.message();
  }
  return Status(failures_.front().code(), message);
}

}  // namespace

Result<std::filesystem::path> FindSdkDir() {
  if (const char* env = std::getenv("TESSERA_SDK_DIR"); env && *env) {
    if (IsSdkDir(env)) return fs::path(env);
    return NotFound(std::string("TESSERA_SDK_DIR=") + env +
                    " is not a tessera C++ SDK (no tessera/abi.h in its "
                    "include/ or in ../../include)");
  }
  std::vector<fs::path> candidates;
#ifdef TESSERA_SOURCE_DIR
  candidates.push_back(fs::path(TESSERA_SOURCE_DIR) / "sdk" / "cpp");
#endif
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    candidates.push_back(
        (exe.parent_path() / ".." / "share" / "tessera" / "sdk" / "cpp")
            .lexically_normal());
  }
  std::string looked;
  for (const fs::path& c : candidates) {
    if (IsSdkDir(c)) return c;
    looked += (looked.empty() ? "" : ", ") + c.string();
  }
  return NotFound("the tessera C++ guest SDK was not found (looked in " +
                  looked + "); set TESSERA_SDK_DIR");
}

fs::path QuickOutput(const Manifest& manifest, const ShardKindSpec& spec) {
  return (manifest.dir / kBuildDirName / "quick" / spec.output.filename())
      .lexically_normal();
}

Status BuildKinds(const Manifest& manifest, const BuildOptions& options,
                  std::ostream& progress) {
  return Build(manifest, options, progress).Run();
}

}  // namespace tessera::app
