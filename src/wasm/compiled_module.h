// A compiled, dlopened module: entry points of the generated glue.
// Immutable after load and shared by every Instance of the module.
#ifndef TESSERA_WASM_COMPILED_MODULE_H_
#define TESSERA_WASM_COMPILED_MODULE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "wasm/module_info.h"
#include "wasm/rt/wasm-rt.h"

namespace tessera::wasm {

class CompiledModule {
 public:
  using Thunk = void (*)(void* instance, const uint64_t* args,
                         uint64_t* results);

  ~CompiledModule();

  ModuleInfo info;
  std::string so_path;
  void* dl_handle = nullptr;
  size_t instance_size = 0;
  void (*instantiate)(void* instance, void* host) = nullptr;
  void (*free_instance)(void* instance) = nullptr;
  wasm_rt_memory_t* (*memory)(void* instance) = nullptr;
  uint64_t* (*fuel)(void* instance) = nullptr;        // null without fuel
  uint32_t* (*interrupt)(void* instance) = nullptr;   // null without fuel
  // Storage of export k (index into info.exports): its global value,
  // wasm_rt_memory_t or table; null for functions.
  void* (*export_ptr)(void* instance, uint32_t k) = nullptr;
  std::vector<Thunk> thunks;  // parallel to info.funcs; null = not callable
  // The module has imports: they go through the link glue.
  bool linkable = false;
};

}  // namespace tessera::wasm

#endif  // TESSERA_WASM_COMPILED_MODULE_H_
