// The host functions of one guest ABI, bound by name to a module's imports
// at instantiation. A new host function is a new entry here and in the
// ABI's spec (wasm/abi_spec.h), not an edit of wasm/.
#ifndef TESSERA_GUEST_HOST_FUNCTIONS_H_
#define TESSERA_GUEST_HOST_FUNCTIONS_H_

#include <string>
#include <vector>

#include "common/status.h"
#include "wasm/abi_spec.h"
#include "wasm/instance.h"
#include "wasm/module_info.h"

namespace tessera::guest {

struct HostFunction {
  std::string name;  // imported as <import module>.<name>
  wasm::FuncSig sig;
  wasm::HostCallFn fn = nullptr;
};

class HostFunctionTable {
 public:
  HostFunctionTable() = default;
  explicit HostFunctionTable(std::vector<HostFunction> functions)
      : functions_(std::move(functions)) {}

  const std::vector<HostFunction>& functions() const { return functions_; }

  // The names and signatures, for the ABI's spec (what the loader allows).
  std::vector<wasm::HostFuncSpec> Specs() const;

  // One binding per import of `info` (in import order), each import looked
  // up by name in this table, with `user` handed to the function. Errors:
  // kRefused naming the import when it is not from `import_module`, not in
  // the table, or has another signature (the loader refuses such modules
  // first; this guards a table and a spec that disagree).
  Result<std::vector<wasm::HostImport>> Bind(const wasm::ModuleInfo& info,
                                             const std::string& import_module,
                                             void* user) const;

 private:
  std::vector<HostFunction> functions_;
};

}  // namespace tessera::guest

#endif  // TESSERA_GUEST_HOST_FUNCTIONS_H_
