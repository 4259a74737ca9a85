#include "guest/host_functions.h"

namespace tessera::guest {

std::vector<wasm::HostFuncSpec> HostFunctionTable::Specs() const {
  std::vector<wasm::HostFuncSpec> specs;
  specs.reserve(functions_.size());
  for (const HostFunction& f : functions_) specs.push_back({f.name, f.sig});
  return specs;
}

Result<std::vector<wasm::HostImport>> HostFunctionTable::Bind(
    const wasm::ModuleInfo& info, const std::string& import_module,
    void* user) const {
  std::vector<wasm::HostImport> bound;
  bound.reserve(info.import_types.size());
  for (const wasm::ImportEntry& imp : info.import_types) {
    const std::string name = imp.module + "." + imp.field;
    const HostFunction* found = nullptr;
    if (imp.module == import_module) {
      for (const HostFunction& f : functions_) {
        if (f.name == imp.field) found = &f;
      }
    }
    if (found == nullptr || imp.type.kind != wasm::ExternKind::kFunc) {
      return Status(StatusCode::kRefused,
                    "imports `" + name + "`, which this host does not provide");
    }
    if (!(imp.type.func == found->sig)) {
      return Status(StatusCode::kRefused,
                    "imports " + name + " with signature " +
                        wasm::SigToString(imp.type.func) + ", expected " +
                        wasm::SigToString(found->sig));
    }
    bound.push_back(wasm::HostImport{found->fn, user});
  }
  return bound;
}

}  // namespace tessera::guest
