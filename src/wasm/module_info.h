// What the loader learnt about a module: its exports with signatures, its
// memory, and what the glue code exposes. Produced by CheckModule; pure data.
#ifndef TESSERA_WASM_MODULE_INFO_H_
#define TESSERA_WASM_MODULE_INFO_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tessera::wasm {

enum class ValType : uint8_t { kI32, kI64, kF32, kF64, kFuncRef, kExternRef };
const char* ValTypeName(ValType t);

struct FuncSig {
  std::vector<ValType> params;
  std::vector<ValType> results;
  bool operator==(const FuncSig&) const = default;
};
std::string SigToString(const FuncSig& sig);

struct ExportedFunc {
  std::string name;
  FuncSig sig;
};

enum class ExternKind : uint8_t { kFunc, kTable, kMemory, kGlobal };

struct ExportEntry {
  std::string name;
  ExternKind kind;
};

struct ModuleInfo {
  // Exported functions, in the order the generated glue numbers them.
  std::vector<ExportedFunc> funcs;
  // Every export, in module order (for `tessera shards check`).
  std::vector<ExportEntry> exports;
  std::vector<std::string> imports;  // "module.field"
  bool has_memory = false;
  uint32_t initial_pages = 0;
  std::optional<uint32_t> declared_max_pages;  // as written in the module
  uint32_t function_count = 0;                 // defined functions
  size_t code_bytes = 0;

  // Index into `funcs`, or -1.
  int FindFunc(const std::string& name) const;
};

}  // namespace tessera::wasm

#endif  // TESSERA_WASM_MODULE_INFO_H_
