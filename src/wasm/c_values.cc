#include "wasm/c_values.h"

namespace tessera::wasm {

const char* CType(ValType t) {
  switch (t) {
    case ValType::kI32:
      return "u32";
    case ValType::kI64:
      return "u64";
    case ValType::kF32:
      return "f32";
    case ValType::kF64:
      return "f64";
    case ValType::kFuncRef:
      return "wasm_rt_funcref_t";
    case ValType::kExternRef:
      return "wasm_rt_externref_t";
  }
  return "void";
}

char MultiLetter(ValType t) {
  switch (t) {
    case ValType::kI32:
      return 'i';
    case ValType::kI64:
      return 'j';
    case ValType::kF32:
      return 'f';
    case ValType::kF64:
      return 'd';
    default:
      return '?';
  }
}

std::string ValueFromBits(ValType t, const std::string& bits) {
  switch (t) {
    case ValType::kI32:
      return "(u32)" + bits;
    case ValType::kI64:
      return bits;
    case ValType::kF32:
      return "tessera_bits_to_f32((u32)" + bits + ")";
    case ValType::kF64:
      return "tessera_bits_to_f64(" + bits + ")";
    case ValType::kExternRef:
      return "(wasm_rt_externref_t)(uintptr_t)" + bits;
    default:
      return "wasm_rt_funcref_null_value";
  }
}

std::string BitsFromValue(ValType t, const std::string& v) {
  switch (t) {
    case ValType::kI32:
      return "(u64)(u32)" + v;
    case ValType::kI64:
      return "(u64)" + v;
    case ValType::kF32:
      return "(u64)tessera_f32_to_bits(" + v + ")";
    case ValType::kF64:
      return "tessera_f64_to_bits(" + v + ")";
    case ValType::kExternRef:
      return "(u64)(uintptr_t)" + v;
    default:
      return "(u64)(uintptr_t)(" + v + ").func";
  }
}

std::string CResultType(const FuncSig& sig) {
  if (sig.results.empty()) return "void";
  if (sig.results.size() == 1) return CType(sig.results[0]);
  std::string letters;
  for (ValType t : sig.results) letters += MultiLetter(t);
  return "struct wasm_multi_" + letters;
}

}  // namespace tessera::wasm
