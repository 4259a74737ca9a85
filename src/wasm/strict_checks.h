// Internal to src/wasm: checks for modules that wabt 1.0.32's readers and
// validator accept although the WebAssembly spec rejects them (found by
// the conformance runner, tests/spec). Run by ParseModule on every module.
#ifndef TESSERA_WASM_STRICT_CHECKS_H_
#define TESSERA_WASM_STRICT_CHECKS_H_

#include <cstdint>
#include <span>

#include "common/status.h"

namespace wabt {
struct Module;
}

namespace tessera::wasm {

// The binary framing, before wabt reads it: section sizes are strict
// LEB128; a custom section's name is a well-formed length and UTF-8 within
// the section (wabt reads it under its lenient custom-section rule); every
// global's initializer has its `end` inside the section; a data count
// section has the data section it counts.
// Errors: kInvalidArgument "invalid module: at byte N: ...".
Status CheckBinaryFraming(std::span<const uint8_t> wasm);

// Validation wabt misses: call_indirect through a table of externref.
// Errors: kInvalidArgument "invalid module: type mismatch: ...".
Status CheckValidation(const wabt::Module& module);

}  // namespace tessera::wasm

#endif  // TESSERA_WASM_STRICT_CHECKS_H_
