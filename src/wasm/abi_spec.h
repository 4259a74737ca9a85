// A guest ABI described as data: what a module loaded for it may import and
// must (or may) export. The loader checks a module against the AbiSpec it
// is given; wasm/ itself knows no ABI. Each kind of program (shards now,
// compute functions and realms next) declares its own spec in its layer
// (shard/shard_abi.h) and binds the host functions it lists at
// instantiation (guest/host_functions.h).
#ifndef TESSERA_WASM_ABI_SPEC_H_
#define TESSERA_WASM_ABI_SPEC_H_

#include <cstdint>
#include <string>
#include <vector>

#include "wasm/module_info.h"

namespace tessera::wasm {

// A function the host provides as `<import_module>.<name>`.
struct HostFuncSpec {
  std::string name;
  FuncSig sig;
};

// A function export the host calls.
struct ExportSpec {
  std::string name;
  FuncSig sig;
  bool required = true;
};

struct AbiSpec {
  // The one import module, versioned: "<import_prefix><version>", e.g.
  // "tessera_v1". Imports from the same prefix with another version are
  // refused as "unknown ABI version".
  std::string import_prefix;
  uint32_t version = 1;
  std::vector<HostFuncSpec> host_functions;
  // The export whose presence says "built for this ABI", e.g.
  // "tessera_abi_v1" (`marker_prefix` + version, signature () -> ()).
  // Another version's marker is refused as "unknown ABI version".
  std::string marker_prefix;
  std::vector<ExportSpec> exports;
  // Whether the linear memory must be exported as "memory".
  bool memory_export = true;
  // What kind of module this is, for messages: "tessera shard module".
  std::string module_noun;
  // How to build a conforming module, appended to refusals of foreign
  // imports: "build with the tessera SDK's recipe, ... docs/guest-abi.md".
  std::string build_hint;

  std::string import_module() const {
    return import_prefix + std::to_string(version);
  }
  std::string marker() const { return marker_prefix + std::to_string(version); }
};

}  // namespace tessera::wasm

#endif  // TESSERA_WASM_ABI_SPEC_H_
