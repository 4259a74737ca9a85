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

// Memory limits in 64 KiB pages, table limits in elements.
struct Limits {
  uint64_t initial = 0;
  std::optional<uint64_t> max;
};

// The type of an import or export, as the module declares it (before the
// loader caps memory maxima).
struct ExternType {
  ExternKind kind = ExternKind::kFunc;
  FuncSig func;                   // kFunc
  ValType value = ValType::kI32;  // kGlobal: its type; kTable: element type
  bool is_mutable = false;        // kGlobal
  Limits limits;                  // kMemory, kTable
};
std::string ExternTypeToString(const ExternType& type);

struct ImportEntry {
  std::string module;
  std::string field;
  ExternType type;
};

struct ExportEntry {
  std::string name;
  ExternKind kind;
  ExternType type;
  // >= 0 when the export re-exports import number `import_index`.
  int import_index = -1;
};

struct ModuleInfo {
  // Exported functions, in the order the generated glue numbers them.
  std::vector<ExportedFunc> funcs;
  // Every export, in module order (for `tessera shards check`).
  std::vector<ExportEntry> exports;
  std::vector<std::string> imports;  // "module.field"
  std::vector<ImportEntry> import_types;  // parallel to imports
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
