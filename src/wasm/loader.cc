// LoadModule: check → instrument → generate C → compile (cached) → dlopen.
#include "wasm/loader.h"

#include <dlfcn.h>
#include <openssl/evp.h>
#include <unistd.h>
#include <wabt/ir.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include "common/subprocess.h"
#include "wasm/codegen.h"
#include "wasm/compiled_module.h"
#include "wasm/instrument.h"
#include "wasm/parse.h"
#include "wasm/rt/guard.h"

namespace tessera::wasm {
namespace fs = std::filesystem;
namespace {

// Bump when the glue, instrumentation or runtime ABI changes, so stale
// cached objects are never loaded.
constexpr int kCodegenVersion = 5;  // 5: Tiny C builds

double MsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - t0)
      .count();
}

std::string Sha256Hex(const std::string& data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), md, &len, EVP_sha256(), nullptr);
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    out += kHex[md[i] >> 4];
    out += kHex[md[i] & 15];
  }
  return out;
}

// The compiler's identity, part of the cache key (`cc --version`).
std::string CompilerVersion(const std::string& cc) {
  static std::mutex mu;
  static std::map<std::string, std::string> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(cc);
  if (it != cache.end()) return it->second;
  auto r = RunProcess({cc, "--version"});
  std::string v = r.ok() ? r->output : "unknown";
  cache[cc] = v;
  return v;
}

// The C compiler's flags besides the files (part of the cache key).
std::vector<std::string> CompileFlags(const LoadOptions& options) {
  if (IsTinyCompiler(options.c_compiler)) {
    // Tiny C neither optimises nor contracts, folds or reorders floating
    // point, and its signed arithmetic wraps: nothing to turn off.
    return {"-shared", "-fPIC", "-DNDEBUG", "-w"};
  }
  return {options.opt_level, "-fPIC", "-shared", "-fno-strict-aliasing",
          "-fwrapv",
          // Deterministic floating point on every host: no FMA contraction
          // (aarch64's baseline has FMA), no errno side paths for sqrt.
          "-ffp-contract=off", "-fno-math-errno",
          // Signalling NaNs exist: no folding of x*1, x/1, x-0, -1*x, ... to x
          // or -x, which would return a signalling NaN unchanged where
          // WebAssembly requires the arithmetic to quiet it (spec
          // float_exprs.wast; tests/spec/fixtures/signalling_nan.wast).
          "-fsignaling-nans", "-DNDEBUG", "-w"};
}

std::mutex& KeyMutex(const std::string& key) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<std::mutex>> locks;
  std::lock_guard<std::mutex> lock(mu);
  auto& m = locks[key];
  if (!m) m = std::make_unique<std::mutex>();
  return *m;
}

Status WriteFile(const fs::path& p, const std::string& text) {
  std::ofstream f(p, std::ios::binary);
  f << text;
  f.close();
  if (!f) return IoError("cannot write " + p.string());
  return Status::Ok();
}

Status CompileToSo(const GeneratedC& c, const LoadOptions& options,
                   const fs::path& so_path) {
  static std::atomic<uint64_t> counter{0};
  fs::path dir = so_path.parent_path() /
                 (so_path.stem().string() + ".tmp." + std::to_string(getpid()) +
                  "." + std::to_string(counter.fetch_add(1)));
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return IoError("cannot create " + dir.string() + ": " + ec.message());
  TESSERA_RETURN_IF_ERROR(WriteFile(dir / "wasm-rt.h", kWasmRtHeader));
  TESSERA_RETURN_IF_ERROR(WriteFile(dir / "guest.h", c.header));
  TESSERA_RETURN_IF_ERROR(WriteFile(dir / "guest.c", c.source));
  fs::path tmp_so = dir / "guest.so";
  std::vector<std::string> argv = CompileFlags(options);
  argv.insert(argv.begin(), options.c_compiler);
  argv.insert(argv.end(), {"-I" + dir.string(), (dir / "guest.c").string(),
                           "-o", tmp_so.string()});
  auto run = RunProcess(argv);
  if (!run.ok()) {
    fs::remove_all(dir, ec);
    return run.status();
  }
  if (run->exit_code != 0) {
    std::string msg = "C compiler failed (" + JoinCommand(argv) + "):\n" +
                      run->output.substr(0, 8000);
    if (!options.keep_c_source) fs::remove_all(dir, ec);
    return Internal(msg);
  }
  fs::rename(tmp_so, so_path, ec);  // atomic: readers see all or nothing
  if (ec) {
    fs::remove_all(dir, ec);
    return IoError("cannot move compiled module into the cache: " +
                   ec.message());
  }
  if (options.keep_c_source) {
    fs::rename(dir / "guest.c", so_path.string() + ".c", ec);
  }
  fs::remove_all(dir, ec);
  return Status::Ok();
}

template <typename T>
T Sym(void* handle, const char* name) {
  return reinterpret_cast<T>(dlsym(handle, name));
}

