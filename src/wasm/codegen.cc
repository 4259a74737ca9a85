#include "wasm/codegen.h"

#include <wabt/apply-names.h>
#include <wabt/c-writer.h>
#include <wabt/generate-names.h>
#include <wabt/ir.h>
#include <wabt/stream.h>

#include <string>

#include "wasm/instrument.h"

namespace tessera::wasm {
namespace {

const char* CType(ValType t) {
  switch (t) {
    case ValType::kI32: return "u32";
    case ValType::kI64: return "u64";
    case ValType::kF32: return "f32";
    case ValType::kF64: return "f64";
    case ValType::kFuncRef: return "wasm_rt_funcref_t";
    case ValType::kExternRef: return "wasm_rt_externref_t";
  }
  return "void";
}

char MultiLetter(ValType t) {
  switch (t) {
    case ValType::kI32: return 'i';
    case ValType::kI64: return 'j';
    case ValType::kF32: return 'f';
    case ValType::kF64: return 'd';
    default: return '?';
  }
}

// Converts raw argument bits a[i] to the C type.
std::string ArgFromBits(ValType t, size_t i) {
  std::string a = "a[" + std::to_string(i) + "]";
  switch (t) {
    case ValType::kI32: return "(u32)" + a;
    case ValType::kI64: return a;
    case ValType::kF32: return "tessera_bits_to_f32((u32)" + a + ")";
    case ValType::kF64: return "tessera_bits_to_f64(" + a + ")";
    case ValType::kExternRef: return "(wasm_rt_externref_t)(uintptr_t)" + a;
    default: return "wasm_rt_funcref_null_value";
  }
}

std::string BitsFromValue(ValType t, const std::string& v) {
  switch (t) {
    case ValType::kI32: return "(u64)(u32)" + v;
    case ValType::kI64: return "(u64)" + v;
    case ValType::kF32: return "(u64)tessera_f32_to_bits(" + v + ")";
    case ValType::kF64: return "tessera_f64_to_bits(" + v + ")";
    case ValType::kExternRef: return "(u64)(uintptr_t)" + v;
    default: return "(u64)(uintptr_t)(" + v + ").func";
  }
}

bool ThunkSupported(const FuncSig& sig) {
  for (ValType t : sig.params) {
    if (t == ValType::kFuncRef) return false;
  }
  if (sig.results.size() > 1) {
    for (ValType t : sig.results) {
      if (MultiLetter(t) == '?') return false;
    }
  }
  return true;
}

std::string Glue(const ModuleInfo& info, bool has_log_import, bool has_memory,
                 bool fuel) {
  std::string g = R"(
/* ---- tessera glue: uniform entry points ---- */
static inline f32 tessera_bits_to_f32(u32 b) { f32 f; memcpy(&f, &b, 4); return f; }
static inline f64 tessera_bits_to_f64(u64 b) { f64 f; memcpy(&f, &b, 8); return f; }
static inline u32 tessera_f32_to_bits(f32 f) { u32 b; memcpy(&b, &f, 4); return b; }
static inline u64 tessera_f64_to_bits(f64 f) { u64 b; memcpy(&b, &f, 8); return b; }
typedef void (*tessera_thunk_t)(void*, const u64*, u64*);
size_t tessera_guest_instance_size(void) { return sizeof(Z_guest_instance_t); }
void tessera_guest_init_module(void) { Z_guest_init_module(); }
void tessera_guest_free(void* i) { Z_guest_free((Z_guest_instance_t*)i); }
)";
  g += "void tessera_guest_instantiate(void* i, void* host) {\n";
  if (has_log_import) {
    g += "  Z_guest_instantiate((Z_guest_instance_t*)i, "
         "(struct Z_tessera_v1_instance_t*)host);\n";
  } else {
    g += "  (void)host;\n  Z_guest_instantiate((Z_guest_instance_t*)i);\n";
  }
  g += "}\n";
  g += "wasm_rt_memory_t* tessera_guest_memory(void* i) { ";
  g += has_memory ? "return Z_guestZ_mem((Z_guest_instance_t*)i); }\n"
                  : "(void)i; return NULL; }\n";
  if (fuel) {
    g += "u64* tessera_guest_fuel(void* i) { return "
         "Z_guestZ_fuel((Z_guest_instance_t*)i); }\n";
    g += "u32* tessera_guest_interrupt(void* i) { return "
         "Z_guestZ_intr((Z_guest_instance_t*)i); }\n";
  }  // Without fuel the accessors are absent: dlsym finds none.
  std::string table;
  for (size_t f = 0; f < info.funcs.size(); ++f) {
    const FuncSig& sig = info.funcs[f].sig;
    std::string name = "tessera_thunk_" + std::to_string(f);
    if (!ThunkSupported(sig)) {
      table += "  NULL,\n";
      continue;
    }
    table += "  " + name + ",\n";
    std::string call = "Z_guestZ_f" + std::to_string(f) +
                       "((Z_guest_instance_t*)inst";
    for (size_t p = 0; p < sig.params.size(); ++p) {
      call += ", " + ArgFromBits(sig.params[p], p);
    }
    call += ")";
    g += "static void " + name +
         "(void* inst, const u64* a, u64* r) {\n  (void)a; (void)r;\n";
    if (sig.results.empty()) {
      g += "  " + call + ";\n";
    } else if (sig.results.size() == 1) {
      g += "  " + std::string(CType(sig.results[0])) + " v = " + call + ";\n";
      g += "  r[0] = " + BitsFromValue(sig.results[0], "v") + ";\n";
    } else {
      std::string letters;
      for (ValType t : sig.results) letters += MultiLetter(t);
      g += "  struct wasm_multi_" + letters + " v = " + call + ";\n";
      for (size_t k = 0; k < sig.results.size(); ++k) {
        std::string field = "v." + std::string(1, letters[k]) +
                            std::to_string(k);
        g += "  r[" + std::to_string(k) +
             "] = " + BitsFromValue(sig.results[k], field) + ";\n";
      }
    }
    g += "}\n";
  }
  g += "const tessera_thunk_t tessera_guest_thunks[] = {\n" + table +
       "  NULL\n};\n";
  g += "const u32 tessera_guest_thunk_count = " +
       std::to_string(info.funcs.size()) + ";\n";
  return g;
}

const char kFloatLoads[] = R"(#if defined(__x86_64__)
#define DEFINE_LOAD_FP(name, t)                              \
  static inline t name(wasm_rt_memory_t* mem, u64 addr) {    \
    t result;                                                \
    wasm_rt_memcpy(&result, &mem->data[addr], sizeof(t));    \
    __asm__("" ::"x"(result));                               \
    return result;                                           \
  }
#else
#define DEFINE_LOAD_FP(name, t) DEFINE_LOAD(name, t, t, t)
#endif
)";

