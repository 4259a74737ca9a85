// Test-only: the compute test modules under tests/guests/compute_* (built by
// CMake with the C++ SDK, tessera/compute.h), loaded for the compute ABI.
// Link tessera_compute_test_guests (it depends on every module's target).
#ifndef TESSERA_COMPUTE_COMPUTE_TEST_GUESTS_H_
#define TESSERA_COMPUTE_COMPUTE_TEST_GUESTS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "wasm/loader.h"

namespace tessera::compute::testing {

// The names: counter, echo, spin, busy, trap, emit, events, membomb (see
// tests/guests/README.md "Compute modules") and shop (the C++ example,
// examples/compute/compute/shop).
const std::vector<std::string>& ComputeGuestNames();

// The built module's bytes. Errors: kNotFound for an unknown name, kIo when
// the file was not built.
Result<std::vector<uint8_t>> ComputeGuestBytes(std::string_view name);

// Loads module `name` with ComputeCheckOptions(memory_mb) and fuel
// instrumentation; cached per (name, memory_mb) for the process.
Result<std::shared_ptr<const wasm::CompiledModule>> LoadComputeGuest(
    std::string_view name, uint32_t memory_mb = 64);

}  // namespace tessera::compute::testing

#endif  // TESSERA_COMPUTE_COMPUTE_TEST_GUESTS_H_
