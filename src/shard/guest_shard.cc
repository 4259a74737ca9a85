#include "shard/guest_shard.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <limits>
#include <utility>

#include "tessera/abi.h"
#include "wasm/module_info.h"

namespace tessera::shard {
namespace {

constexpr uint64_t kMiB = 1024 * 1024;

// Argument layouts of guest ABI v1 (docs/guest-abi.md), in one place:
//   tessera_alloc(len) -> ptr
//   tessera_init(codec, id_ptr, id_len, params_ptr, params_len) -> code
//   tessera_restore(codec, id_ptr, id_len, params_ptr, params_len,
//                   state_ptr, state_len) -> code
//   tessera_apply_input(sid_ptr, sid_len, input_ptr, input_len) -> code
//   tessera_tick(dt_us: i64) -> code
//   tessera_snapshot() / tessera_save() -> code
//   tessera_output_ptr() / tessera_output_len() -> i32
struct ExportSpec {
  const char* name;
  int i32_params;  // -1: the single i64 of tessera_tick
  bool required;
};

wasm::FuncSig SigOf(int i32_params) {
  wasm::FuncSig sig;
  if (i32_params < 0) {
    sig.params = {wasm::ValType::kI64};
  } else {
    sig.params.assign(static_cast<size_t>(i32_params), wasm::ValType::kI32);
  }
  sig.results = {wasm::ValType::kI32};
  return sig;
}

const char* TrapText(wasm::TrapKind kind) {
  switch (kind) {
    case wasm::TrapKind::kOutOfBounds:
      return "out of bounds memory access";
    case wasm::TrapKind::kIntOverflow:
      return "integer overflow";
    case wasm::TrapKind::kDivByZero:
      return "integer divide by zero";
    case wasm::TrapKind::kInvalidConversion:
      return "invalid conversion to integer";
    case wasm::TrapKind::kUnreachable:
      return "unreachable executed";
    case wasm::TrapKind::kIndirectCall:
      return "indirect call to a null or mismatched function";
    case wasm::TrapKind::kStackExhausted:
      return "call stack exhausted";
    default:
      return nullptr;
  }
}

std::string Truncate(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  return std::string(text.substr(0, max_bytes)) + "...";
}

std::string FormatMiB(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f", static_cast<double>(bytes) / kMiB);
  return buf;
}

}  // namespace

struct GuestShard::LogState {
  size_t capacity = 64;
  wasm::LogSink forward;
  std::deque<LogLine> lines;
  std::string last_panic;
  // The panic text logged during the current guest call, if any.
  std::string panic_in_call;

