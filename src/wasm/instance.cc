#include "wasm/instance.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "wasm/compiled_module.h"
#include "wasm/rt/guard.h"

namespace tessera::wasm {

// What the generated code receives as its `tessera_v1` import instance.
struct Instance::HostContext {
  Instance* self = nullptr;
  LogSink log;
  wasm_rt_memory_t* memory = nullptr;
};

namespace {

struct CallFrame {
  CompiledModule::Thunk thunk;
  void* raw;
  const uint64_t* args;
  uint64_t* results;
};

void RunThunk(void* p) {
  auto* f = static_cast<CallFrame*>(p);
  f->thunk(f->raw, f->args, f->results);
}

struct InstantiateFrame {
  const CompiledModule* module;
  void* raw;
  void* host;
};

void RunInstantiate(void* p) {
  auto* f = static_cast<InstantiateFrame*>(p);
  f->module->instantiate(f->raw, f->host);
}

// Called with C++ objects alive only below this frame (never across a trap).
void DeliverLog(Instance::HostContext* ctx, int level, const uint8_t* data,
                uint32_t len) {
  if (!ctx->log) return;
  ctx->log(level, std::string_view(reinterpret_cast<const char*>(data), len));
}

}  // namespace

}  // namespace tessera::wasm

// The tessera_v1.log import, resolved by dlopen'ed modules against the host
// executable. Traps: an out-of-bounds (ptr, len) traps with OOB. No C++
// object is alive in this frame when it traps.
extern "C" void Z_tessera_v1Z_log(void* host, uint32_t level, uint32_t ptr,
                                  uint32_t len) {
  auto* ctx = static_cast<tessera::wasm::Instance::HostContext*>(host);
  wasm_rt_memory_t* mem = ctx->memory;
  if (!mem || uint64_t{ptr} + len > mem->size) wasm_rt_trap(WASM_RT_TRAP_OOB);
  tessera::wasm::DeliverLog(ctx, static_cast<int>(level), mem->data + ptr,
                            len);
}