void ReplaceAll(std::string* s, const std::string& from,
                const std::string& to) {
  size_t pos = 0;
  while ((pos = s->find(from, pos)) != std::string::npos) {
    s->replace(pos, from.size(), to);
    pos += to.size();
  }
}

}  // namespace

Result<GeneratedC> GenerateC(wabt::Module* m, const ModuleInfo& info,
                             bool fuel) {
  size_t func_index = 0, other = 0;
  bool has_memory_export = false;
  for (wabt::Export* e : m->exports) {
    if (fuel && (e->name == kFuelExport || e->name == kInterruptExport) &&
        e->kind == wabt::ExternalKind::Global) {
      continue;  // ours
    }
    switch (e->kind) {
      case wabt::ExternalKind::Func:
        e->name = "f" + std::to_string(func_index++);
        break;
      case wabt::ExternalKind::Memory:
        if (!has_memory_export) {
          e->name = "mem";
          has_memory_export = true;
          break;
        }
        [[fallthrough]];
      default:
        e->name = "x" + std::to_string(other++);
    }
  }
  if (!has_memory_export && !m->memories.empty()) {
    auto ef = std::make_unique<wabt::ExportModuleField>();
    ef->export_.name = "mem";
    ef->export_.kind = wabt::ExternalKind::Memory;
    ef->export_.var = wabt::Var(0, wabt::Location());
    m->AppendField(std::move(ef));
    has_memory_export = true;
  }
  if (func_index != info.funcs.size()) {
    return Internal("export count changed during code generation");
  }
  if (!wabt::Succeeded(wabt::GenerateNames(m)) ||
      !wabt::Succeeded(wabt::ApplyNames(m))) {
    return Internal("wabt could not name the module's items");
  }
  wabt::MemoryStream c_stream, h_stream;
  wabt::WriteCOptions opts;
  opts.module_name = "guest";
  if (!wabt::Succeeded(wabt::WriteC(&c_stream, &h_stream, "guest.h", m, opts))) {
    return Internal("wasm2c could not generate C for the module");
  }
  GeneratedC out;
  const auto& cb = c_stream.output_buffer().data;
  const auto& hb = h_stream.output_buffer().data;
  out.source.assign(cb.begin(), cb.end());
  out.header.assign(hb.begin(), hb.end());
  if (fuel) {
    // The watchdog sets the interrupt global from another thread; make every
    // read of it a real load so a loop cannot cache it in a register.
    std::string field = std::string("instance->") + kInterruptCName;
    ReplaceAll(&out.source, field, "(*(volatile u32*)&" + field + ")");
  }
  // wasm2c's loads end in `asm("" :: "r"(result))` so a load whose value is
  // unused still happens (and traps when out of bounds). For floats the "r"
  // constraint forces a detour through a general-purpose register; "x"
  // keeps the same guarantee in an SSE register.
  ReplaceAll(&out.source, "DEFINE_LOAD(f32_load, f32, f32, f32)",
             "DEFINE_LOAD_FP(f32_load, f32)");
  ReplaceAll(&out.source, "DEFINE_LOAD(f64_load, f64, f64, f64)",
             "DEFINE_LOAD_FP(f64_load, f64)");
  size_t first_load = out.source.find("DEFINE_LOAD(i32_load,");
  if (first_load == std::string::npos) {
    return Internal("unexpected wasm2c output: no i32_load definition");
  }
  out.source.insert(first_load, kFloatLoads);
  bool has_log_import = m->num_func_imports > 0;
  out.source += Glue(info, has_log_import, !m->memories.empty(), fuel);
  return out;
}

}  // namespace tessera::wasm
