// Internal to src/wasm: the C side of linking, for every module with
// imports (an ABI's host functions, or the spec runner's imports of any
// kind). Every import is renamed to `tessera_link.i<k>`
// before wasm2c runs, so the generated code calls and reads imports through
// functions the glue defines once per module, whatever they are later bound
// to: a compiled module links to any earlier instance without recompiling.
// The binding itself is the run-time struct of wasm-rt.h
// (Z_tessera_link_instance_t), filled by Instance::Create (host functions)
// or Instance::CreateLinked (test-only: any externs).
#ifndef TESSERA_WASM_LINK_GLUE_H_
#define TESSERA_WASM_LINK_GLUE_H_

#include <string>

#include "wasm/module_info.h"

namespace wabt {
struct Module;
}

namespace tessera::wasm {

// The import module name every import gets (wasm2c calls its instance
// `struct Z_tessera_link_instance_t`).
inline constexpr char kLinkModule[] = "tessera_link";

// Renames import k to tessera_link.i<k>.
void RenameImportsForLinking(wabt::Module* module);

// C definitions of the renamed imports (`Z_tessera_linkZ_i<k>`): function
// imports pack their arguments as raw 64-bit values and call the bound host
// function; global, memory and table imports return the bound storage.
// Needs the tessera_bits_* helpers of the main glue.
std::string LinkGlue(const ModuleInfo& info);

}  // namespace tessera::wasm

#endif  // TESSERA_WASM_LINK_GLUE_H_
