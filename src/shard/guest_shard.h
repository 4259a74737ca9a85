// GuestShard drives one guest::Sandbox through the shard guest ABI v1
// (shard/shard_abi.h, tessera/abi.h, docs/guest-abi.md): what init, restore,
// inputs, the tick, the snapshot, saves and the interest and replication
// hooks mean. The sandbox passes arguments through tessera_alloc, reads
// results through tessera_output_ptr/len with bounds checks, and enforces
// the kind's limits:
//   - fuel: fuel_per_tick is one budget per tick, shared by the tick's
//     messages, inputs, tessera_tick, the snapshot and the hooks and talk
//     calls run in Step() (its `before` and `after`); a loop spread over many
//     inputs is stopped like one in the tick ("fuel exhausted: the tick used
//     more than N fuel"). There is no separate per-call cap: the watchdog
//     bounds one call's wall time. Init (with _initialize), restore and each
//     save get a budget of their own, as does each call made outside Step().
//     fuel_used() is deterministic: the same inputs give the same count
//     everywhere;
//   - wall clock: a Watchdog deadline of kind.max_run_ms around each call;
//   - CPU: Step() measures the thread CPU time of a whole tick (inputs +
//     tick + snapshot) against kind.tick_budget_ms;
//   - memory: the module was loaded with the kind's cap; a guest that hits it
//     fails its own allocation and panics or traps;
//   - size: a snapshot over kMaxSnapshotBytes, or any other output over
//     kMaxOutputBytes, fails the shard ("limit: ...").
// Any trap, panic, limit or ABI violation (a bad pointer, an unknown return
// code) fails the shard: failed() turns true, failure() holds one line
// ("fuel exhausted: ...", "watchdog: ...", "tick budget: ...", "trap: ...",
// "panic: ...", "memory: ...", "limit: ...", "abi: ..."), the instance is
// released and every later call reports the same failure without entering
// the guest. Text from the guest (rejections, errors, reasons) is cut to
// kMaxLogLineBytes as valid UTF-8.
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

#include "common/clock.h"
#include "common/status.h"
#include "guest/sandbox.h"
#include "shard/calls_json.h"
#include "shard/shard_calls.h"
#include "shard/shard_types.h"
#include "shard/talk_abi.h"
#include "shard/talk_types.h"

namespace tessera::wasm {
class CompiledModule;
}

namespace tessera::shard {

// Where a GuestShard runs (watchdog, CPU clock, log forwarding, recent
// lines kept); pointers are not owned and must outlive it.
using GuestEnv = guest::SandboxEnv;
using LogLine = guest::LogLine;

// One queued input for Step().
struct PendingInput {
  std::string subscriber;
  uint64_t seq = 0;
  std::string bytes;  // encoded in the kind's codec
  InputTiming timing;
  // With lag compensation and a view tick: the encoded Rewind
  // (docs/guest-abi.md, "Lag compensation") the host built before Step;
  // the input then goes to tessera_apply_input_at.
  std::optional<std::string> rewind;
};

// Whether the shard is still running after a call.
struct TickOutcome {
  StopReason stop = StopReason::kNone;  // kNone, kFinished or kFailed
  std::string message;  // kFinished: the module's reason; kFailed: why
  bool running() const { return stop == StopReason::kNone; }
};

// The optional exports for interest management and replication
// (docs/guest-abi.md, "Interest and replication") and lag compensation's
// config ("Lag compensation").
enum class Hook : uint8_t {
  kInterestConfig,     // () -> i32
  kEntities,           // () -> i32
  kInterestAreas,      // (ptr, len) -> i32
  kFilter,             // (ptr, len) -> i32
  kSnapshotVisible,    // (ptr, len) -> i32
  kReplicationConfig,  // () -> i32
  kReplicated,         // () -> i32
  kLagCompensation,    // () -> i32
};
inline constexpr size_t kHookCount = 8;

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
  // Fuel of the inputs, the tick and the snapshot (not of `before` or
  // `after`): what an input log records and a replay compares.
  int64_t fuel = 0;
};

class GuestShard {
 public:
  static constexpr size_t kMaxLogLineBytes = 4096;
  static constexpr size_t kMaxSnapshotBytes = size_t{4} << 20;
  static constexpr size_t kMaxOutputBytes = size_t{64} << 20;

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

