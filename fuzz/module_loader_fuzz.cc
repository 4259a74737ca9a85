// libFuzzer target: the module loader's untrusted-bytes path (read,
// validate, police, instrument, generate C). Compilation and execution are
// not fuzzed here (they need a C compiler per input).
#include <cstddef>
#include <cstdint>
#include <span>

#include "wasm/codegen.h"
#include "wasm/instrument.h"
#include "wasm/parse.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera::wasm;
  for (ImportPolicy policy : {ImportPolicy::kShard, ImportPolicy::kBare}) {
    CheckOptions options;
    options.policy = policy;
    options.memory_cap_pages = 1024;
    auto parsed = ParseModule(std::span<const uint8_t>(data, size), options);
    if (!parsed.ok()) continue;
    InstrumentFuel(parsed->ir.get());
    CapMemory(parsed->ir.get(), 1024);
    auto c = GenerateC(parsed->ir.get(), parsed->info, true);
    (void)c;
  }
  return 0;
}
