#include "wasm/instance.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "wasm/compiled_module.h"
#include "wasm/rt/guard.h"

namespace tessera::wasm {

// The instance's memory, for host functions.
struct Instance::HostContext {
  wasm_rt_memory_t* memory = nullptr;
};

// What generated code with imports receives as its `tessera_link` import
// instance (see wasm-rt.h), and the bindings behind it.
struct Instance::LinkState {
  Z_tessera_link_instance_t c{};  // c.self == &c: never moves
  std::vector<tessera_link_entry_t> entries;
  std::vector<Extern> imports;
};

// One host function bound to one import: the link entry's ctx.
struct Instance::HostBinding {
  Instance* self;
  HostImport import;
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

}  // namespace

void TrapOutOfBoundsFromHost() { wasm_rt_trap(WASM_RT_TRAP_OOB); }

const char* TrapKindName(TrapKind kind) {
  switch (kind) {
    case TrapKind::kNone:
      return "none";
    case TrapKind::kOutOfBounds:
      return "out of bounds memory access";
    case TrapKind::kIntOverflow:
      return "integer overflow";
    case TrapKind::kDivByZero:
      return "integer divide by zero";
    case TrapKind::kInvalidConversion:
      return "invalid conversion to integer";
    case TrapKind::kUnreachable:
      return "unreachable executed";
    case TrapKind::kIndirectCall:
      return "indirect call to a null or mistyped function";
    case TrapKind::kStackExhausted:
      return "call stack exhausted";
    case TrapKind::kFuelExhausted:
      return "fuel exhausted";
    case TrapKind::kInterrupted:
      return "interrupted";
    case TrapKind::kOutOfMemory:
      return "out of memory: could not reserve guest memory";
  }
  return "unknown trap";
}

namespace {
TrapKind FromRtTrap(int code) {
  switch (code) {
    case WASM_RT_TRAP_OOB:
    case WASM_RT_TRAP_TABLE_OOB:
      return TrapKind::kOutOfBounds;
    case WASM_RT_TRAP_INT_OVERFLOW:
      return TrapKind::kIntOverflow;
    case WASM_RT_TRAP_DIV_BY_ZERO:
      return TrapKind::kDivByZero;
    case WASM_RT_TRAP_INVALID_CONVERSION:
      return TrapKind::kInvalidConversion;
    case WASM_RT_TRAP_UNREACHABLE:
      return TrapKind::kUnreachable;
    case WASM_RT_TRAP_CALL_INDIRECT:
    case WASM_RT_TRAP_UNDEFINED_ELEMENT:
    case WASM_RT_TRAP_UNINITIALIZED_ELEMENT:
    case WASM_RT_TRAP_INDIRECT_TYPE_MISMATCH:
      return TrapKind::kIndirectCall;
    case WASM_RT_TRAP_EXHAUSTION:
      return TrapKind::kStackExhausted;
    case WASM_RT_TRAP_OOM:
      return TrapKind::kOutOfMemory;
    default:
      return TrapKind::kUnreachable;
  }
}

// The current size of a memory or table extern, which import matching
// compares against.
void RefreshSize(Extern* x) {
  if (!x->ptr) return;
  if (x->type.kind == ExternKind::kMemory) {
    x->type.limits.initial = static_cast<wasm_rt_memory_t*>(x->ptr)->pages;
  } else if (x->type.kind == ExternKind::kTable) {
    x->type.limits.initial =
        x->type.value == ValType::kExternRef
            ? static_cast<wasm_rt_externref_table_t*>(x->ptr)->size
            : static_cast<wasm_rt_funcref_table_t*>(x->ptr)->size;
  }
}
}  // namespace

Instance::Instance() = default;

Status Instance::AllocateRaw() {
  size_t size = (module_->instance_size + 63) & ~size_t{63};
  raw_ = std::aligned_alloc(64, size);
  if (!raw_) return Status(StatusCode::kResourceExhausted, "out of memory");
  std::memset(raw_, 0, size);
  return Status::Ok();
}

int Instance::Link(std::vector<Extern> imports) {
  link_ = std::make_unique<LinkState>();
  LinkState& link = *link_;
  link.imports = std::move(imports);
  for (const Extern& x : link.imports) {
    link.entries.push_back({x.fn, x.ctx, x.ptr});
  }
  link.c.self = &link.c;
  link.c.entries = link.entries.data();
  InstantiateFrame frame{module_.get(), raw_, &link.c};
  int code = rt::GuardedCall(RunInstantiate, &frame);
  host_->memory = module_->memory(raw_);
  return code;
}

namespace {
void DispatchHostCall(void* ctx, const uint64_t* args, uint64_t* results) {
  auto* b = static_cast<Instance::HostBinding*>(ctx);
  b->import.fn(*b->self, b->import.user, args, results);
}
}  // namespace

Result<std::unique_ptr<Instance>> Instance::Create(
    std::shared_ptr<const CompiledModule> module,
    std::vector<HostImport> imports, int64_t initial_fuel) {
  const std::vector<ImportEntry>& wanted = module->info.import_types;
  if (imports.size() != wanted.size()) {
    return InvalidArgument("the module has " + std::to_string(wanted.size()) +
                           " imports, " + std::to_string(imports.size()) +
                           " host functions were given");
  }
  std::unique_ptr<Instance> inst(new Instance());
  inst->module_ = std::move(module);
  inst->host_ = std::make_unique<HostContext>();
  TESSERA_RETURN_IF_ERROR(inst->AllocateRaw());
  int code = 0;
  if (wanted.empty()) {
    InstantiateFrame frame{inst->module_.get(), inst->raw_, nullptr};
    code = rt::GuardedCall(RunInstantiate, &frame);
    inst->host_->memory = inst->module_->memory(inst->raw_);
  } else {
    if (!inst->module_->linkable) {
      return Internal("a module with imports was compiled without link glue");
    }
    inst->bindings_.reserve(imports.size());
    std::vector<Extern> externs;
    for (size_t k = 0; k < wanted.size(); ++k) {
      if (wanted[k].type.kind != ExternKind::kFunc ||
          imports[k].fn == nullptr) {
        return InvalidArgument("import " + std::to_string(k) + " (`" +
                               wanted[k].module + "." + wanted[k].field +
                               "`) is not bound to a host function");
      }
      inst->bindings_.push_back(
          std::make_unique<HostBinding>(HostBinding{inst.get(), imports[k]}));
      Extern x;
      x.type = wanted[k].type;
      x.fn = DispatchHostCall;
      x.ctx = inst->bindings_.back().get();
      externs.push_back(x);
    }
    code = inst->Link(std::move(externs));
  }
  if (code != 0) {
    return Status(StatusCode::kTrap,
                  "instantiation trapped: " + inst->Trapped(code).message());
  }
  inst->SetFuel(initial_fuel);
  int init = inst->info().FindFunc("_initialize");
  if (init >= 0 && inst->info().funcs[init].sig.params.empty()) {
    Status st = inst->Call(init, {}, {});
    if (!st.ok()) return Status(st.code(), "_initialize: " + st.message());
  }
  return inst;
}

Result<std::unique_ptr<Instance>> Instance::CreateLinked(
    std::shared_ptr<const CompiledModule> module, std::vector<Extern> imports) {
  const std::vector<ImportEntry>& wanted = module->info.import_types;
  if (!module->linkable && !wanted.empty()) {
    return InvalidArgument("the module was compiled without link glue");
  }
  if (imports.size() != wanted.size()) {
    return InvalidArgument("the module has " + std::to_string(wanted.size()) +
                           " imports, " + std::to_string(imports.size()) +
                           " were given");
  }
  for (size_t k = 0; k < wanted.size(); ++k) {
    TESSERA_RETURN_IF_ERROR(MatchImport(wanted[k], imports[k]));
  }
  std::unique_ptr<Instance> inst(new Instance());
  inst->module_ = std::move(module);
  inst->host_ = std::make_unique<HostContext>();
  TESSERA_RETURN_IF_ERROR(inst->AllocateRaw());
  int code = inst->Link(std::move(imports));
  inst->SetFuel(kUnlimitedFuel);
  if (code != 0) inst->Trapped(code);
  return inst;
}

Result<Extern> Instance::Export(const std::string& name) const {
  const std::vector<ExportEntry>& exports = module_->info.exports;
  size_t k = 0;
  while (k < exports.size() && exports[k].name != name) ++k;
  if (k == exports.size()) return NotFound("no export named `" + name + "`");
  const ExportEntry& e = exports[k];
  Extern x;
  if (e.import_index >= 0 && link_) {
    x = link_->imports[e.import_index];  // the original, with its own type
  } else if (e.kind == ExternKind::kFunc) {
    x.type = e.type;
    int f = module_->info.FindFunc(name);
    x.fn = f >= 0 ? module_->thunks[f] : nullptr;
    x.ctx = raw_;
    if (!x.fn) {
      return InvalidArgument("`" + name +
                             "` has a signature the host cannot call");
    }
  } else {
    x.type = e.type;
    x.ptr = module_->export_ptr(raw_, static_cast<uint32_t>(k));
  }
  RefreshSize(&x);
  return x;
}

void Instance::ClearTrap() {
  last_trap_ = TrapKind::kNone;
  last_trap_message_.clear();
}

Instance::~Instance() {
  if (raw_) {
    module_->free_instance(raw_);
    std::free(raw_);
  }
}

const ModuleInfo& Instance::info() const { return module_->info; }

Status Instance::Trapped(int code) {
  TrapKind kind = FromRtTrap(code);
  if (kind == TrapKind::kUnreachable && module_->fuel) {
    if (static_cast<int64_t>(*module_->fuel(raw_)) < 0) {
      kind = TrapKind::kFuelExhausted;
    } else if (std::atomic_ref<uint32_t>(*module_->interrupt(raw_)).load()) {
      kind = TrapKind::kInterrupted;
    }
  }
  last_trap_ = kind;
  switch (code) {
    case WASM_RT_TRAP_TABLE_OOB:
    case WASM_RT_TRAP_UNDEFINED_ELEMENT:
    case WASM_RT_TRAP_UNINITIALIZED_ELEMENT:
    case WASM_RT_TRAP_INDIRECT_TYPE_MISMATCH:
      last_trap_message_ = wasm_rt_strerror(static_cast<wasm_rt_trap_t>(code));
      break;
    default:
      last_trap_message_ = TrapKindName(kind);
  }
  return Status(StatusCode::kTrap, last_trap_message_);
}

Status Instance::Call(int func_index, std::span<const uint64_t> args,
                      std::span<uint64_t> results) {
  if (dead()) return Status(StatusCode::kTrap, last_trap_message_);
  if (func_index < 0 ||
      static_cast<size_t>(func_index) >= module_->thunks.size()) {
    return InvalidArgument("no such exported function");
  }
  const FuncSig& sig = module_->info.funcs[func_index].sig;
  if (args.size() != sig.params.size() || results.size() < sig.results.size()) {
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
  return Trapped(code);
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
  return std::string_view(reinterpret_cast<const char*>(mem.data()) + ptr, len);
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