  // Applies one input from `subscriber`: through tessera_apply_input, or
  // with `rewind` (an encoded Rewind, docs/guest-abi.md "Lag compensation")
  // through tessera_apply_input_at. A refusal by the module is an ordinary
  // result (accepted=false, rejection=its text). If the call fails the
  // shard (a rewind for a module without tessera_apply_input_at does), the
  // result is rejected with rejection "shard failed" and failed() is true.
  // Refused without a call once the shard has stopped.
  InputResult ApplyInput(std::string_view subscriber, std::string_view input,
                         std::optional<std::string_view> rewind = {});

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
  // `before` runs first, inside the same budget (the host delivers the
  // shard's messages there, through DeliverMessages).
  StepResult Step(std::span<const PendingInput> inputs, int64_t dt_us,
                  const std::function<void()>& after = nullptr,
                  bool snapshot = true,
                  const std::function<void()>& before = nullptr);

  // ---- Transfers and messages (docs/guest-abi.md "Transfers and
  // messages"; guest_talk.cc). Each is one guest call, drawing on the
  // Step's fuel budget when made inside Step (from `before` or `after`),
  // else on a budget of its own. Output is bounds-checked: a layout the
  // host cannot read fails the shard ("abi: tessera_outbox output: ..."),
  // as does an unknown return code. Once the shard has stopped each
  // returns the failure line (kFailedPrecondition) without a call.

  // tessera_transfer_out and tessera_transfer_in both exported (Create and
  // Restore refuse a module with only one of them).
  bool has_transfers() const {
    return fn_.transfer_out >= 0 && fn_.transfer_in >= 0;
  }
  bool has_transfer_requests() const { return fn_.transfer_requests >= 0; }
  bool has_groups() const { return fn_.groups >= 0; }
  bool has_outbox() const { return fn_.outbox >= 0; }
  // tessera_on_messages exported.
  bool has_messages() const { return fn_.on_messages >= 0; }

  using TransferRequestOut = shard::TransferRequestOut;
  using OutgoingMessage = shard::OutgoingMessage;

  // Takes `subscriber`'s entity out: kOk -> its state (over
  // abi::kMaxTransferStateBytes fails the shard, "limit: ..."); kNoState ->
  // nullopt (no entity for it here); kError -> kRefused with the module's
  // text (the shard keeps running). Errors: kFailedPrecondition when the
  // module has no transfer hooks; the failure line when the call failed
  // the shard.
  Result<std::optional<std::string>> TransferOut(std::string_view subscriber);
  // Gives `subscriber`'s state to the module: kOk -> Ok; kError -> kRefused
  // with the module's text. `peer_shard` is where it comes from (when
  // `returning`, the shard that refused it). Errors as TransferOut.
  Status TransferIn(std::string_view subscriber, std::string_view state,
                    std::string_view claims_json, bool returning,
                    std::string_view peer_shard);
  // The moves the module asks for (taken: the module forgets them). Empty
  // when it does not export tessera_transfer_requests or has none.
  Result<std::vector<TransferRequestOut>> TakeTransferRequests();
  // The module's current groups, as returned (the host applies the limits).
  // Empty when it does not export tessera_groups or has none.
  Result<std::vector<std::string>> Groups();
  // The messages the module queued (taken). Empty when it does not export
  // tessera_outbox or has none.
  Result<std::vector<OutgoingMessage>> TakeOutbox();
  // One batch of messages to tessera_on_messages, in order (the host keeps
  // it to abi::kMaxMessagesAppliedPerTick). An empty batch makes no call. A
  // kError return is a warning line to the env's forward_log (level
  // abi::kLogWarn, "tessera_on_messages refused: <text>"); the shard keeps
  // running and Ok is returned. Errors: kFailedPrecondition when the module
  // does not export tessera_on_messages; the failure line.
  Status DeliverMessages(
      std::span<const std::shared_ptr<const ShardMessage>> batch);

  // ---- Keyed calls and entity writes (docs/guest-abi.md "Keyed calls and
  // entity writes"; guest_calls.cc). Like the talk calls: one guest call
  // each, on the Step's budget inside Step, else on one of its own; once
  // the shard has stopped each returns the failure line
  // (kFailedPrecondition) without a call.

