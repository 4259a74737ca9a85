#include "compute/module_instance.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "common/text.h"
#include "guest/host_functions.h"
#include "tessera/compute_abi.h"
#include "wasm/compiled_module.h"
#include "wasm/instance.h"

namespace tessera::compute {
namespace {

namespace abi = compute_abi;
using V = wasm::ValType;
using wasm::FuncSig;

constexpr int64_t kDefaultInstantiateFuel = 10'000'000;

FuncSig I32Result(int i32_params) {
  FuncSig sig;
  sig.params.assign(static_cast<size_t>(i32_params), V::kI32);
  sig.results = {V::kI32};
  return sig;
}

const FuncSig& TickSig() {
  static const auto* sig = new FuncSig(I32Result(1));
  return *sig;
}
const FuncSig& BytesSig() {
  static const auto* sig = new FuncSig(I32Result(2));
  return *sig;
}
const FuncSig& NoArgsSig() {
  static const auto* sig = new FuncSig(I32Result(0));
  return *sig;
}

const char* CodeName(int32_t code) {
  switch (code) {
    case abi::kErrNoState:
      return abi::kCodeNoState;
    case abi::kErrTooLarge:
      return abi::kCodeTooLarge;
    case abi::kErrInvalid:
      return abi::kCodeInvalid;
    case abi::kErrStale:
      return abi::kCodeStale;
    case abi::kErrEgressBudget:
      return abi::kCodeEgressBudget;
    case abi::kErrNotFound:
      return abi::kCodeNotFound;
    case abi::kErrDataOps:
      return abi::kCodeDataOps;
    case abi::kErrDepth:
      return abi::kCodeDepth;
    default:
      return abi::kCodeUnavailable;
  }
}

// "fuel", "watchdog", ... from the sandbox's failure line.
std::string StopKind(std::string_view failure) {
  struct Prefix {
    const char* prefix;
    const char* kind;
  };
  static constexpr Prefix kPrefixes[] = {
      {"fuel exhausted:", "fuel"}, {"watchdog:", "watchdog"},
      {"memory:", "memory"},       {"panic:", "panic"},
      {"trap:", "trap"},
  };
  for (const Prefix& p : kPrefixes) {
    if (failure.substr(0, std::strlen(p.prefix)) == p.prefix) return p.kind;
  }
  return "abi";
}

bool ValidChannel(std::string_view channel) {
  if (channel == "all") return true;
  static constexpr std::string_view kPrefixes[] = {
      "shard:", "kind:", "group:", "player:"};
  for (std::string_view p : kPrefixes) {
    if (channel.size() > p.size() && channel.substr(0, p.size()) == p) {
      return true;
    }
  }
  return false;
}

bool IsValidUtf8(std::string_view text) {
  return SafeUtf8(text, text.size()) == text;
}

float F32(uint64_t bits) {
  const uint32_t low = static_cast<uint32_t>(bits);
  float f;
  std::memcpy(&f, &low, sizeof f);
  return f;
}

// Whether guest range (ptr, len) lies inside `caller`'s memory.
bool InBounds(wasm::Instance& caller, uint64_t ptr, uint64_t len) {
  return (ptr & 0xffffffffu) + (len & 0xffffffffu) <= caller.memory().size();
}

std::string_view GuestView(wasm::Instance& caller, uint64_t ptr, uint64_t len) {
  return std::string_view(
      reinterpret_cast<const char*>(caller.memory().data()) +
          static_cast<uint32_t>(ptr),
      static_cast<uint32_t>(len));
}

// What the host functions of one instance share: the entry call in
// progress (whose HostCalls serve it) and last_error. The sandbox's owner.
struct CallState {
  HostCalls* calls = nullptr;
  std::string last_error;  // JSON of the last failed host call
  // A size query's blob (state_get with cap 0), served to the next
  // state_get of the same call without asking the host again.
  bool state_cached = false;
  std::string state_cache;

  static CallState* From(void* user) {
    return static_cast<CallState*>(static_cast<guest::Sandbox*>(user)->owner());
  }
  static void OnLog(void* owner, int level, std::string_view text) {
    CallState* state = static_cast<CallState*>(owner);
    if (state->calls != nullptr) state->calls->Log(level, text);
  }

