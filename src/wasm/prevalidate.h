// Reads and type-checks a module in one pass with wabt's interpreter
// reader. It runs first on untrusted bytes because the IR reader of wabt
// 1.0.32 asserts (aborting the process) on some malformed bodies that this
// reader rejects cleanly (found by fuzz/module_loader_fuzz; the input is in
// fuzz/corpus/module_loader/regress_ir_reader_assert.wasm).
//
// Compiled as C++17: wabt's interp headers do not compile as C++20 with g++.
#ifndef TESSERA_WASM_PREVALIDATE_H_
#define TESSERA_WASM_PREVALIDATE_H_

#include <wabt/common.h>
#include <wabt/error.h>
#include <wabt/feature.h>

#include <cstddef>
#include <cstdint>

namespace tessera::wasm {

bool PreValidate(const uint8_t* data, size_t size,
                 const wabt::Features& features, wabt::Errors* errors);

}  // namespace tessera::wasm

#endif  // TESSERA_WASM_PREVALIDATE_H_
