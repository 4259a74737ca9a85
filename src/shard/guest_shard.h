// GuestShard drives one wasm::Instance through the tessera guest ABI v1
// (sdk/cpp/include/tessera/abi.h, docs/guest-abi.md): it passes arguments by
// asking the guest to allocate (tessera_alloc) and writing into its memory,
// reads results through tessera_output_ptr/len with bounds checks, and
// enforces the kind's limits on every call:
//   - fuel: set to kind.fuel_per_tick before each guest call; what the call
//     used is added to fuel_used() (deterministic: the same inputs give the
//     same count on every run and machine);
//   - wall clock: a Watchdog deadline of kind.max_run_ms around each call;
//   - CPU: Step() measures the thread CPU time of a whole tick (inputs +
//     tick + snapshot) against kind.tick_budget_ms;
//   - memory: the module was loaded with the kind's cap; a guest that hits it
//     fails its own allocation and panics or traps.
// Any trap, panic, limit or ABI violation (a bad pointer, an unknown return
// code) fails the shard: failed() turns true, failure() holds one line
// ("fuel exhausted: ...", "watchdog: ...", "tick budget: ...", "trap: ...",
// "panic: ...", "memory: ...", "abi: ..."), the instance is released and
// every later call reports the same failure without entering the guest.
//
// Threading: not thread-safe. One thread at a time (the owning worker) may
// call any method; it may hand the object to another thread with the usual
// happens-before (e.g. through a mutex).
#ifndef TESSERA_SHARD_GUEST_SHARD_H_
#define TESSERA_SHARD_GUEST_SHARD_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "common/clock.h"
#include "shard/shard_types.h"
#include "guest/watchdog.h"
#include "wasm/instance.h"

namespace tessera::wasm {
class CompiledModule;
}

namespace tessera::shard {

// Where a GuestShard runs. Pointers are not owned and must outlive it.
struct GuestEnv {
  // Arms max_run_ms around each call. Null: no wall-clock limit (fuel and
  // the tick budget still apply).
  guest::Watchdog* watchdog = nullptr;
  // Thread CPU time for the tick budget; null means ThreadCpuClock.
  const Clock* cpu_clock = nullptr;
  // Receives every guest log line as well (e.g. the server log); runs on
  // the calling thread inside the guest call. May be empty.
  wasm::LogSink forward_log;
  // How many recent log lines recent_log() keeps.
  size_t log_lines = 64;
};

struct LogLine {
  int level = 0;
  std::string text;  // truncated to kMaxLogLineBytes
};

// One queued input for Step().
struct PendingInput {
  std::string subscriber;
  uint64_t seq = 0;
  std::string bytes;  // encoded in the kind's codec
};

// Whether the shard is still running after a call.
struct TickOutcome {
  StopReason stop = StopReason::kNone;  // kNone, kFinished or kFailed
  std::string message;  // kFinished: the module's reason; kFailed: why
  bool running() const { return stop == StopReason::kNone; }
};

// The optional exports for interest management and replication
// (docs/guest-abi.md, "Interest and replication").
enum class Hook : uint8_t {
  kInterestConfig,     // () -> i32
  kEntities,           // () -> i32
  kInterestAreas,      // (ptr, len) -> i32
  kFilter,             // (ptr, len) -> i32
  kSnapshotVisible,    // (ptr, len) -> i32
  kReplicationConfig,  // () -> i32
  kReplicated,         // () -> i32
};
inline constexpr size_t kHookCount = 7;

// A hook's return code (abi::kOk or abi::kNoState) and output bytes.
struct HookOutput {
  int32_t code = 0;
  std::string bytes;
};

// Everything one tick produced.
struct StepResult {
  std::vector<InputResult> inputs;  // one per input, in order, seq echoed
  TickOutcome outcome;
  // The snapshot after the tick (also after the module finished); empty if
  // the shard failed.
  std::string snapshot;
  int64_t cpu_us = 0;  // thread CPU time of the whole step
};

class GuestShard {
 public:
  static constexpr size_t kMaxLogLineBytes = 4096;

  // Instantiates `module` and calls tessera_init(codec, shard_id, params).
  // Errors: kInvalidArgument with the module's own text verbatim when init
  // refused the params; kRefused when the module lacks a required export
  // or has one with the wrong signature; for a trap, panic or limit during
  // init, the failure line (see the file comment) with code kTrap,
  // kResourceExhausted or kDeadlineExceeded.
  static Result<std::unique_ptr<GuestShard>> Create(
      std::shared_ptr<const wasm::CompiledModule> module,
      const KindConfig& kind, std::string_view shard_id,
      std::string_view params, const GuestEnv& env = {});

  // As Create, but calls tessera_restore(codec, shard_id, params, state).
  // Errors: as Create; kFailedPrecondition with the module's text verbatim
  // when it refused the state, or when it exports no tessera_restore.
  static Result<std::unique_ptr<GuestShard>> Restore(
      std::shared_ptr<const wasm::CompiledModule> module,
      const KindConfig& kind, std::string_view shard_id,
      std::string_view params, std::string_view state,
      const GuestEnv& env = {});

  ~GuestShard();
  GuestShard(const GuestShard&) = delete;
  GuestShard& operator=(const GuestShard&) = delete;

  // Applies one input from `subscriber`. A refusal by the module is an
  // ordinary result (accepted=false, rejection=its text). If the call fails
  // the shard, the result is rejected with rejection "shard failed" and
  // failed() is true. Refused without a call once the shard has stopped.
  InputResult ApplyInput(std::string_view subscriber, std::string_view input);

