// C generation: wasm2c through libwabt, plus tessera's glue, which gives
// every module the same entry points (tessera_guest_*) whatever its exports.
#ifndef TESSERA_WASM_CODEGEN_H_
#define TESSERA_WASM_CODEGEN_H_

#include <string>

#include "common/status.h"
#include "wasm/module_info.h"

namespace wabt {
struct Module;
}

namespace tessera::wasm {

struct GeneratedC {
  std::string header;  // guest.h
  std::string source;  // guest.c, includes "guest.h" and "wasm-rt.h"
};

// Renames the module's exports (the glue addresses exports by index in
// info.funcs), generates C and appends the glue. With `link` (every module
// that has imports) imports are renamed and implemented by the link glue
// (link_glue.h), bound at instantiation. `module` is consumed.
Result<GeneratedC> GenerateC(wabt::Module* module, const ModuleInfo& info,
                             bool fuel, bool link = false);

// The text of src/wasm/rt/wasm-rt.h, embedded at build time.
extern const char kWasmRtHeader[];

}  // namespace tessera::wasm

#endif  // TESSERA_WASM_CODEGEN_H_