  void Begin(HostCalls* host) {
    calls = host;
    last_error.clear();
    state_cached = false;
    state_cache.clear();
  }

  int32_t Failed(int32_t code, std::string_view message) {
    nlohmann::json j = {{"code", CodeName(code)},
                        {"message", SafeUtf8(message, abi::kMaxErrorBytes)}};
    last_error = j.dump();
    return code;
  }
  int32_t Outcome(const HostCallResult& r) {
    if (r.code < 0) {
      return Failed(r.code, r.message.empty() ? CodeName(r.code) : r.message);
    }
    return r.code;
  }
};

// The host functions' state, or null outside an entry call (the module's
// _initialize runs before the instance has an owner; its host calls fail
// with kErrUnavailable and record nothing).
CallState* Active(void* user) {
  CallState* state = CallState::From(user);
  return state != nullptr && state->calls != nullptr ? state : nullptr;
}

// Host functions. Each checks every guest (ptr, len) first and traps (with
// no object holding a destructor alive) when one lies outside memory; the
// work after that runs in the Do* helpers and never traps.

void NowMs(wasm::Instance&, void* user, const uint64_t*, uint64_t* results) {
  CallState* state = Active(user);
  const int64_t now = state != nullptr ? state->calls->NowMs() : 0;
  results[0] = static_cast<uint64_t>(now);
}

int32_t DoRandom(CallState* impl, std::span<uint8_t> out) {
  if (impl == nullptr) return abi::kErrUnavailable;
  if (out.size() > abi::kMaxRandomBytes) {
    return impl->Failed(abi::kErrTooLarge,
                        "random_bytes: " + std::to_string(out.size()) +
                            " bytes asked, over the limit of " +
                            std::to_string(abi::kMaxRandomBytes));
  }
  impl->calls->FillRandom(out);
  return 0;
}

void RandomBytes(wasm::Instance& caller, void* user, const uint64_t* args,
                 uint64_t* results) {
  if (!InBounds(caller, args[0], args[1])) wasm::TrapOutOfBoundsFromHost();
  std::span<uint8_t> out = caller.memory().subspan(
      static_cast<uint32_t>(args[0]), static_cast<uint32_t>(args[1]));
  results[0] = static_cast<uint32_t>(DoRandom(Active(user), out));
}

int32_t DoStateGet(CallState* impl, std::span<uint8_t> out) {
  if (impl == nullptr) return abi::kErrUnavailable;
  std::string bytes;
  if (impl->state_cached) {
    bytes = std::move(impl->state_cache);
    impl->state_cached = false;
  } else {
    HostCallResult r = impl->calls->GetState(&bytes);
    if (r.code < 0) return impl->Outcome(r);
  }
  const size_t n = std::min(out.size(), bytes.size());
  if (n > 0) std::memcpy(out.data(), bytes.data(), n);
  if (out.empty()) {
    impl->state_cache = bytes;
    impl->state_cached = true;
  }
  return static_cast<int32_t>(
      std::min<size_t>(bytes.size(), std::numeric_limits<int32_t>::max()));
}

void StateGet(wasm::Instance& caller, void* user, const uint64_t* args,
              uint64_t* results) {
  if (!InBounds(caller, args[0], args[1])) wasm::TrapOutOfBoundsFromHost();
  std::span<uint8_t> out = caller.memory().subspan(
      static_cast<uint32_t>(args[0]), static_cast<uint32_t>(args[1]));
  results[0] = static_cast<uint32_t>(DoStateGet(Active(user), out));
}

int32_t DoStateSet(CallState* impl, std::string_view bytes) {
  if (impl == nullptr) return abi::kErrUnavailable;
  impl->state_cached = false;
  impl->state_cache.clear();
  if (bytes.size() > abi::kMaxStateBytes) {
    return impl->Failed(
        abi::kErrTooLarge,
        "state_set: the blob is " + std::to_string(bytes.size()) +
            " bytes, over the limit of " + std::to_string(abi::kMaxStateBytes));
  }
  return impl->Outcome(impl->calls->SetState(bytes));
}

void StateSet(wasm::Instance& caller, void* user, const uint64_t* args,
              uint64_t* results) {
  if (!InBounds(caller, args[0], args[1])) wasm::TrapOutOfBoundsFromHost();
  results[0] = static_cast<uint32_t>(
      DoStateSet(Active(user), GuestView(caller, args[0], args[1])));
}

// kErrInvalid / kErrTooLarge for a name or channel, or 0.
int32_t CheckName(CallState* impl, const char* fn, const char* noun,
                  std::string_view name, size_t max) {
  if (name.empty()) {
    return impl->Failed(abi::kErrInvalid,
                        std::string(fn) + ": the " + noun + " is empty");
  }
  if (name.size() > max) {
    return impl->Failed(abi::kErrTooLarge,
                        std::string(fn) + ": the " + noun + " is " +
                            std::to_string(name.size()) +
                            " bytes, over the limit of " + std::to_string(max));
  }
  if (!IsValidUtf8(name)) {
    return impl->Failed(abi::kErrInvalid, std::string(fn) + ": the " + noun +
                                              " is not valid UTF-8");
  }
  return 0;
}

int32_t CheckPayload(CallState* impl, const char* fn, std::string_view payload,
                     size_t max) {
  if (payload.size() <= max) return 0;
  return impl->Failed(abi::kErrTooLarge, std::string(fn) + ": the payload is " +
                                             std::to_string(payload.size()) +
                                             " bytes, over the limit of " +
                                             std::to_string(max));
}

int32_t DoEmitEvent(CallState* impl, std::string_view name,
                    std::string_view payload) {
  if (impl == nullptr) return abi::kErrUnavailable;
  if (int32_t c = CheckName(impl, "emit_event", "event name", name,
                            abi::kMaxEventNameBytes)) {
    return c;
  }
  if (int32_t c = CheckPayload(impl, "emit_event", payload,
                               abi::kMaxEventPayloadBytes)) {
    return c;
  }
  return impl->Outcome(impl->calls->EmitEvent(name, payload));
}

void EmitEvent(wasm::Instance& caller, void* user, const uint64_t* args,
               uint64_t* results) {
  if (!InBounds(caller, args[0], args[1]) ||
      !InBounds(caller, args[2], args[3])) {
    wasm::TrapOutOfBoundsFromHost();
  }
  results[0] = static_cast<uint32_t>(
      DoEmitEvent(Active(user), GuestView(caller, args[0], args[1]),
                  GuestView(caller, args[2], args[3])));
}

int32_t DoEmitChannel(CallState* impl, std::string_view channel,
                      std::string_view payload) {
  if (impl == nullptr) return abi::kErrUnavailable;
  if (int32_t c = CheckName(impl, "emit_channel", "channel", channel,
                            abi::kMaxChannelBytes)) {
    return c;
  }
  if (!ValidChannel(channel)) {
    return impl->Failed(
        abi::kErrInvalid,
        "emit_channel: unknown channel \"" + std::string(channel) +
            "\" (expected all, shard:<id>, kind:<kind>, group:<name> or "
            "player:<id>)");
  }
  if (int32_t c = CheckPayload(impl, "emit_channel", payload,
                               abi::kMaxNotifyPayloadBytes)) {
    return c;
  }
  return impl->Outcome(impl->calls->EmitChannel(channel, payload));
}

void EmitChannel(wasm::Instance& caller, void* user, const uint64_t* args,
                 uint64_t* results) {
  if (!InBounds(caller, args[0], args[1]) ||
      !InBounds(caller, args[2], args[3])) {
    wasm::TrapOutOfBoundsFromHost();
  }
  results[0] = static_cast<uint32_t>(
      DoEmitChannel(Active(user), GuestView(caller, args[0], args[1]),
                    GuestView(caller, args[2], args[3])));
}

int32_t DoEmitSpatial(CallState* impl, std::string_view shard, float x, float y,
                      float radius, std::string_view payload) {
  if (impl == nullptr) return abi::kErrUnavailable;
  if (int32_t c = CheckName(impl, "emit_spatial", "shard id", shard,
                            abi::kMaxChannelBytes)) {
    return c;
  }
  if (!std::isfinite(x) || !std::isfinite(y) || !std::isfinite(radius) ||
      radius < 0) {
    return impl->Failed(abi::kErrInvalid,
                        "emit_spatial: x, y and radius must be finite and "
                        "the radius not negative");
  }
  if (int32_t c = CheckPayload(impl, "emit_spatial", payload,
                               abi::kMaxNotifyPayloadBytes)) {
    return c;
  }
  return impl->Outcome(impl->calls->EmitSpatial(shard, x, y, radius, payload));
}

// (shard_ptr, shard_len, x, y, radius, payload_ptr, payload_len)
void EmitSpatial(wasm::Instance& caller, void* user, const uint64_t* args,
                 uint64_t* results) {
  if (!InBounds(caller, args[0], args[1]) ||
      !InBounds(caller, args[5], args[6])) {
    wasm::TrapOutOfBoundsFromHost();
  }
  results[0] = static_cast<uint32_t>(DoEmitSpatial(
      Active(user), GuestView(caller, args[0], args[1]), F32(args[2]),
      F32(args[3]), F32(args[4]), GuestView(caller, args[5], args[6])));
}

int32_t DoLastError(CallState* impl, std::span<uint8_t> out) {
  if (impl == nullptr) return 0;
  const std::string& e = impl->last_error;
  const size_t n = std::min(out.size(), e.size());
  if (n > 0) std::memcpy(out.data(), e.data(), n);
  return static_cast<int32_t>(e.size());
}

void LastError(wasm::Instance& caller, void* user, const uint64_t* args,
               uint64_t* results) {
  if (!InBounds(caller, args[0], args[1])) wasm::TrapOutOfBoundsFromHost();
  std::span<uint8_t> out = caller.memory().subspan(
      static_cast<uint32_t>(args[0]), static_cast<uint32_t>(args[1]));
  results[0] = static_cast<uint32_t>(DoLastError(CallState::From(user), out));
}

const guest::HostFunctionTable& ComputeHostFunctions() {
  static const auto* table = new guest::HostFunctionTable({
      guest::Sandbox::LogFunction(abi::kImportLog),
      {abi::kImportNowMs, {{}, {V::kI64}}, &NowMs},
      {abi::kImportRandomBytes, I32Result(2), &RandomBytes},
      {abi::kImportStateGet, I32Result(2), &StateGet},
      {abi::kImportStateSet, I32Result(2), &StateSet},
      {abi::kImportEmitEvent, I32Result(4), &EmitEvent},
      {abi::kImportEmitChannel, I32Result(4), &EmitChannel},
      {abi::kImportEmitSpatial,
       {{V::kI32, V::kI32, V::kF32, V::kF32, V::kF32, V::kI32, V::kI32},
        {V::kI32}},
       &EmitSpatial},
      {abi::kImportLastError, I32Result(2), &LastError},
  });
  return *table;
}

wasm::AbiSpec MakeSpec() {
  wasm::AbiSpec spec;
  spec.import_prefix = abi::kImportPrefix;
  spec.version = abi::kVersion;
  spec.host_functions = ComputeHostFunctions().Specs();
  spec.marker_prefix = abi::kAbiMarkerPrefix;
  spec.memory_export = true;
  spec.module_noun = "tessera compute module";
  spec.build_hint =
      "build with the tessera compute SDK (tessera/compute.h or "
      "tessera-compute-sdk), which links no WASI; see docs/compute-abi.md";
  spec.exports = {
      {abi::kExportInitialize, {{}, {}}, false},
      {abi::kExportAlloc, I32Result(1), true},
      {abi::kExportOutputPtr, I32Result(0), true},
      {abi::kExportOutputLen, I32Result(0), true},
      {abi::kExportInit, NoArgsSig(), true},
      {abi::kExportTick, TickSig(), true},
      {abi::kExportInvoke, BytesSig(), true},
      {abi::kExportEvent, BytesSig(), false},
  };
  return spec;
}

}  // namespace

const wasm::AbiSpec& ComputeAbiSpec() {
  static const auto* spec = new wasm::AbiSpec(MakeSpec());
  return *spec;
}

wasm::CheckOptions ComputeCheckOptions(uint32_t memory_mb) {
  constexpr uint32_t kPagesPerMiB = 16;
  wasm::CheckOptions check;
  check.abi = &ComputeAbiSpec();
  check.memory_cap_pages = memory_mb * kPagesPerMiB;
  return check;
}

struct ComputeInstance::Impl {
  CallState state;  // declared first: the sandbox points at it
  std::unique_ptr<guest::Sandbox> sandbox;
  const Clock* clock = nullptr;
  const Clock* cpu_clock = nullptr;
  int init = -1, tick = -1, invoke = -1, event = -1;

