#include "wasm/link_glue.h"

#include <wabt/ir.h>

#include "wasm/c_values.h"

namespace tessera::wasm {
namespace {

std::string FuncTrampoline(const std::string& name, size_t k,
                           const FuncSig& sig) {
  std::string entry = "c->entries[" + std::to_string(k) + "]";
  std::string g =
      CResultType(sig) + " " + name + "(struct Z_tessera_link_instance_t* c";
  for (size_t p = 0; p < sig.params.size(); ++p) {
    g += ", " + std::string(CType(sig.params[p])) + " p" + std::to_string(p);
  }
  g += ") {\n";
  size_t na = sig.params.empty() ? 1 : sig.params.size();
  size_t nr = sig.results.empty() ? 1 : sig.results.size();
  g += "  u64 a[" + std::to_string(na) + "] = {0}, r[" + std::to_string(nr) +
       "] = {0};\n";
  for (size_t p = 0; p < sig.params.size(); ++p) {
    g += "  a[" + std::to_string(p) +
         "] = " + BitsFromValue(sig.params[p], "p" + std::to_string(p)) + ";\n";
  }
  g += "  c = c->self;\n  " + entry + ".fn(" + entry + ".ctx, a, r);\n";
  if (sig.results.size() == 1) {
    g += "  return " + ValueFromBits(sig.results[0], "r[0]") + ";\n";
  } else if (sig.results.size() > 1) {
    g += "  " + CResultType(sig) + " v;\n";
    for (size_t k2 = 0; k2 < sig.results.size(); ++k2) {
      std::string field =
          std::string(1, MultiLetter(sig.results[k2])) + std::to_string(k2);
      g += "  v." + field + " = " +
           ValueFromBits(sig.results[k2], "r[" + std::to_string(k2) + "]") +
           ";\n";
    }
    g += "  return v;\n";
  }
  return g + "}\n";
}

std::string StorageAccessor(const std::string& name, size_t k,
                            const ExternType& type) {
  std::string c_type;
  switch (type.kind) {
    case ExternKind::kGlobal:
      c_type = CType(type.value);
      break;
    case ExternKind::kMemory:
      c_type = "wasm_rt_memory_t";
      break;
    case ExternKind::kTable:
      c_type = type.value == ValType::kExternRef ? "wasm_rt_externref_table_t"
                                                 : "wasm_rt_funcref_table_t";
      break;
    case ExternKind::kFunc:
      return "";
  }
  return c_type + "* " + name + "(struct Z_tessera_link_instance_t* c) {\n" +
         "  return (" + c_type + "*)c->self->entries[" + std::to_string(k) +
         "].ptr;\n}\n";
}

}  // namespace

void RenameImportsForLinking(wabt::Module* m) {
  for (size_t k = 0; k < m->imports.size(); ++k) {
    m->imports[k]->module_name = kLinkModule;
    m->imports[k]->field_name = "i" + std::to_string(k);
  }
}

std::string LinkGlue(const ModuleInfo& info) {
  std::string g = "\n/* ---- tessera glue: test-only linking ---- */\n";
  for (size_t k = 0; k < info.import_types.size(); ++k) {
    const ExternType& type = info.import_types[k].type;
    std::string name = "Z_tessera_linkZ_i" + std::to_string(k);
    g += type.kind == ExternKind::kFunc ? FuncTrampoline(name, k, type.func)
                                        : StorageAccessor(name, k, type);
  }
  return g;
}

}  // namespace tessera::wasm