  // tessera_calls and tessera_on_call_result both exported (Create and
  // Restore refuse a module with only one of them).
  bool has_calls() const { return fn_.calls >= 0 && fn_.on_call_result >= 0; }
  bool has_writes() const { return fn_.writes >= 0; }
  // The calls the module waits for, read strictly (calls_json.h: bad
  // elements come back as refusal lines, never silently dropped). Empty
  // when it does not export them or returns kNoState. An output over
  // abi::kMaxCallsOutputBytes fails the shard ("limit: ..."), as does a
  // kError return ("error: tessera_calls failed: <text>"). Errors: the
  // failure line.
  Result<ParsedCalls> TakeCalls();
  // The same for tessera_writes (abi::kMaxWritesOutputBytes).
  Result<ParsedWrites> TakeWrites();
  // One result to tessera_on_call_result (calls_json.h,
  // CallResultArgument). A kError return is a warning line to the env's
  // forward_log ("tessera_on_call_result refused: <text>"); Ok is
  // returned. Errors: kFailedPrecondition when the module has no calls
  // hooks; the failure line.
  Status DeliverCallResult(const CallResult& result);

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
  bool has_apply_input_at() const { return fn_.apply_input_at >= 0; }
  bool has_restore() const { return fn_.restore >= 0; }
  // Fuel used by every guest call so far, init included. 0 when the module
  // was loaded without fuel instrumentation.
  int64_t fuel_used() const {
    return fuel_before_ + (sandbox_ ? sandbox_->fuel_used() : 0);
  }
  // tessera_tick calls that returned (running or finished).
  uint64_t ticks() const { return ticks_; }
  // A hot reload (shard_reload.cc): this instance takes over from one that
  // ran `ticks` ticks and used `fuel_used` fuel, so the shard's tick count
  // and fuel go on from there.
  void ContinueFrom(uint64_t ticks, int64_t fuel_used) {
    ticks_ = ticks;
    fuel_before_ = fuel_used;
  }
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
    int init = -1, restore = -1, apply_input = -1, apply_input_at = -1,
        tick = -1, snapshot = -1, save = -1;
    int transfer_out = -1, transfer_in = -1, transfer_requests = -1,
        groups = -1, outbox = -1, on_messages = -1;
    int calls = -1, on_call_result = -1, writes = -1;
    int hooks[kHookCount] = {-1, -1, -1, -1, -1, -1, -1, -1};
  };

  GuestShard(const KindConfig& kind, std::string_view shard_id,
             const GuestEnv& env);
  // Instantiates in a sandbox and resolves exports. Errors as Create.
  Status Instantiate(std::shared_ptr<const wasm::CompiledModule> module,
                     const char* what);
  void ResolveExports();
  // Refuses (kRefused) an incomplete set of transfer exports.
  Status CheckTalkExports() const;
  // Refuses (kRefused) tessera_calls without tessera_on_call_result or the
  // other way round.
  Status CheckCallExports() const;
  // Calls a () -> i32 talk export; nullopt for kNoState, else the output
  // (over max_bytes fails the shard). kError fails the shard ("error:
  // <name> failed: <text>").
  Result<std::optional<std::string>> CallListExport(
      int func, const char* name, size_t max_bytes = kMaxOutputBytes);
  // Checks that the shard still runs and `func` is exported.
  Status CheckTalkCall(int func, const char* name) const;
  // Passes `bytes` to the (ptr, len) -> i32 export `func` (checked with
  // CheckTalkCall by the caller): kOk is Ok, a refusal (kError) is logged as
  // a warning and is Ok too, any other code fails the shard.
  Status DeliverBytes(int func, const char* name, std::string_view bytes);

  // Opens a fuel budget of fuel_per_tick for `what` unless inside Step(),
  // whose one budget covers every call of the tick.
  void BeginCall(const char* what);
  // The sandbox's guarded call, buffers and output; a failure there fails
  // the shard (outcome_).
  Result<uint32_t> GuardedCall(int func, std::span<const uint64_t> args,
                               const char* what);
  Result<guest::GuestBytes> Pass(std::string_view bytes, const char* what);
  Result<std::string> ReadOutput(const char* what,
                                 size_t max_bytes = kMaxOutputBytes);
  // Guest text (a rejection, an error, a reason) as one safe line.
  Result<std::string> ReadText(const char* what);
  // Calls init or restore and interprets the code.
  Status RunStartCall(bool restore, std::string_view params,
                      std::string_view state);

  // Marks the shard failed (first failure wins), releases the instance and
  // returns a Status with `code` and the failure line.
  Status Fail(StatusCode code, std::string message);
  // Takes the sandbox's failure into outcome_ and returns `status`.
  Status Failed(Status status);
  Status StoppedStatus() const;
  int64_t TickFuel() const;

  const KindConfig kind_;
  const std::string shard_id_;
  const GuestEnv env_;
  std::unique_ptr<guest::Sandbox> sandbox_;
  Exports fn_;
  bool in_step_ = false;
  uint64_t ticks_ = 0;
  int64_t fuel_before_ = 0;  // see ContinueFrom
  TickOutcome outcome_;
};

}  // namespace tessera::shard

#endif  // TESSERA_SHARD_GUEST_SHARD_H_