  // Advances the simulation by dt_us. Returns running, finished (with the
  // module's reason) or failed. Once stopped, returns the same outcome again
  // without calling the guest.
  TickOutcome Tick(int64_t dt_us);

  // The module's snapshot in the kind's codec. Errors: the failure line if
  // the call failed the shard (or had failed before); kFailedPrecondition
  // if the module refused (the shard fails too: a snapshot is mandatory).
  Result<std::string> Snapshot();

  // The module's saved state. nullopt when the module exports no
  // tessera_save or returns kNoState. Errors: the failure line when the call
  // failed the shard; kFailedPrecondition with the module's text if it
  // refused (the shard keeps running).
  Result<std::optional<std::string>> Save();

  // One whole tick: each input in order, then Tick(dt_us), then Snapshot()
  // (unless `snapshot` is false), then `after` (the per-subscriber views,
  // which call hooks) while the shard runs, with the thread CPU time of all
  // of it checked against tick_budget_ms (over budget fails the shard:
  // "tick budget: tick used 130 ms of CPU, budget 100 ms"). Stops early
  // when a call fails the shard.
  StepResult Step(std::span<const PendingInput> inputs, int64_t dt_us,
                  const std::function<void()>& after = nullptr,
                  bool snapshot = true);

  // Whether the module exports `hook` (with the right signature).
  bool has_hook(Hook hook) const {
    return fn_.hooks[static_cast<size_t>(hook)] >= 0;
  }
  // Calls an optional export; hooks without arguments ignore `arg`. Returns
  // kOk or kNoState with the output. A kError return fails the shard
  // ("error: tessera_entities failed: <text>"), as does any other code.
  // Errors: the failure line when the call failed the shard (or had before);
  // kFailedPrecondition when the module does not export the hook.
  Result<HookOutput> CallHook(Hook hook, std::string_view arg = {});
  // Fails the shard with an "abi: ..." line (a hook's output the host could
  // not read) and returns that status.
  Status FailAbi(std::string message);

  // kNone while running; kFinished or kFailed after.
  const TickOutcome& outcome() const { return outcome_; }
  bool failed() const { return outcome_.stop == StopReason::kFailed; }
  bool finished() const { return outcome_.stop == StopReason::kFinished; }
  // The failure line, or empty.
  const std::string& failure() const;

  bool has_save() const { return fn_.save >= 0; }
  bool has_restore() const { return fn_.restore >= 0; }
  // Fuel used by every guest call so far, init included. 0 when the module
  // was loaded without fuel instrumentation.
  int64_t fuel_used() const { return fuel_used_; }
  // tessera_tick calls that returned (running or finished).
  uint64_t ticks() const { return ticks_; }
  // Current size of the guest's linear memory; 0 once the instance has been
  // released (after a failure).
  size_t memory_bytes() const;
  const KindConfig& kind() const { return kind_; }
  const std::string& shard_id() const { return shard_id_; }
  // The most recent guest log lines, oldest first.
  std::vector<LogLine> recent_log() const;
  // The text of the last level-4 (panic) log line, or empty.
  const std::string& last_panic() const;

 private:
  struct Exports {
    int alloc = -1, init = -1, restore = -1, apply_input = -1, tick = -1,
        snapshot = -1, save = -1, output_ptr = -1, output_len = -1;
    int hooks[kHookCount] = {-1, -1, -1, -1, -1, -1, -1};
  };
  // Log capture; heap-allocated so the instance's LogSink can point at it.
  struct LogState;
  // A guest-memory (ptr, len) argument pair.
  struct GuestBytes {
    uint32_t ptr = 0;
    uint32_t len = 0;
  };

  GuestShard(const KindConfig& kind, std::string_view shard_id,
             const GuestEnv& env);
  // Instantiates and resolves exports. Errors as Create.
  Status Instantiate(std::shared_ptr<const wasm::CompiledModule> module);
  Status ResolveExports();

  // One guarded call: clears the interrupt, sets fuel, arms the watchdog,
  // calls, accounts fuel. A trap fails the shard. `what` names the call in
  // messages ("the tick", "init", ...).
  Result<uint32_t> GuardedCall(int func, std::span<const uint64_t> args,
                               const char* what);
  // Copies `bytes` into guest memory through tessera_alloc.
  Result<GuestBytes> Pass(std::string_view bytes, const char* what);
  // Reads the output buffer (bounds-checked copy).
  Result<std::string> ReadOutput(const char* what);
  // Calls init or restore and interprets the code.
  Status RunStartCall(bool restore, std::string_view params,
                      std::string_view state);

  // Marks the shard failed (first failure wins), releases the instance and
  // returns a Status with `code` and the failure line.
  Status Fail(StatusCode code, std::string message);
  // The failure line for a trapped call.
  std::string DescribeTrap(wasm::TrapKind kind, const Status& call_status,
                           const char* what) const;
  // "memory: ..." prefix when the guest is close to its cap, else empty.
  std::string MemoryNote() const;
  Status StoppedStatus() const;
  // The fuel each guest call starts with: kind.fuel_per_tick.
  int64_t CallFuel() const;

  const KindConfig kind_;
  const std::string shard_id_;
  const GuestEnv env_;
  std::unique_ptr<LogState> log_;
  std::unique_ptr<wasm::Instance> instance_;
  Exports fn_;
  bool fuel_metered_ = false;
  int64_t fuel_used_ = 0;
  uint64_t ticks_ = 0;
  TickOutcome outcome_;
};

}  // namespace tessera::shard

#endif  // TESSERA_SHARD_GUEST_SHARD_H_
