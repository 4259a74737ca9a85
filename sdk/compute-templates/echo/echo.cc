// The echo template (C++): every invoke returns its input, the invoke JSON
// {"export", "params", "callerUserId"} as received, so the caller gets it
// back as resultJson. A starting point for a callable module: switch on
// call.export_name and decode call.params<T>() (tessera/fields.h).
#include <cstdint>
#include <string>

#include "tessera/compute.h"

namespace {

namespace tc = tessera::compute;

void Init() { tc::log_info("echo init"); }

void Tick(std::uint32_t) {}

tessera::Result<std::string> Invoke(const tc::Invocation& call) {
  return std::string(call.input);
}

}  // namespace

TESSERA_COMPUTE_MODULE(Init, Tick, Invoke);
