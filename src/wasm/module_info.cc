#include "wasm/module_info.h"

namespace tessera::wasm {

const char* ValTypeName(ValType t) {
  switch (t) {
    case ValType::kI32: return "i32";
    case ValType::kI64: return "i64";
    case ValType::kF32: return "f32";
    case ValType::kF64: return "f64";
    case ValType::kFuncRef: return "funcref";
    case ValType::kExternRef: return "externref";
  }
  return "?";
}

std::string SigToString(const FuncSig& sig) {
  std::string s = "(";
  for (size_t i = 0; i < sig.params.size(); ++i) {
    if (i) s += ", ";
    s += ValTypeName(sig.params[i]);
  }
  s += ") -> (";
  for (size_t i = 0; i < sig.results.size(); ++i) {
    if (i) s += ", ";
    s += ValTypeName(sig.results[i]);
  }
  return s + ")";
}

std::string ExternTypeToString(const ExternType& t) {
  auto limits = [&t] {
    std::string s = std::to_string(t.limits.initial);
    if (t.limits.max) s += " " + std::to_string(*t.limits.max);
    return s;
  };
  switch (t.kind) {
    case ExternKind::kFunc:
      return "func " + SigToString(t.func);
    case ExternKind::kTable:
      return "table " + limits() + " " + ValTypeName(t.value);
    case ExternKind::kMemory:
      return "memory " + limits();
    case ExternKind::kGlobal:
      return std::string("global ") + (t.is_mutable ? "(mut " : "") +
             ValTypeName(t.value) + (t.is_mutable ? ")" : "");
  }
  return "?";
}

int ModuleInfo::FindFunc(const std::string& name) const {
  for (size_t i = 0; i < funcs.size(); ++i) {
    if (funcs[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace tessera::wasm
