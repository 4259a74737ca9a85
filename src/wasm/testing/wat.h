// Test helper: WebAssembly text to binary through libwabt, so tests can
// state their modules inline.
#ifndef TESSERA_WASM_TESTING_WAT_H_
#define TESSERA_WASM_TESTING_WAT_H_

#include <cstdint>
#include <string_view>
#include <vector>

namespace tessera::wasm::testing {

// Every wabt feature is enabled, so tests can build modules the loader must
// refuse. Aborts the test binary with the parser's errors on bad text.
std::vector<uint8_t> Wat(std::string_view text);

// A minimal module satisfying the tessera_v1 shard ABI; `extra` is spliced
// into the module body (more funcs, exports, imports at the front if
// `imports` is given).
std::vector<uint8_t> ShardWat(std::string_view extra = "",
                              std::string_view imports = "",
                              std::string_view memory = "(memory 1)");

}  // namespace tessera::wasm::testing

#endif  // TESSERA_WASM_TESTING_WAT_H_
