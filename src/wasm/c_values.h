// Internal to src/wasm: how wasm values look in wasm2c's C, and how the
// glue converts them to and from the raw 64-bit values the host passes
// (i32 zero-extended, floats by their bits, externref as a pointer).
#ifndef TESSERA_WASM_C_VALUES_H_
#define TESSERA_WASM_C_VALUES_H_

#include <string>

#include "wasm/module_info.h"

namespace tessera::wasm {

// The C type wasm2c uses for `t` ("u32", "f64", "wasm_rt_funcref_t", ...).
const char* CType(ValType t);

// wasm2c's letter for `t` in multi-value result structs
// (`struct wasm_multi_if { u32 i0; f32 f1; }`); '?' for reference types.
char MultiLetter(ValType t);

// C expression converting raw bits `bits` (a u64 expression) to `t`. A
// funcref cannot travel as 64 bits and becomes null.
std::string ValueFromBits(ValType t, const std::string& bits);

// C expression converting the value `v` of type `t` to raw bits (u64).
std::string BitsFromValue(ValType t, const std::string& v);

// The C return type of a function with these results: "void", the single
// result's type, or "struct wasm_multi_<letters>".
std::string CResultType(const FuncSig& sig);

}  // namespace tessera::wasm

#endif  // TESSERA_WASM_C_VALUES_H_
