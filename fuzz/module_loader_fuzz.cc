// libFuzzer target: the module loader's untrusted-bytes path (read,
// validate, police, instrument, generate C). Compilation and execution are
// not fuzzed here (they need a C compiler per input).
#include <cstddef>
#include <cstdint>
#include <span>

#include "shard/shard_abi.h"
#include "wasm/abi_spec.h"
#include "wasm/codegen.h"
#include "wasm/instrument.h"
#include "wasm/parse.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera::wasm;
  for (const AbiSpec* abi : {&tessera::shard::ShardAbiSpec(),
                             static_cast<const AbiSpec*>(nullptr)}) {
    CheckOptions options;
    options.abi = abi;
    options.memory_cap_pages = 1024;
    auto parsed = ParseModule(std::span<const uint8_t>(data, size), options);
    if (!parsed.ok()) continue;
    InstrumentFuel(parsed->ir.get());
    CapMemory(parsed->ir.get(), 1024);
    auto c = GenerateC(parsed->ir.get(), parsed->info, true,
                       !parsed->info.import_types.empty());
    (void)c;
  }
  return 0;
}