Result<std::shared_ptr<const CompiledModule>> OpenSo(const fs::path& so_path,
                                                     ModuleInfo info,
                                                     bool linkable) {
  void* h = dlopen(so_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) return Internal(std::string("dlopen failed: ") + dlerror());
  auto m = std::make_shared<CompiledModule>();
  m->dl_handle = h;
  m->so_path = so_path.string();
  m->info = std::move(info);
  m->linkable = linkable;
  auto size_fn = Sym<size_t (*)()>(h, "tessera_guest_instance_size");
  auto init_fn = Sym<void (*)()>(h, "tessera_guest_init_module");
  m->instantiate = Sym<void (*)(void*, void*)>(h, "tessera_guest_instantiate");
  m->free_instance = Sym<void (*)(void*)>(h, "tessera_guest_free");
  m->memory = Sym<wasm_rt_memory_t* (*)(void*)>(h, "tessera_guest_memory");
  m->fuel = Sym<uint64_t* (*)(void*)>(h, "tessera_guest_fuel");
  m->interrupt = Sym<uint32_t* (*)(void*)>(h, "tessera_guest_interrupt");
  m->export_ptr = Sym<void* (*)(void*, uint32_t)>(h, "tessera_guest_export");
  auto thunks = Sym<const CompiledModule::Thunk*>(h, "tessera_guest_thunks");
  auto count = Sym<const uint32_t*>(h, "tessera_guest_thunk_count");
  if (!size_fn || !init_fn || !m->instantiate || !m->free_instance ||
      !m->memory || !m->export_ptr || !thunks || !count ||
      *count != m->info.funcs.size()) {
    return Internal("compiled module " + so_path.string() +
                    " lacks tessera glue (stale cache entry?)");
  }
  m->instance_size = size_fn();
  for (uint32_t i = 0; i < *count; ++i) m->thunks.push_back(thunks[i]);
  rt::InitRuntime();
  init_fn();
  return std::shared_ptr<const CompiledModule>(std::move(m));
}

}  // namespace

bool IsTinyCompiler(const std::string& c_compiler) {
  return fs::path(c_compiler).filename() == "tcc";
}

std::string QuickCompiler() {
  static const std::string path = [] {
    std::error_code ec;
    for (const char* p : {"/usr/bin/tcc", "/usr/local/bin/tcc"}) {
      if (fs::exists(p, ec)) return std::string(p);
    }
    return std::string();
  }();
  return path;
}

CompiledModule::~CompiledModule() {
  if (dl_handle) dlclose(dl_handle);
}

Result<std::shared_ptr<const CompiledModule>> LoadModule(
    std::span<const uint8_t> wasm, const LoadOptions& options,
    LoadStats* stats) {
  LoadStats local;
  LoadStats& st = stats ? *stats : local;
  auto t0 = std::chrono::steady_clock::now();
  auto parsed = ParseModule(wasm, options.check);
  if (!parsed.ok()) return parsed.status();
  st.check_ms = MsSince(t0);
  if (options.cache_dir.empty()) {
    return InvalidArgument("LoadModule needs a cache directory");
  }

  uint32_t cap =
      options.check.memory_cap_pages ? options.check.memory_cap_pages : 65536;
  std::ostringstream key;
  key << "tessera-codegen-" << kCodegenVersion << "\n"
      << "wabt-1.0.32\n"
      << CompilerVersion(options.c_compiler) << "\n"
      << JoinCommand(CompileFlags(options)) << " fuel=" << options.fuel
      << " cap=" << cap << " link_any=" << options.check.link_any_imports
      << "\n"
      << kWasmRtHeader << "\n";
  std::string key_text = key.str();
  key_text.append(reinterpret_cast<const char*>(wasm.data()), wasm.size());
  std::string hash = Sha256Hex(key_text);

  // Every import goes through the link glue: a module's imports are bound
  // at instantiation (Instance::Create), whatever the ABI.
  const bool linked = !parsed->info.import_types.empty();
  std::error_code ec;
  fs::create_directories(options.cache_dir, ec);
  if (ec) {
    return IoError("cannot create cache directory " + options.cache_dir + ": " +
                   ec.message());
  }
  fs::path so_path = fs::path(options.cache_dir) / (hash + ".so");

  std::lock_guard<std::mutex> lock(KeyMutex(so_path.string()));
  if (fs::exists(so_path)) {
    st.cache_hit = true;
  } else {
    auto t1 = std::chrono::steady_clock::now();
    wabt::Module* ir = parsed->ir.get();
    if (options.fuel) InstrumentFuel(ir);
    CapMemory(ir, cap);
    auto c = GenerateC(ir, parsed->info, options.fuel, linked);
    if (!c.ok()) return c.status();
    st.codegen_ms = MsSince(t1);
    auto t2 = std::chrono::steady_clock::now();
    TESSERA_RETURN_IF_ERROR(CompileToSo(*c, options, so_path));
    st.compile_ms = MsSince(t2);
  }
  auto t3 = std::chrono::steady_clock::now();
  auto m = OpenSo(so_path, std::move(parsed->info), linked);
  st.dlopen_ms = MsSince(t3);
  return m;
}

}  // namespace tessera::wasm