  CallOutcome Run(int func, const char* what, std::string_view input,
                  bool has_input, const uint64_t* extra_arg, HostCalls& calls,
                  const CallLimits& limits);
};

ComputeInstance::ComputeInstance() : impl_(std::make_unique<Impl>()) {}
ComputeInstance::~ComputeInstance() = default;

Result<std::unique_ptr<ComputeInstance>> ComputeInstance::Create(
    std::shared_ptr<const wasm::CompiledModule> module,
    const InstanceOptions& options, guest::SandboxEnv env) {
  if (module == nullptr) {
    return Status(StatusCode::kInvalidArgument, "no compiled module");
  }
  guest::SandboxOptions so;
  so.import_module = abi::kImportModule;
  so.alloc_export = abi::kExportAlloc;
  so.output_ptr_export = abi::kExportOutputPtr;
  so.output_len_export = abi::kExportOutputLen;
  so.max_run_ms = options.max_run_ms;
  so.memory_mb = options.memory_mb;
  so.panic_level = abi::kLogPanic;
  so.max_log_line_bytes = abi::kMaxErrorBytes;
  if (options.cpu_clock != nullptr) env.cpu_clock = options.cpu_clock;
  const Clock* cpu_clock =
      env.cpu_clock != nullptr ? env.cpu_clock : ThreadCpuClock::Get();
  const int64_t fuel = options.instantiate_fuel > 0 ? options.instantiate_fuel
                                                    : kDefaultInstantiateFuel;
  auto sandbox = guest::Sandbox::Create(std::move(module),
                                        ComputeHostFunctions(), std::move(so),
                                        std::move(env), fuel, "instantiation");
  if (!sandbox.ok()) return sandbox.status();

  std::unique_ptr<ComputeInstance> instance(new ComputeInstance());
  Impl& impl = *instance->impl_;
  impl.sandbox = std::move(sandbox).value();
  impl.clock = options.clock != nullptr ? options.clock : RealClock::Get();
  impl.cpu_clock = cpu_clock;
  impl.sandbox->set_owner(&impl.state, &CallState::OnLog);
  guest::Sandbox& sb = *impl.sandbox;
  impl.init = sb.FindFunc(abi::kExportInit, NoArgsSig());
  impl.tick = sb.FindFunc(abi::kExportTick, TickSig());
  impl.invoke = sb.FindFunc(abi::kExportInvoke, BytesSig());
  impl.event = sb.FindFunc(abi::kExportEvent, BytesSig());
  const std::pair<int, const char*> required[] = {
      {impl.init, abi::kExportInit},
      {impl.tick, abi::kExportTick},
      {impl.invoke, abi::kExportInvoke},
  };
  for (const auto& [index, name] : required) {
    if (index < 0) {
      return Status(StatusCode::kRefused,
                    std::string("abi: the module exports no ") + name +
                        " of the compute ABI (load it with "
                        "ComputeCheckOptions)");
    }
  }
  return instance;
}

CallOutcome ComputeInstance::Impl::Run(int func, const char* what,
                                       std::string_view input, bool has_input,
                                       const uint64_t* extra_arg,
                                       HostCalls& host,
                                       const CallLimits& limits) {
  CallOutcome out;
  guest::Sandbox& sb = *sandbox;
  if (sb.failed()) {
    out.instance_dead = true;
    out.stop_kind = StopKind(sb.failure());
    out.error = SafeUtf8(sb.failure(), abi::kMaxErrorBytes);
    return out;
  }
  const int64_t wall_start = clock->NowUs();
  const int64_t cpu_start = cpu_clock->NowUs();
  const int64_t fuel_start = sb.fuel_used();
  state.Begin(&host);
  sb.set_max_run_ms(limits.max_run_ms);
  sb.StartBudget(limits.fuel, std::string(what));

  Result<uint32_t> code = 0u;
  if (has_input) {
    Result<guest::GuestBytes> arg = sb.Pass(input, what);
    if (arg.ok()) {
      const uint64_t args[] = {arg->ptr, arg->len};
      code = sb.Call(func, args, what);
    } else {
      code = arg.status();
    }
  } else if (extra_arg != nullptr) {
    code = sb.Call(func, std::span<const uint64_t>(extra_arg, 1), what);
  } else {
    code = sb.Call(func, {}, what);
  }
  // The output holds an invoke's result or a failed entry's error text.
  Result<std::string> output = std::string();
  if (code.ok() && (*code != 0 || func == invoke)) {
    output = sb.ReadOutput(what, abi::kMaxResultBytes);
  }
  state.Begin(nullptr);
  out.fuel_used = sb.fuel_used() - fuel_start;
  out.duration_us = clock->NowUs() - wall_start;
  out.cpu_us = cpu_clock->NowUs() - cpu_start;

  if (sb.failed()) {
    out.instance_dead = true;
    out.stop_kind = StopKind(sb.failure());
    out.error = SafeUtf8(sb.failure(), abi::kMaxErrorBytes);
    return out;
  }
  if (!code.ok() || !output.ok()) {
    // Pass's refusal of an oversize argument: the instance lives on.
    out.error = SafeUtf8(
        !code.ok() ? code.status().message() : output.status().message(),
        abi::kMaxErrorBytes);
    return out;
  }
  if (*code == 0) {
    out.ok = true;
    if (func == invoke) out.output = std::move(output).value();
    return out;
  }
  out.error = SafeUtf8(*output, abi::kMaxErrorBytes);
  if (out.error.empty()) {
    out.error = std::string(what) + " failed with code " +
                std::to_string(static_cast<int32_t>(*code));
  }
  return out;
}

CallOutcome ComputeInstance::Init(HostCalls& calls, const CallLimits& limits) {
  return impl_->Run(impl_->init, abi::kExportInit, {}, false, nullptr, calls,
                    limits);
}

CallOutcome ComputeInstance::Tick(uint32_t dt_ms, HostCalls& calls,
                                  const CallLimits& limits) {
  const uint64_t arg = dt_ms;
  return impl_->Run(impl_->tick, abi::kExportTick, {}, false, &arg, calls,
                    limits);
}

CallOutcome ComputeInstance::Invoke(std::string_view input, HostCalls& calls,
                                    const CallLimits& limits) {
  if (input.size() > abi::kMaxInvokeInputBytes) {
    CallOutcome out;
    out.error = "the invoke input is " + std::to_string(input.size()) +
                " bytes, over the limit of " +
                std::to_string(abi::kMaxInvokeInputBytes);
    return out;
  }
  return impl_->Run(impl_->invoke, abi::kExportInvoke, input, true, nullptr,
                    calls, limits);
}

CallOutcome ComputeInstance::Event(std::string_view input, HostCalls& calls,
                                   const CallLimits& limits) {
  if (impl_->event < 0) {
    CallOutcome out;
    out.error = std::string("the module exports no ") + abi::kExportEvent;
    return out;
  }
  if (input.size() > abi::kMaxInvokeInputBytes) {
    CallOutcome out;
    out.error = "the event input is " + std::to_string(input.size()) +
                " bytes, over the limit of " +
                std::to_string(abi::kMaxInvokeInputBytes);
    return out;
  }
  return impl_->Run(impl_->event, abi::kExportEvent, input, true, nullptr,
                    calls, limits);
}

bool ComputeInstance::has_event() const { return impl_->event >= 0; }
bool ComputeInstance::dead() const { return impl_->sandbox->failed(); }
size_t ComputeInstance::memory_bytes() const {
  return impl_->sandbox->memory_bytes();
}

}  // namespace tessera::compute