  void Add(int level, std::string_view text) {
    if (forward) forward(level, text);
    std::string line = Truncate(text, kMaxLogLineBytes);
    if (level >= abi::kLogPanic) {
      last_panic = line;
      panic_in_call = line;
    }
    if (capacity == 0) return;
    if (lines.size() >= capacity) lines.pop_front();
    lines.push_back(LogLine{level, std::move(line)});
  }
};

GuestShard::GuestShard(const KindConfig& kind, std::string_view shard_id,
                       const GuestEnv& env)
    : kind_(kind), shard_id_(shard_id), env_(env) {
  log_ = std::make_unique<LogState>();
  log_->capacity = env_.log_lines;
  log_->forward = env_.forward_log;
}

GuestShard::~GuestShard() = default;

Result<std::unique_ptr<GuestShard>> GuestShard::Create(
    std::shared_ptr<const wasm::CompiledModule> module, const KindConfig& kind,
    std::string_view shard_id, std::string_view params, const GuestEnv& env) {
  std::unique_ptr<GuestShard> shard(new GuestShard(kind, shard_id, env));
  TESSERA_RETURN_IF_ERROR(shard->Instantiate(std::move(module)));
  TESSERA_RETURN_IF_ERROR(shard->RunStartCall(false, params, {}));
  return shard;
}

Result<std::unique_ptr<GuestShard>> GuestShard::Restore(
    std::shared_ptr<const wasm::CompiledModule> module, const KindConfig& kind,
    std::string_view shard_id, std::string_view params, std::string_view state,
    const GuestEnv& env) {
  std::unique_ptr<GuestShard> shard(new GuestShard(kind, shard_id, env));
  TESSERA_RETURN_IF_ERROR(shard->Instantiate(std::move(module)));
  if (!shard->has_restore()) {
    return Status(StatusCode::kFailedPrecondition,
                  "the module exports no tessera_restore: it cannot be "
                  "restored from saved state");
  }
  TESSERA_RETURN_IF_ERROR(shard->RunStartCall(true, params, state));
  return shard;
}

Status GuestShard::Instantiate(
    std::shared_ptr<const wasm::CompiledModule> module) {
  LogState* log = log_.get();
  // `_initialize` (run by Create) is bounded by one call's fuel. It runs
  // before the instance exists for the watchdog to arm against.
  const int64_t fuel = CallFuel();
  auto instance = wasm::Instance::Create(
      std::move(module),
      [log](int level, std::string_view text) { log->Add(level, text); }, fuel);
  if (!instance.ok()) {
    const Status& st = instance.status();
    std::string line;
    if (!log_->panic_in_call.empty()) {
      line = "panic: " + log_->panic_in_call;
    } else if (st.code() == StatusCode::kResourceExhausted) {
      line = "memory: " + st.message();
    } else if (st.code() == StatusCode::kTrap) {
      line = "trap: " + st.message() + " while instantiating";
    } else {
      line = st.message();
    }
    outcome_ = TickOutcome{StopReason::kFailed, line};
    return Status(st.code(), line);
  }
  instance_ = std::move(instance).value();
  // Without fuel instrumentation SetFuel/fuel() are no-ops returning 0.
  const int64_t left = instance_->fuel();
  instance_->SetFuel(12345);
  fuel_metered_ = instance_->fuel() == 12345;
  if (fuel_metered_) fuel_used_ += fuel - left;
  return ResolveExports();
}

Status GuestShard::ResolveExports() {
  const wasm::ModuleInfo& info = instance_->info();
  struct Slot {
    ExportSpec spec;
    int* index;
  };
  const Slot slots[] = {
      {{abi::kExportAlloc, 1, true}, &fn_.alloc},
      {{abi::kExportInit, 5, true}, &fn_.init},
      {{abi::kExportRestore, 7, false}, &fn_.restore},
      {{abi::kExportApplyInput, 4, true}, &fn_.apply_input},
      {{abi::kExportTick, -1, true}, &fn_.tick},
      {{abi::kExportSnapshot, 0, true}, &fn_.snapshot},
      {{abi::kExportSave, 0, false}, &fn_.save},
      {{abi::kExportOutputPtr, 0, true}, &fn_.output_ptr},
      {{abi::kExportOutputLen, 0, true}, &fn_.output_len},
      {{abi::kExportInterestConfig, 0, false}, &fn_.hooks[0]},
      {{abi::kExportEntities, 0, false}, &fn_.hooks[1]},
      {{abi::kExportInterestAreas, 2, false}, &fn_.hooks[2]},
      {{abi::kExportFilter, 2, false}, &fn_.hooks[3]},
      {{abi::kExportSnapshotVisible, 2, false}, &fn_.hooks[4]},
      {{abi::kExportReplicationConfig, 0, false}, &fn_.hooks[5]},
      {{abi::kExportReplicated, 0, false}, &fn_.hooks[6]},
  };
  for (const Slot& slot : slots) {
    int index = info.FindFunc(slot.spec.name);
    if (index < 0) {
      if (!slot.spec.required) continue;
      return Fail(StatusCode::kRefused,
                  std::string("abi: the module exports no ") + slot.spec.name +
                      " (required by guest ABI v1)");
    }
    wasm::FuncSig want = SigOf(slot.spec.i32_params);
    const wasm::FuncSig& got = info.funcs[static_cast<size_t>(index)].sig;
    if (!(got == want)) {
      return Fail(StatusCode::kRefused,
                  std::string("abi: export ") + slot.spec.name +
                      " has signature " + wasm::SigToString(got) +
                      ", guest ABI v1 needs " + wasm::SigToString(want));
    }
    *slot.index = index;
  }
  return Status::Ok();
}

Result<uint32_t> GuestShard::GuardedCall(int func,
                                         std::span<const uint64_t> args,
                                         const char* what) {
  if (!instance_) return StoppedStatus();
  wasm::Instance& inst = *instance_;
  const int64_t fuel = CallFuel();
  inst.ClearInterrupt();
  if (fuel_metered_) inst.SetFuel(fuel);
  log_->panic_in_call.clear();

  guest::Watchdog::Token token = 0;
  if (env_.watchdog != nullptr) {
    int64_t deadline = env_.watchdog->clock()->NowUs() +
                       static_cast<int64_t>(kind_.max_run_ms) * 1000;
    token = env_.watchdog->Arm(&inst, deadline);
  }
  uint64_t result = 0;
  Status st = inst.Call(func, args, std::span<uint64_t>(&result, 1));
  if (env_.watchdog != nullptr) env_.watchdog->Disarm(token);
  if (fuel_metered_) fuel_used_ += fuel - inst.fuel();

  if (!st.ok()) {
    wasm::TrapKind kind = inst.last_trap();
    if (kind == wasm::TrapKind::kNone) {
      return Fail(StatusCode::kInternal, std::string("host: calling ") + what +
                                             " failed: " + st.ToString());
    }
    StatusCode code = StatusCode::kTrap;
    if (kind == wasm::TrapKind::kFuelExhausted ||
        kind == wasm::TrapKind::kOutOfMemory) {
      code = StatusCode::kResourceExhausted;
    } else if (kind == wasm::TrapKind::kInterrupted) {
      code = StatusCode::kDeadlineExceeded;
    }
    return Fail(code, DescribeTrap(kind, st, what));
  }
  return static_cast<uint32_t>(result);
}

std::string GuestShard::DescribeTrap(wasm::TrapKind kind,
                                     const Status& call_status,
                                     const char* what) const {
  switch (kind) {
    case wasm::TrapKind::kFuelExhausted:
      return "fuel exhausted: " + std::string(what) + " used more than " +
             std::to_string(kind_.fuel_per_tick) + " fuel";
    case wasm::TrapKind::kInterrupted:
      return "watchdog: call ran longer than maxRunMs " +
             std::to_string(kind_.max_run_ms) + " ms (" + what + ")";
    case wasm::TrapKind::kOutOfMemory:
      return "memory: " + call_status.message();
    default:
      break;
  }
  std::string line;
  if (!log_->panic_in_call.empty()) {
    line = "panic: " + log_->panic_in_call;
  } else if (const char* text = TrapText(kind)) {
    line = std::string("trap: ") + text + " in " + what;
  } else {
    line = "trap: " + call_status.message() + " in " + what;
  }
  return MemoryNote() + line;
}

std::string GuestShard::MemoryNote() const {
  if (!instance_ || instance_->failed_grows() == 0) return "";
  return "memory: the module asked to grow its memory past memoryMb " +
         std::to_string(kind_.memory_mb) + " (it had " +
         FormatMiB(instance_->memory().size()) + " MiB); ";
}

int64_t GuestShard::CallFuel() const {
  return static_cast<int64_t>(std::min<uint64_t>(
      kind_.fuel_per_tick, std::numeric_limits<int64_t>::max()));
}

Status GuestShard::Fail(StatusCode code, std::string message) {
  if (outcome_.stop != StopReason::kFailed) {
    outcome_ = TickOutcome{StopReason::kFailed, std::move(message)};
  }
  // A trapped instance is dead; release its memory now.
  instance_.reset();
  return Status(code, outcome_.message);
}

Status GuestShard::StoppedStatus() const {
  if (failed()) {
    return Status(StatusCode::kFailedPrecondition, outcome_.message);
  }
  return Status(StatusCode::kFailedPrecondition, "the shard is not running");
}

const std::string& GuestShard::failure() const {
  static const std::string kEmpty;
  return failed() ? outcome_.message : kEmpty;
}

Result<GuestShard::GuestBytes> GuestShard::Pass(std::string_view bytes,
                                                const char* what) {
  if (bytes.empty()) return GuestBytes{};
  if (bytes.size() > std::numeric_limits<uint32_t>::max()) {
    return Status(StatusCode::kInvalidArgument,
                  std::string("argument of ") + what + " is too large");
  }
  const uint64_t len = bytes.size();
  const uint64_t args[] = {len};
  Result<uint32_t> ptr = GuardedCall(fn_.alloc, args, "tessera_alloc");
  if (!ptr.ok()) return ptr.status();
  if (*ptr == 0) {
    return Fail(StatusCode::kResourceExhausted,
                MemoryNote() + "memory: tessera_alloc(" + std::to_string(len) +
                    ") returned null (for " + what + ")");
  }
  Status st = instance_->Write(
      *ptr, std::span<const uint8_t>(
                reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  if (!st.ok()) {
    return Fail(StatusCode::kFailedPrecondition,
                "abi: tessera_alloc(" + std::to_string(len) + ") returned " +
                    std::to_string(*ptr) + ", outside guest memory of " +
                    std::to_string(instance_->memory().size()) + " bytes");
  }
  return GuestBytes{*ptr, static_cast<uint32_t>(len)};
}

Result<std::string> GuestShard::ReadOutput(const char* what) {
  Result<uint32_t> ptr = GuardedCall(fn_.output_ptr, {}, "tessera_output_ptr");
  if (!ptr.ok()) return ptr.status();
  Result<uint32_t> len = GuardedCall(fn_.output_len, {}, "tessera_output_len");
  if (!len.ok()) return len.status();
  Result<std::string_view> bytes = instance_->Read(*ptr, *len);
  if (!bytes.ok()) {
    return Fail(StatusCode::kFailedPrecondition,
                std::string("abi: output of ") + what + " at (" +
                    std::to_string(*ptr) + ", " + std::to_string(*len) +
                    ") lies outside guest memory of " +
                    std::to_string(instance_->memory().size()) + " bytes");
  }
  return std::string(*bytes);
}

Status GuestShard::RunStartCall(bool restore, std::string_view params,
                                std::string_view state) {
  const char* what = restore ? "restore" : "init";
  Result<GuestBytes> id = Pass(shard_id_, what);
  if (!id.ok()) return id.status();
  Result<GuestBytes> p = Pass(params, what);
  if (!p.ok()) return p.status();
  Result<GuestBytes> st = GuestBytes{};
  if (restore) st = Pass(state, what);
  if (!st.ok()) return st.status();
  const uint64_t codec =
      kind_.codec == Codec::kJson ? abi::kCodecJson : abi::kCodecMsgpack;
  // init takes the first five, restore all seven.
  const uint64_t args[] = {codec,  id->ptr, id->len, p->ptr,
                           p->len, st->ptr, st->len};
  Result<uint32_t> code =
      GuardedCall(restore ? fn_.restore : fn_.init,
                  std::span<const uint64_t>(args, restore ? 7 : 5), what);
  if (!code.ok()) return code.status();
  if (*code == abi::kOk) return Status::Ok();
  if (*code == abi::kError) {
    Result<std::string> text = ReadOutput(what);
    if (!text.ok()) return text.status();
    std::string message = Truncate(*text, kMaxLogLineBytes);
    outcome_ = TickOutcome{StopReason::kFailed, message};
    instance_.reset();
    return Status(restore ? StatusCode::kFailedPrecondition
                          : StatusCode::kInvalidArgument,
                  message);
  }
  return Fail(StatusCode::kFailedPrecondition,
              std::string("abi: tessera_") + what + " returned unknown code " +
                  std::to_string(*code));
}

InputResult GuestShard::ApplyInput(std::string_view subscriber,
                                   std::string_view input) {
  InputResult result;
  if (!outcome_.running()) {
    result.rejection = failed() ? "shard failed" : "shard finished";
    return result;
  }
  result.rejection = "shard failed";
  Result<GuestBytes> sid = Pass(subscriber, "the input");
  if (!sid.ok()) return result;
  Result<GuestBytes> in = Pass(input, "the input");
  if (!in.ok()) return result;
  const uint64_t args[] = {sid->ptr, sid->len, in->ptr, in->len};
  Result<uint32_t> code = GuardedCall(fn_.apply_input, args, "the input");
  if (!code.ok()) return result;
  if (*code == abi::kOk) {
    result.accepted = true;
    result.rejection.clear();
    return result;
  }
  if (*code == abi::kError) {
    Result<std::string> text = ReadOutput("tessera_apply_input");
    if (!text.ok()) return result;
    result.rejection = Truncate(*text, kMaxLogLineBytes);
    return result;
  }
  Fail(StatusCode::kFailedPrecondition,
       "abi: tessera_apply_input returned unknown code " +
           std::to_string(*code));
  return result;
}

TickOutcome GuestShard::Tick(int64_t dt_us) {
  if (!outcome_.running()) return outcome_;
  const uint64_t args[] = {static_cast<uint64_t>(dt_us)};
  Result<uint32_t> code = GuardedCall(fn_.tick, args, "the tick");
  if (!code.ok()) return outcome_;
  switch (*code) {
    case abi::kOk:
      ++ticks_;
      break;
    case abi::kFinished: {
      ++ticks_;
      Result<std::string> reason = ReadOutput("tessera_tick");
      if (!reason.ok()) break;
      outcome_ = TickOutcome{StopReason::kFinished,
                             Truncate(*reason, kMaxLogLineBytes)};
      break;
    }
    case abi::kError: {
      Result<std::string> text = ReadOutput("tessera_tick");
      if (!text.ok()) break;
      Fail(StatusCode::kFailedPrecondition,
           "error: the tick failed: " + Truncate(*text, kMaxLogLineBytes));
      break;
    }
    default:
      Fail(StatusCode::kFailedPrecondition,
           "abi: tessera_tick returned unknown code " + std::to_string(*code));
  }
  return outcome_;
}

Result<std::string> GuestShard::Snapshot() {
  if (!instance_) return StoppedStatus();
  Result<uint32_t> code = GuardedCall(fn_.snapshot, {}, "the snapshot");
  if (!code.ok()) return code.status();
  if (*code == abi::kOk) return ReadOutput("tessera_snapshot");
  if (*code == abi::kError) {
    Result<std::string> text = ReadOutput("tessera_snapshot");
    if (!text.ok()) return text.status();
    return Fail(
        StatusCode::kFailedPrecondition,
        "error: the snapshot failed: " + Truncate(*text, kMaxLogLineBytes));
  }
  return Fail(
      StatusCode::kFailedPrecondition,
      "abi: tessera_snapshot returned unknown code " + std::to_string(*code));
}

Result<std::optional<std::string>> GuestShard::Save() {
  if (!instance_) return StoppedStatus();
  if (!has_save()) return std::optional<std::string>();
  Result<uint32_t> code = GuardedCall(fn_.save, {}, "save");
  if (!code.ok()) return code.status();
  switch (*code) {
    case abi::kOk: {
      Result<std::string> state = ReadOutput("tessera_save");
      if (!state.ok()) return state.status();
      return std::optional<std::string>(std::move(state).value());
    }
    case abi::kNoState:
      return std::optional<std::string>();
    case abi::kError: {
      Result<std::string> text = ReadOutput("tessera_save");
      if (!text.ok()) return text.status();
      return Status(StatusCode::kFailedPrecondition,
                    Truncate(*text, kMaxLogLineBytes));
    }
    default:
      return Fail(
          StatusCode::kFailedPrecondition,
          "abi: tessera_save returned unknown code " + std::to_string(*code));
  }
}

StepResult GuestShard::Step(std::span<const PendingInput> inputs, int64_t dt_us,
                            const std::function<void()>& after, bool snapshot) {
  StepResult step;
  if (!outcome_.running()) {
    step.outcome = outcome_;
    return step;
  }
  const Clock* cpu = env_.cpu_clock ? env_.cpu_clock : ThreadCpuClock::Get();
  const int64_t cpu_start = cpu->NowUs();
  step.inputs.reserve(inputs.size());
  for (const PendingInput& in : inputs) {
    if (!outcome_.running()) break;
    InputResult r = ApplyInput(in.subscriber, in.bytes);
    r.seq = in.seq;
    r.subscriber = in.subscriber;
    step.inputs.push_back(std::move(r));
  }
  Tick(dt_us);
  if (!failed() && snapshot) {
    Result<std::string> bytes = Snapshot();
    if (bytes.ok()) step.snapshot = std::move(bytes).value();
  }
  if (!failed() && after) after();
  step.cpu_us = cpu->NowUs() - cpu_start;
  const int64_t budget_us = static_cast<int64_t>(kind_.tick_budget_ms) * 1000;
  if (!failed() && budget_us > 0 && step.cpu_us > budget_us) {
    Fail(StatusCode::kDeadlineExceeded,
         "tick budget: tick used " +
             std::to_string((step.cpu_us + 999) / 1000) +
             " ms of CPU, budget " + std::to_string(kind_.tick_budget_ms) +
             " ms");
  }
  if (failed()) step.snapshot.clear();
  step.outcome = outcome_;
  return step;
}

size_t GuestShard::memory_bytes() const {
  return instance_ ? instance_->memory().size() : 0;
}

std::vector<LogLine> GuestShard::recent_log() const {
  return std::vector<LogLine>(log_->lines.begin(), log_->lines.end());
}

const std::string& GuestShard::last_panic() const { return log_->last_panic; }

}  // namespace tessera::shard
