// Sandbox: one guest instance with the limits, buffers, logs and failure
// text every kind of sandboxed program shares. An ABI layer (shard/ now;
// compute and realm next) keeps only what its exports mean.
//
//   - fuel: the owner opens a budget (StartBudget) for a group of calls
//     that share it (a shard's whole tick); each call draws on what is
//     left; running out traps and fails the sandbox ("fuel exhausted: the
//     tick used more than N fuel"). Deterministic: the same calls use the
//     same fuel on every run and machine.
//   - wall clock: a Watchdog deadline of max_run_ms around each call.
//   - memory: the module was loaded with its cap; a refused grow is noted
//     in the failure text ("memory: ...").
//   - buffers: arguments go into guest memory through the module's alloc
//     export; results come back through its output_ptr/output_len exports,
//     bounds-checked and capped in size.
//   - logs: the ABI's `log` host function (LogFunction) keeps recent lines
//     (cut to max_log_line_bytes as valid UTF-8) and forwards each one.
// Any trap, panic, limit or buffer violation fails the sandbox: failed()
// turns true, failure() holds one line ("fuel exhausted: ...",
// "watchdog: ...", "trap: ...", "panic: ...", "memory: ...", "abi: ..."),
// the instance is released and every later call fails with that line.
//
// Threading: one thread at a time (the owner's worker); the watchdog
// alone touches the instance from another thread (to interrupt it).
#ifndef TESSERA_GUEST_SANDBOX_H_
#define TESSERA_GUEST_SANDBOX_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "guest/host_functions.h"
#include "guest/watchdog.h"
#include "wasm/instance.h"

namespace tessera::wasm {
class CompiledModule;
}

namespace tessera::guest {

// Receives every guest log line (already cut and made valid UTF-8); runs
// on the calling thread inside the guest call and must not block.
using LogSink = std::function<void(int level, std::string_view text)>;

// An owner's hook for guest log lines (Sandbox::set_owner): gets the owner
// pointer and each line, after SandboxEnv::forward_log.
using OwnerLogFn = void (*)(void* owner, int level, std::string_view text);

// Where a sandbox runs. Pointers are not owned and must outlive it.
struct SandboxEnv {
  // Arms max_run_ms around each call. Null: no wall-clock limit.
  Watchdog* watchdog = nullptr;
  // Thread CPU time for per-step budgets of the owner; null: ThreadCpuClock.
  const Clock* cpu_clock = nullptr;
  // Receives every guest log line as well. May be empty.
  LogSink forward_log;
  // How many recent log lines recent_log() keeps.
  size_t log_lines = 64;
};

struct SandboxOptions {
  // The ABI's import module, whose functions `host_functions` provides.
  std::string import_module;
  // The buffer convention's exports: (len: i32) -> ptr, () -> i32, () -> i32.
  std::string alloc_export;
  std::string output_ptr_export;
  std::string output_len_export;
  uint32_t max_run_ms = 200;
  uint32_t memory_mb = 64;  // for the failure text only (the loader caps)
  int panic_level = 4;      // a log line at this level or above is a panic
  size_t max_log_line_bytes = 4096;
};

struct LogLine {
  int level = 0;
  std::string text;  // valid UTF-8, at most max_log_line_bytes
};

// A guest-memory (ptr, len) argument pair.
struct GuestBytes {
  uint32_t ptr = 0;
  uint32_t len = 0;
};

class Sandbox {
 public:
  // The standard `log(level: i32, ptr: i32, len: i32) -> ()` host function:
  // an ABI lists it in its HostFunctionTable. A (ptr, len) outside memory
  // traps the call.
  static HostFunction LogFunction(std::string name = "log");

  // Instantiates `module` with `host_functions` bound to its imports (each
  // receives this Sandbox as `user`), running `_initialize` within a first
  // budget of `fuel` labelled `what`. Errors: the failure line, with code
  // kTrap, kResourceExhausted (fuel, memory) or kDeadlineExceeded; kRefused
  // when an import is not in the table or a buffer export is missing.
  static Result<std::unique_ptr<Sandbox>> Create(
      std::shared_ptr<const wasm::CompiledModule> module,
      const HostFunctionTable& host_functions, SandboxOptions options,
      SandboxEnv env, int64_t fuel, std::string what);

