#include "wasm/codegen.h"

#include <wabt/apply-names.h>
#include <wabt/c-writer.h>
#include <wabt/generate-names.h>
#include <wabt/ir.h>
#include <wabt/stream.h>

#include <string>

#include "wasm/c_values.h"
#include "wasm/instrument.h"
#include "wasm/link_glue.h"

namespace tessera::wasm {
namespace {

// Converts raw argument bits a[i] to the C type.
std::string ArgFromBits(ValType t, size_t i) {
  return ValueFromBits(t, "a[" + std::to_string(i) + "]");
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

// `import_module`: the one import module's name, or empty without imports.
// `export_accessors`: per entry of info.exports, the generated accessor
// returning its storage (empty for functions).
std::string Glue(const ModuleInfo& info, const std::string& import_module,
                 const std::vector<std::string>& export_accessors,
                 bool has_memory, bool fuel) {
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
  if (!import_module.empty()) {
    g += "  Z_guest_instantiate((Z_guest_instance_t*)i, (struct Z_" +
         import_module + "_instance_t*)host);\n";
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
  g += "void* tessera_guest_export(void* i, u32 k) {\n  switch (k) {\n";
  for (size_t k = 0; k < export_accessors.size(); ++k) {
    if (export_accessors[k].empty()) continue;
    g += "    case " + std::to_string(k) + ": return (void*)" +
         export_accessors[k] + "((Z_guest_instance_t*)i);\n";
  }
  g += "    default: (void)i; return NULL;\n  }\n}\n";
  std::string table;
  for (size_t f = 0; f < info.funcs.size(); ++f) {
    const FuncSig& sig = info.funcs[f].sig;
    std::string name = "tessera_thunk_" + std::to_string(f);
    if (!ThunkSupported(sig)) {
      table += "  NULL,\n";
      continue;
    }
    table += "  " + name + ",\n";
    std::string call =
        "Z_guestZ_f" + std::to_string(f) + "((Z_guest_instance_t*)inst";
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
        std::string field =
            "v." + std::string(1, letters[k]) + std::to_string(k);
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

const char kFloatLoads[] = R"(#if defined(__x86_64__) && !defined(__TINYC__)
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

void ReplaceAll(std::string* s, const std::string& from, const std::string& to,
                size_t begin = 0, size_t end = std::string::npos) {
  size_t pos = begin;
  while ((pos = s->find(from, pos)) != std::string::npos &&
         (end == std::string::npos || pos + from.size() <= end)) {
    s->replace(pos, from.size(), to);
    pos += to.size();
    if (end != std::string::npos) end += to.size() - from.size();
  }
}

// wasm2c's CALL_INDIRECT raises one trap for three failures; tell them
// apart as the spec does (undefined / uninitialized element, type mismatch).
const char kCallIndirect[] =
    R"(#define CALL_INDIRECT(table, t, ft, x, ...)                         \
  ((LIKELY((x) < table.size) || TRAP(UNDEFINED_ELEMENT)),           \
   (LIKELY(table.data[x].func) || TRAP(UNINITIALIZED_ELEMENT)),     \
   (LIKELY(table.data[x].func_type == func_types[ft]) ||            \
    TRAP(INDIRECT_TYPE_MISMATCH)),                                  \
   ((t)table.data[x].func)(__VA_ARGS__))
)";

// Patches wasm2c 1.0.32's fixed prelude and instantiation order:
//  - CALL_INDIRECT's traps (above);
//  - table helpers trap with TABLE_OOB, not the memory's OOB;
//  - element segments are applied before data segments, as the spec
//    orders them (wasm2c does data first), so a module whose data segment
//    traps still leaves its elements in an imported table.
Status PatchPrelude(std::string* src) {
  const std::string macro_end = "(__VA_ARGS__))\n";
  size_t ci = src->find("#define CALL_INDIRECT(");
  size_t ci_end = src->find(macro_end, ci);
  if (ci == std::string::npos || ci_end == std::string::npos) {
    return Internal("unexpected wasm2c output: no CALL_INDIRECT macro");
  }
  src->replace(ci, ci_end + macro_end.size() - ci, kCallIndirect);
  size_t tb = src->find("static inline void funcref_table_init(");
  const std::string last_table = "DEFINE_TABLE_FILL(externref)";
  size_t te = src->find(last_table, tb);
  if (tb == std::string::npos || te == std::string::npos) {
    return Internal("unexpected wasm2c output: no table helpers");
  }
  ReplaceAll(src, "TRAP(OOB)", "TRAP(TABLE_OOB)", tb, te);
  ReplaceAll(src, "  init_memories(instance);\n  init_tables(instance);\n",
             "  init_tables(instance);\n  init_memories(instance);\n");
  return Status::Ok();
}

}  // namespace

Result<GeneratedC> GenerateC(wabt::Module* m, const ModuleInfo& info, bool fuel,
                             bool link) {
  size_t func_index = 0, other = 0;
  bool has_memory_export = false;
  // The fuel pass appends its two globals last; they keep their names.
  const wabt::Index first_fuel_global =
      fuel ? static_cast<wabt::Index>(m->globals.size() - 2) : ~wabt::Index{0};
  std::vector<std::string> accessors;
  for (wabt::Export* e : m->exports) {
    if (e->kind == wabt::ExternalKind::Global &&
        m->GetGlobalIndex(e->var) >= first_fuel_global) {
      continue;  // ours
    }
    switch (e->kind) {
      case wabt::ExternalKind::Func:
        e->name = "f" + std::to_string(func_index++);
        accessors.emplace_back();
        continue;
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
    accessors.push_back("Z_guestZ_" + e->name);
  }
  if (accessors.size() != info.exports.size()) {
    return Internal("export list changed during code generation");
  }
  if (link) RenameImportsForLinking(m);
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
  if (!wabt::Succeeded(wabt::GenerateNames(m))) {
    return Internal("wabt could not name the module's items");
  }
  // As the wasm2c tool does, ignore ApplyNames' result: it fails on some
  // valid modules (a passive data segment in a module without memory, spec
  // token.wast) and leaves such references as indices, which WriteC
  // handles.
  (void)wabt::ApplyNames(m);
  wabt::MemoryStream c_stream, h_stream;
  wabt::WriteCOptions opts;
  opts.module_name = "guest";
  if (!wabt::Succeeded(
          wabt::WriteC(&c_stream, &h_stream, "guest.h", m, opts))) {
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
  // f32.neg and f64.neg, the only unary minus wasm2c writes: a macro, so
  // that compilers that negate by subtraction still flip just the sign.
  ReplaceAll(&out.source, " = -(", " = TESSERA_FNEG(");
  ReplaceAll(&out.source, "DEFINE_LOAD(f32_load, f32, f32, f32)",
             "DEFINE_LOAD_FP(f32_load, f32)");
  ReplaceAll(&out.source, "DEFINE_LOAD(f64_load, f64, f64, f64)",
             "DEFINE_LOAD_FP(f64_load, f64)");
  size_t first_load = out.source.find("DEFINE_LOAD(i32_load,");
  if (first_load == std::string::npos) {
    return Internal("unexpected wasm2c output: no i32_load definition");
  }
  out.source.insert(first_load, kFloatLoads);
  TESSERA_RETURN_IF_ERROR(PatchPrelude(&out.source));
  std::string import_module;
  if (!m->imports.empty()) {
    import_module = link ? kLinkModule : m->imports[0]->module_name;
  }
  out.source +=
      Glue(info, import_module, accessors, !m->memories.empty(), fuel);
  if (link) out.source += LinkGlue(info);
  return out;
}

}  // namespace tessera::wasm
