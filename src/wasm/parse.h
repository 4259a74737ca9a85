// Internal to src/wasm: reading a module into wabt IR and applying the
// options (the ABI spec, linking, the memory cap). CheckModule (loader.h) is a thin wrapper.
#ifndef TESSERA_WASM_PARSE_H_
#define TESSERA_WASM_PARSE_H_

#include <memory>
#include <span>

#include "common/status.h"
#include "wasm/loader.h"
#include "wasm/module_info.h"

namespace wabt {
struct Module;
}

namespace tessera::wasm {

struct ParsedModule {
  std::unique_ptr<wabt::Module> ir;
  ModuleInfo info;
  ParsedModule();
  ParsedModule(ParsedModule&&) noexcept;
  ~ParsedModule();
};

// Reads and validates `wasm`, then checks it against `options`.
Result<ParsedModule> ParseModule(std::span<const uint8_t> wasm,
                                 const CheckOptions& options);

}  // namespace tessera::wasm

#endif  // TESSERA_WASM_PARSE_H_
