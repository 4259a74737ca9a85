// IR passes applied to every module before C generation.
#ifndef TESSERA_WASM_INSTRUMENT_H_
#define TESSERA_WASM_INSTRUMENT_H_

#include <cstdint>

namespace wabt {
struct Module;
}

namespace tessera::wasm {

// Export names of the globals the fuel pass adds (the generated glue reads
// them; guests cannot see these names because all exports are renamed).
inline constexpr char kFuelExport[] = "fuel";
inline constexpr char kInterruptExport[] = "intr";
// Name of the interrupt global as it appears in generated C
// (`instance->w2c_tessera_intr`), which codegen rewrites to a volatile read.
inline constexpr char kInterruptCName[] = "w2c_tessera_intr";

// The fuel global's initial value: what a start function (test-only
// modules; shards have none) runs with. The host sets the real budget
// right after instantiation.
inline constexpr uint64_t kInstantiationFuel = uint64_t{1} << 62;

// Adds a mutable i64 fuel global and a mutable i32 interrupt global, and at
// every function entry and loop header charges the static instruction count
// of that region: `fuel -= n; if (fuel < 0 | interrupt) unreachable`. The
// count is a pure function of the module, so fuel use is deterministic.
void InstrumentFuel(wabt::Module* module);

// Lowers the memory's maximum to `cap_pages` (when it has none or a larger
// one). The caller has already refused an initial size above the cap.
void CapMemory(wabt::Module* module, uint32_t cap_pages);

}  // namespace tessera::wasm

#endif  // TESSERA_WASM_INSTRUMENT_H_