  ~Sandbox();
  Sandbox(const Sandbox&) = delete;
  Sandbox& operator=(const Sandbox&) = delete;

  // Opens a fuel budget that the following calls share, until the next
  // StartBudget. `what` names the group in the failure text ("the tick").
  void StartBudget(int64_t fuel, std::string what);
  // The watchdog deadline of the following calls (initially
  // options().max_run_ms; the failure text names it).
  void set_max_run_ms(uint32_t max_run_ms) { max_run_ms_ = max_run_ms; }
  uint32_t max_run_ms() const { return max_run_ms_; }

  // The ABI layer's object behind this sandbox (not owned), for its host
  // functions, which receive the Sandbox as `user`; `on_log`, when set,
  // also receives every guest log line (e.g. to route it to the current
  // call's recorder). Null until set, e.g. during Create's `_initialize`.
  void set_owner(void* owner, OwnerLogFn on_log = nullptr) {
    owner_ = owner;
    owner_log_ = on_log;
  }
  void* owner() const { return owner_; }

  // Fuel left in the current budget (negative once exhausted).
  int64_t fuel_left() const { return budget_left_; }

  // The export named `name` if it is a function with signature `sig`, or -1.
  int FindFunc(std::string_view name, const wasm::FuncSig& sig) const;
  const wasm::ModuleInfo& info() const { return *info_; }

  // One guarded call of function `func` (an index into info().funcs) with
  // (i32...) -> i32: clears the interrupt, draws on the budget, arms the
  // watchdog. A trap fails the sandbox. `what` names the call in failure
  // text ("the input", "init").
  Result<uint32_t> Call(int func, std::span<const uint64_t> args,
                        const char* what);
  // Copies `bytes` into guest memory through the alloc export.
  Result<GuestBytes> Pass(std::string_view bytes, const char* what);
  // Reads the output buffer (a bounds-checked copy). An output longer than
  // `max_bytes` fails the sandbox ("limit: the output of <what> is N bytes,
  // over the cap of M").
  Result<std::string> ReadOutput(const char* what, size_t max_bytes);

  // Marks the sandbox failed (the first failure wins), releases the
  // instance and returns a Status with `code` and the failure line.
  Status Fail(StatusCode code, std::string line);
  bool failed() const { return !failure_.empty(); }
  const std::string& failure() const { return failure_; }

  // Fuel used by every call so far (0 without fuel instrumentation).
  int64_t fuel_used() const { return fuel_used_; }
  bool fuel_metered() const { return fuel_metered_; }
  // Current size of linear memory; 0 once released.
  size_t memory_bytes() const;
  // The most recent log lines, oldest first.
  std::vector<LogLine> recent_log() const;
  // The text of the last panic line, or empty.
  const std::string& last_panic() const { return last_panic_; }
  const SandboxOptions& options() const { return options_; }
  const SandboxEnv& env() const { return env_; }

 private:
  Sandbox(SandboxOptions options, SandboxEnv env);
  static void Log(wasm::Instance& caller, void* user, const uint64_t* args,
                  uint64_t* results);
  void AddLog(int level, std::string_view text);
  std::string DescribeTrap(wasm::TrapKind kind, const Status& call_status,
                           const char* what) const;
  std::string MemoryNote() const;
  Status StoppedStatus() const;

  const SandboxOptions options_;
  const SandboxEnv env_;
  std::unique_ptr<wasm::Instance> instance_;
  const wasm::ModuleInfo* info_ = nullptr;  // the module's, outlives us
  std::shared_ptr<const wasm::CompiledModule> module_;
  int alloc_ = -1, output_ptr_ = -1, output_len_ = -1;
  bool fuel_metered_ = false;
  int64_t fuel_used_ = 0;
  int64_t budget_ = 0;       // the current budget's size
  int64_t budget_left_ = 0;  // what is left of it
  std::string budget_what_;
  uint32_t max_run_ms_ = 0;
  void* owner_ = nullptr;
  OwnerLogFn owner_log_ = nullptr;
  std::string failure_;
  std::deque<LogLine> lines_;
  std::string last_panic_;
  std::string panic_in_call_;  // the panic logged during the current call
};

}  // namespace tessera::guest

#endif  // TESSERA_GUEST_SANDBOX_H_
