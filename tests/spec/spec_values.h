// Values of spec commands: arguments to raw 64-bit values, and results
// compared bit for bit (NaNs by the kind the script asks for).
#ifndef TESSERA_TESTS_SPEC_SPEC_VALUES_H_
#define TESSERA_TESTS_SPEC_SPEC_VALUES_H_

#include <cstdint>
#include <string>

#include "common/status.h"
#include "wast_script.h"

namespace tessera::spec {

// The raw value Instance::Call takes for `v` (i32 zero-extended, floats by
// their bits, a null reference as 0). Errors: kInvalidArgument for a type
// or value the runner cannot pass.
Result<uint64_t> ToRaw(const Value& v);

// Whether the raw result `got` is what `expected` says: equal bits, or
// for "nan:canonical" a NaN with only the quiet bit in its payload (any
// sign), for "nan:arithmetic" any NaN with the quiet bit set.
bool Matches(const Value& expected, uint64_t got);

// "i32:42", "f32:0x7fc00000 (nan)": for failure messages.
std::string Describe(const std::string& type, uint64_t raw);

}  // namespace tessera::spec

#endif  // TESSERA_TESTS_SPEC_SPEC_VALUES_H_
