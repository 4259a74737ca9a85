#include "shard/guest_shard.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "common/text.h"
#include "shard/shard_abi.h"
#include "tessera/abi.h"
#include "wasm/compiled_module.h"
#include "wasm/module_info.h"

namespace tessera::shard {

GuestShard::GuestShard(const KindConfig& kind, std::string_view shard_id,
                       const GuestEnv& env)
    : kind_(kind), shard_id_(shard_id), env_(env) {}

GuestShard::~GuestShard() = default;

Result<std::unique_ptr<GuestShard>> GuestShard::Create(
    std::shared_ptr<const wasm::CompiledModule> module, const KindConfig& kind,
    std::string_view shard_id, std::string_view params, const GuestEnv& env) {
  std::unique_ptr<GuestShard> shard(new GuestShard(kind, shard_id, env));
  TESSERA_RETURN_IF_ERROR(shard->Instantiate(std::move(module), "init"));
  TESSERA_RETURN_IF_ERROR(shard->RunStartCall(false, params, {}));
  return shard;
}

Result<std::unique_ptr<GuestShard>> GuestShard::Restore(
    std::shared_ptr<const wasm::CompiledModule> module, const KindConfig& kind,
    std::string_view shard_id, std::string_view params, std::string_view state,
    const GuestEnv& env) {
  std::unique_ptr<GuestShard> shard(new GuestShard(kind, shard_id, env));
  TESSERA_RETURN_IF_ERROR(shard->Instantiate(std::move(module), "restore"));
  if (!shard->has_restore()) {
    return Status(StatusCode::kFailedPrecondition,
                  "the module exports no tessera_restore: it cannot be "
                  "restored from saved state");
  }
  TESSERA_RETURN_IF_ERROR(shard->RunStartCall(true, params, state));
  return shard;
}

Status GuestShard::Instantiate(
    std::shared_ptr<const wasm::CompiledModule> module, const char* what) {
  guest::SandboxOptions options = ShardSandboxOptions();
  options.max_run_ms = kind_.max_run_ms;
  options.memory_mb = kind_.memory_mb;
  options.max_log_line_bytes = kMaxLogLineBytes;
  auto sandbox =
      guest::Sandbox::Create(std::move(module), ShardHostFunctions(),
                             std::move(options), env_, TickFuel(), what);
  if (!sandbox.ok()) {
    outcome_ = TickOutcome{StopReason::kFailed, sandbox.status().message()};
    return sandbox.status();
  }
  sandbox_ = std::move(sandbox).value();
  ResolveExports();
  Status talk = CheckTalkExports();
  if (talk.ok()) talk = CheckCallExports();
  if (!talk.ok()) {
    outcome_ = TickOutcome{StopReason::kFailed, talk.message()};
    sandbox_.reset();
  }
  return talk;
}

// The loader has checked every export's signature against ShardAbiSpec();
// what is absent here is optional.
void GuestShard::ResolveExports() {
  const wasm::AbiSpec& spec = ShardAbiSpec();
  const auto find = [&](const char* name) {
    for (const wasm::ExportSpec& e : spec.exports) {
      if (e.name == name) return sandbox_->FindFunc(name, e.sig);
    }
    return -1;
  };
  fn_.init = find(abi::kExportInit);
  fn_.restore = find(abi::kExportRestore);
  fn_.apply_input = find(abi::kExportApplyInput);
  fn_.apply_input_at = find(abi::kExportApplyInputAt);
  fn_.tick = find(abi::kExportTick);
  fn_.snapshot = find(abi::kExportSnapshot);
  fn_.save = find(abi::kExportSave);
  fn_.transfer_out = find(abi::kExportTransferOut);
  fn_.transfer_in = find(abi::kExportTransferIn);
  fn_.transfer_requests = find(abi::kExportTransferRequests);
  fn_.groups = find(abi::kExportGroups);
  fn_.outbox = find(abi::kExportOutbox);
  fn_.on_messages = find(abi::kExportOnMessages);
  fn_.calls = find(abi::kExportCalls);
  fn_.on_call_result = find(abi::kExportOnCallResult);
  fn_.writes = find(abi::kExportWrites);
  const char* hooks[kHookCount] = {
      abi::kExportInterestConfig,  abi::kExportEntities,
      abi::kExportInterestAreas,   abi::kExportFilter,
      abi::kExportSnapshotVisible, abi::kExportReplicationConfig,
      abi::kExportReplicated,      abi::kExportLagCompensation,
  };
  for (size_t k = 0; k < kHookCount; ++k) fn_.hooks[k] = find(hooks[k]);
}

int64_t GuestShard::TickFuel() const {
  return static_cast<int64_t>(std::min<uint64_t>(
      kind_.fuel_per_tick, std::numeric_limits<int64_t>::max()));
}

void GuestShard::BeginCall(const char* what) {
  if (!in_step_ && sandbox_) sandbox_->StartBudget(TickFuel(), what);
}

Status GuestShard::Failed(Status status) {
  if (sandbox_ && sandbox_->failed() && outcome_.stop != StopReason::kFailed) {
    outcome_ = TickOutcome{StopReason::kFailed, sandbox_->failure()};
  }
  return status;
}

Result<uint32_t> GuestShard::GuardedCall(int func,
                                         std::span<const uint64_t> args,
                                         const char* what) {
  if (func < 0) {
    return Fail(StatusCode::kFailedPrecondition,
                std::string("abi: the module exports no function for ") + what);
  }
  Result<uint32_t> r = sandbox_->Call(func, args, what);
  if (!r.ok()) return Failed(r.status());
  return r;
}

Result<guest::GuestBytes> GuestShard::Pass(std::string_view bytes,
                                           const char* what) {
  Result<guest::GuestBytes> r = sandbox_->Pass(bytes, what);
  if (!r.ok()) return Failed(r.status());
  return r;
}

Result<std::string> GuestShard::ReadOutput(const char* what, size_t max_bytes) {
  Result<std::string> r = sandbox_->ReadOutput(what, max_bytes);
  if (!r.ok()) return Failed(r.status());
  return r;
}

Result<std::string> GuestShard::ReadText(const char* what) {
  Result<std::string> r = ReadOutput(what);
  if (!r.ok()) return r;
  return SafeUtf8(*r, kMaxLogLineBytes);
}

Status GuestShard::Fail(StatusCode code, std::string message) {
  if (outcome_.stop != StopReason::kFailed) {
    outcome_ = TickOutcome{StopReason::kFailed, message};
  }
  if (sandbox_) sandbox_->Fail(code, std::move(message));
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

Status GuestShard::RunStartCall(bool restore, std::string_view params,
                                std::string_view state) {
  const char* what = restore ? "restore" : "init";
  Result<guest::GuestBytes> id = Pass(shard_id_, what);
  if (!id.ok()) return id.status();
  Result<guest::GuestBytes> p = Pass(params, what);
  if (!p.ok()) return p.status();
  Result<guest::GuestBytes> st = guest::GuestBytes{};
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
    Result<std::string> text = ReadText(what);
    if (!text.ok()) return text.status();
    Fail(StatusCode::kFailedPrecondition, *text);
    return Status(restore ? StatusCode::kFailedPrecondition
                          : StatusCode::kInvalidArgument,
                  *text);
  }
  return Fail(StatusCode::kFailedPrecondition,
              std::string("abi: tessera_") + what + " returned unknown code " +
                  std::to_string(*code));
}

InputResult GuestShard::ApplyInput(std::string_view subscriber,
                                   std::string_view input,
                                   std::optional<std::string_view> rewind) {
  InputResult result;
  if (!outcome_.running()) {
    result.rejection = failed() ? "shard failed" : "shard finished";
    return result;
  }
  const char* name = rewind ? abi::kExportApplyInputAt : abi::kExportApplyInput;
  BeginCall("the input");
  result.rejection = "shard failed";
  Result<guest::GuestBytes> sid = Pass(subscriber, "the input");
  if (!sid.ok()) return result;
  Result<guest::GuestBytes> in = Pass(input, "the input");
  if (!in.ok()) return result;
  Result<uint32_t> code = 0u;
  if (rewind) {
    Result<guest::GuestBytes> at = Pass(*rewind, "the input");
    if (!at.ok()) return result;
    const uint64_t args[] = {sid->ptr, sid->len, in->ptr,
                             in->len,  at->ptr,  at->len};
    code = GuardedCall(fn_.apply_input_at, args, "the input");
  } else {
    const uint64_t args[] = {sid->ptr, sid->len, in->ptr, in->len};
    code = GuardedCall(fn_.apply_input, args, "the input");
  }
  if (!code.ok()) return result;
  if (*code == abi::kOk) {
    result.accepted = true;
    result.rejection.clear();
    return result;
  }
  if (*code == abi::kError) {
    Result<std::string> text = ReadText(name);
    if (!text.ok()) return result;
    result.rejection = std::move(text).value();
    return result;
  }
  Fail(StatusCode::kFailedPrecondition, std::string("abi: ") + name +
                                            " returned unknown code " +
                                            std::to_string(*code));
  return result;
}

TickOutcome GuestShard::Tick(int64_t dt_us) {
  if (!outcome_.running()) return outcome_;
  BeginCall("the tick");
  const uint64_t args[] = {static_cast<uint64_t>(dt_us)};
  Result<uint32_t> code = GuardedCall(fn_.tick, args, "the tick");
  if (!code.ok()) return outcome_;
  switch (*code) {
    case abi::kOk:
      ++ticks_;
      break;
    case abi::kFinished: {
      ++ticks_;
      Result<std::string> reason = ReadText("tessera_tick");
      if (!reason.ok()) break;
      outcome_ = TickOutcome{StopReason::kFinished, std::move(reason).value()};
      break;
    }
    case abi::kError: {
      Result<std::string> text = ReadText("tessera_tick");
      if (!text.ok()) break;
      Fail(StatusCode::kFailedPrecondition, "error: the tick failed: " + *text);
      break;
    }
    default:
      Fail(StatusCode::kFailedPrecondition,
           "abi: tessera_tick returned unknown code " + std::to_string(*code));
  }
  return outcome_;
}

Result<std::string> GuestShard::Snapshot() {
  if (failed() || !sandbox_) return StoppedStatus();
  BeginCall("the snapshot");
  Result<uint32_t> code = GuardedCall(fn_.snapshot, {}, "the snapshot");
  if (!code.ok()) return code.status();
  if (*code == abi::kOk) {
    return ReadOutput("tessera_snapshot", kMaxSnapshotBytes);
  }
  if (*code == abi::kError) {
    Result<std::string> text = ReadText("tessera_snapshot");
    if (!text.ok()) return text.status();
    return Fail(StatusCode::kFailedPrecondition,
                "error: the snapshot failed: " + *text);
  }
  return Fail(
      StatusCode::kFailedPrecondition,
      "abi: tessera_snapshot returned unknown code " + std::to_string(*code));
}

Result<std::optional<std::string>> GuestShard::Save() {
  if (failed() || !sandbox_) return StoppedStatus();
  if (!has_save()) return std::optional<std::string>();
  BeginCall("save");
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
      Result<std::string> text = ReadText("tessera_save");
      if (!text.ok()) return text.status();
      return Status(StatusCode::kFailedPrecondition, *text);
    }
    default:
      return Fail(
          StatusCode::kFailedPrecondition,
          "abi: tessera_save returned unknown code " + std::to_string(*code));
  }
}

