// The tessera_compute_v1 ABI as data (ComputeAbiSpec) and its host
// functions (docs/compute-abi.md).
#include "tessera/compute_abi.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "common/text.h"
#include "compute/compute_abi_host.h"
#include "compute/module_instance.h"
#include "guest/sandbox.h"
#include "wasm/instance.h"

namespace tessera::compute {

namespace abi = compute_abi;
using V = wasm::ValType;
using wasm::FuncSig;

namespace internal {
namespace {

FuncSig I32Result(int i32_params) {
  FuncSig sig;
  sig.params.assign(static_cast<size_t>(i32_params), V::kI32);
  sig.results = {V::kI32};
  return sig;
}

}  // namespace

const FuncSig& TickSig() {
  static const auto* sig = new FuncSig(I32Result(1));
  return *sig;
}
const FuncSig& BytesSig() {
  static const auto* sig = new FuncSig(I32Result(2));
  return *sig;
}
const FuncSig& InitSig() {
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
    case abi::kErrData:
      return abi::kCodeData;
    case abi::kErrShards:
      return abi::kCodeShards;
    default:
      return abi::kCodeUnavailable;
  }
}

namespace {

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

CallState* From(void* user) {
  return static_cast<CallState*>(static_cast<guest::Sandbox*>(user)->owner());
}

}  // namespace

void CallState::Begin(HostCalls* host) {
  calls = host;
  last_error.clear();
  state_cached = false;
  state_cache.clear();
  reply.clear();
}

int32_t CallState::Failed(int32_t code, std::string_view message,
                          std::string_view code_name) {
  const std::string name =
      code_name.empty() ? std::string(CodeName(code)) : std::string(code_name);
  nlohmann::json j = {{"code", SafeUtf8(name, 64)},
                      {"message", SafeUtf8(message, abi::kMaxErrorBytes)}};
  last_error = j.dump();
  return code;
}

int32_t CallState::Outcome(const HostCallResult& r) {
  if (r.code < 0) {
    return Failed(r.code, r.message.empty() ? CodeName(r.code) : r.message,
                  r.code_name);
  }
  return r.code;
}

void CallState::OnLog(void* owner, int level, std::string_view text) {
  CallState* state = static_cast<CallState*>(owner);
  if (state->calls != nullptr) state->calls->Log(level, text);
}

namespace {

// The host functions' state, or null outside an entry call (the module's
// _initialize runs before the instance has an owner; its host calls fail
// with kErrUnavailable and record nothing).
CallState* Active(void* user) {
  CallState* state = From(user);
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
  results[0] = static_cast<uint32_t>(DoLastError(From(user), out));
}

// data / shards: (op_ptr, op_len, req_ptr, req_len) -> reply size or an
// error. The op is checked here (1..32 bytes of ASCII letters), the request
// against kMaxDataRequestBytes, the reply against kMaxReplyBytes.
enum class Api { kData, kShards };

int32_t DoApi(CallState* impl, Api api, std::string_view op,
              std::string_view request) {
  if (impl == nullptr) return abi::kErrUnavailable;
  impl->reply.clear();
  const char* fn = api == Api::kData ? abi::kImportData : abi::kImportShards;
  const bool op_ok = !op.empty() && op.size() <= 32 &&
                     std::all_of(op.begin(), op.end(), [](char c) {
                       return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
                     });
  if (!op_ok) {
    return impl->Failed(abi::kErrInvalid,
                        std::string(fn) + ": the op must be 1..32 letters");
  }
  if (request.size() > abi::kMaxDataRequestBytes) {
    return impl->Failed(abi::kErrTooLarge,
                        std::string(fn) + ": the request is " +
                            std::to_string(request.size()) +
                            " bytes, over the limit of " +
                            std::to_string(abi::kMaxDataRequestBytes));
  }
  std::string reply;
  HostCallResult r = api == Api::kData
                         ? impl->calls->Data(op, request, &reply)
                         : impl->calls->Shards(op, request, &reply);
  if (r.code < 0) return impl->Outcome(r);
  if (reply.size() > abi::kMaxReplyBytes) {
    return impl->Failed(abi::kErrTooLarge,
                        std::string(fn) + " " + std::string(op) +
                            ": the reply is " + std::to_string(reply.size()) +
                            " bytes, over the limit of " +
                            std::to_string(abi::kMaxReplyBytes));
  }
  impl->reply = std::move(reply);
  return static_cast<int32_t>(impl->reply.size());
}

void DataCall(wasm::Instance& caller, void* user, const uint64_t* args,
              uint64_t* results) {
  if (!InBounds(caller, args[0], args[1]) ||
      !InBounds(caller, args[2], args[3])) {
    wasm::TrapOutOfBoundsFromHost();
  }
  results[0] = static_cast<uint32_t>(
      DoApi(Active(user), Api::kData, GuestView(caller, args[0], args[1]),
            GuestView(caller, args[2], args[3])));
}

void ShardsCall(wasm::Instance& caller, void* user, const uint64_t* args,
                uint64_t* results) {
  if (!InBounds(caller, args[0], args[1]) ||
      !InBounds(caller, args[2], args[3])) {
    wasm::TrapOutOfBoundsFromHost();
  }
  results[0] = static_cast<uint32_t>(
      DoApi(Active(user), Api::kShards, GuestView(caller, args[0], args[1]),
            GuestView(caller, args[2], args[3])));
}

int32_t DoReply(CallState* impl, std::span<uint8_t> out) {
  if (impl == nullptr) return 0;
  const std::string& r = impl->reply;
  const size_t n = std::min(out.size(), r.size());
  if (n > 0) std::memcpy(out.data(), r.data(), n);
  return static_cast<int32_t>(r.size());
}

void Reply(wasm::Instance& caller, void* user, const uint64_t* args,
           uint64_t* results) {
  if (!InBounds(caller, args[0], args[1])) wasm::TrapOutOfBoundsFromHost();
  std::span<uint8_t> out = caller.memory().subspan(
      static_cast<uint32_t>(args[0]), static_cast<uint32_t>(args[1]));
  results[0] = static_cast<uint32_t>(DoReply(Active(user), out));
}

}  // namespace

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
      {abi::kImportData, I32Result(4), &DataCall},
      {abi::kImportShards, I32Result(4), &ShardsCall},
      {abi::kImportReply, I32Result(2), &Reply},
  });
  return *table;
}

}  // namespace internal

namespace {

using internal::BytesSig;
using internal::I32Result;
using internal::InitSig;
using internal::TickSig;

wasm::AbiSpec MakeSpec() {
  wasm::AbiSpec spec;
  spec.import_prefix = abi::kImportPrefix;
  spec.version = abi::kVersion;
  spec.host_functions = internal::ComputeHostFunctions().Specs();
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
      {abi::kExportInit, InitSig(), true},
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

}  // namespace tessera::compute