namespace tessera::wasm {

const char* TrapKindName(TrapKind kind) {
  switch (kind) {
    case TrapKind::kNone: return "none";
    case TrapKind::kOutOfBounds: return "out of bounds memory access";
    case TrapKind::kIntOverflow: return "integer overflow";
    case TrapKind::kDivByZero: return "integer divide by zero";
    case TrapKind::kInvalidConversion: return "invalid conversion to integer";
    case TrapKind::kUnreachable: return "unreachable executed";
    case TrapKind::kIndirectCall: return "indirect call to a null or mistyped function";
    case TrapKind::kStackExhausted: return "call stack exhausted";
    case TrapKind::kFuelExhausted: return "fuel exhausted";
    case TrapKind::kInterrupted: return "interrupted";
    case TrapKind::kOutOfMemory: return "out of memory: could not reserve guest memory";
  }
  return "unknown trap";
}

namespace {
TrapKind FromRtTrap(int code) {
  switch (code) {
    case WASM_RT_TRAP_OOB: return TrapKind::kOutOfBounds;
    case WASM_RT_TRAP_INT_OVERFLOW: return TrapKind::kIntOverflow;
    case WASM_RT_TRAP_DIV_BY_ZERO: return TrapKind::kDivByZero;
    case WASM_RT_TRAP_INVALID_CONVERSION: return TrapKind::kInvalidConversion;
    case WASM_RT_TRAP_UNREACHABLE: return TrapKind::kUnreachable;
    case WASM_RT_TRAP_CALL_INDIRECT: return TrapKind::kIndirectCall;
    case WASM_RT_TRAP_EXHAUSTION: return TrapKind::kStackExhausted;
    case WASM_RT_TRAP_OOM: return TrapKind::kOutOfMemory;
    default: return TrapKind::kUnreachable;
  }
}
}  // namespace

Result<std::unique_ptr<Instance>> Instance::Create(
    std::shared_ptr<const CompiledModule> module, LogSink log,
    int64_t initial_fuel) {
  std::unique_ptr<Instance> inst(new Instance());
  inst->module_ = std::move(module);
  inst->host_ = std::make_unique<HostContext>();
  inst->host_->self = inst.get();
  inst->host_->log = std::move(log);
  size_t size = (inst->module_->instance_size + 63) & ~size_t{63};
  inst->raw_ = std::aligned_alloc(64, size);
  if (!inst->raw_) return Status(StatusCode::kResourceExhausted, "out of memory");
  std::memset(inst->raw_, 0, size);
  InstantiateFrame frame{inst->module_.get(), inst->raw_, inst->host_.get()};
  int code = rt::GuardedCall(RunInstantiate, &frame);
  inst->host_->memory = inst->module_->memory(inst->raw_);
  inst->SetFuel(initial_fuel);
  if (code != 0) {
    return Status(StatusCode::kTrap, std::string("instantiation trapped: ") +
                                         TrapKindName(FromRtTrap(code)));
  }
  int init = inst->info().FindFunc("_initialize");
  if (init >= 0 && inst->info().funcs[init].sig.params.empty()) {
    Status st = inst->Call(init, {}, {});
    if (!st.ok()) return Status(st.code(), "_initialize: " + st.message());
  }
  return inst;
}

Instance::~Instance() {
  if (raw_) {
    module_->free_instance(raw_);
    std::free(raw_);
  }
}

const ModuleInfo& Instance::info() const { return module_->info; }

Status Instance::Trapped(TrapKind kind) {
  last_trap_ = kind;
  return Status(StatusCode::kTrap, TrapKindName(kind));
}

Status Instance::Call(int func_index, std::span<const uint64_t> args,
                      std::span<uint64_t> results) {
  if (dead()) return Status(StatusCode::kTrap, TrapKindName(last_trap_));
  if (func_index < 0 ||
      static_cast<size_t>(func_index) >= module_->thunks.size()) {
    return InvalidArgument("no such exported function");
  }
  const FuncSig& sig = module_->info.funcs[func_index].sig;
  if (args.size() != sig.params.size() ||
      results.size() < sig.results.size()) {
    return InvalidArgument("wrong number of arguments or results for `" +
                           module_->info.funcs[func_index].name + "`");
  }
  CompiledModule::Thunk thunk = module_->thunks[func_index];
  if (!thunk) {
    return InvalidArgument("`" + module_->info.funcs[func_index].name +
                           "` has a signature the host cannot call");
  }
  CallFrame frame{thunk, raw_, args.data(), results.data()};
  const uint64_t grows_before = rt::FailedGrowsOnThisThread();
  int code = rt::GuardedCall(RunThunk, &frame);
  failed_grows_ += rt::FailedGrowsOnThisThread() - grows_before;
  if (code == 0) return Status::Ok();
  TrapKind kind = FromRtTrap(code);
  if (kind == TrapKind::kUnreachable && module_->fuel) {
    if (static_cast<int64_t>(*module_->fuel(raw_)) < 0) {
      kind = TrapKind::kFuelExhausted;
    } else if (std::atomic_ref<uint32_t>(*module_->interrupt(raw_)).load()) {
      kind = TrapKind::kInterrupted;
    }
  }
  return Trapped(kind);
}

Result<uint32_t> Instance::CallI32(int func_index,
                                   std::span<const uint64_t> args) {
  uint64_t r[1] = {0};
  Status st = Call(func_index, args, r);
  if (!st.ok()) return st;
  return static_cast<uint32_t>(r[0]);
}

void Instance::SetFuel(int64_t fuel) {
  if (module_->fuel) *module_->fuel(raw_) = static_cast<uint64_t>(fuel);
}

int64_t Instance::fuel() const {
  return module_->fuel ? static_cast<int64_t>(*module_->fuel(raw_)) : 0;
}

void Instance::RequestInterrupt() {
  if (module_->interrupt) {
    std::atomic_ref<uint32_t>(*module_->interrupt(raw_)).store(1);
  }
}

void Instance::ClearInterrupt() {
  if (module_->interrupt) {
    std::atomic_ref<uint32_t>(*module_->interrupt(raw_)).store(0);
  }
}

std::span<uint8_t> Instance::memory() {
  wasm_rt_memory_t* m = host_->memory;
  if (!m || !m->data) return {};
  return {m->data, m->size};
}

Result<std::string_view> Instance::Read(uint32_t ptr, uint32_t len) {
  std::span<uint8_t> mem = memory();
  if (uint64_t{ptr} + len > mem.size()) {
    return InvalidArgument("guest buffer [" + std::to_string(ptr) + ", +" +
                           std::to_string(len) + ") is outside its memory of " +
                           std::to_string(mem.size()) + " bytes");
  }
  return std::string_view(reinterpret_cast<const char*>(mem.data()) + ptr,
                          len);
}

Status Instance::Write(uint32_t ptr, std::span<const uint8_t> bytes) {
  std::span<uint8_t> mem = memory();
  if (uint64_t{ptr} + bytes.size() > mem.size()) {
    return InvalidArgument("guest buffer [" + std::to_string(ptr) + ", +" +
                           std::to_string(bytes.size()) +
                           ") is outside its memory of " +
                           std::to_string(mem.size()) + " bytes");
  }
  if (!bytes.empty()) std::memcpy(mem.data() + ptr, bytes.data(), bytes.size());
  return Status::Ok();
}

}  // namespace tessera::wasm