StepResult GuestShard::Step(std::span<const PendingInput> inputs, int64_t dt_us,
                            const std::function<void()>& after, bool snapshot,
                            const std::function<void()>& before) {
  StepResult step;
  if (!outcome_.running()) {
    step.outcome = outcome_;
    return step;
  }
  const Clock* cpu = env_.cpu_clock ? env_.cpu_clock : ThreadCpuClock::Get();
  const int64_t cpu_start = cpu->NowUs();
  // One fuel budget for the whole tick: messages, inputs, tick, snapshot,
  // hooks.
  sandbox_->StartBudget(TickFuel(), "the tick");
  in_step_ = true;
  if (before) before();
  const int64_t fuel_start = fuel_used();
  step.inputs.reserve(inputs.size());
  for (const PendingInput& in : inputs) {
    if (!outcome_.running()) break;
    InputResult r = in.rewind ? ApplyInput(in.subscriber, in.bytes, *in.rewind)
                              : ApplyInput(in.subscriber, in.bytes);
    r.seq = in.seq;
    r.subscriber = in.subscriber;
    step.inputs.push_back(std::move(r));
  }
  Tick(dt_us);
  if (!failed() && snapshot) {
    Result<std::string> bytes = Snapshot();
    if (bytes.ok()) step.snapshot = std::move(bytes).value();
  }
  step.fuel = fuel_used() - fuel_start;
  if (!failed() && after) after();
  in_step_ = false;
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
  return sandbox_ ? sandbox_->memory_bytes() : 0;
}

std::vector<LogLine> GuestShard::recent_log() const {
  return sandbox_ ? sandbox_->recent_log() : std::vector<LogLine>();
}

const std::string& GuestShard::last_panic() const {
  static const std::string kEmpty;
  return sandbox_ ? sandbox_->last_panic() : kEmpty;
}

}  // namespace tessera::shard
