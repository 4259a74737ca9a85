// Test compute module: failures that kill the instance. tick traps
// (unreachable, no log line). Invoke exports:
//   "panic"    -> panics "boom in invoke"
//   "bad_ptr"  -> calls state_set with a (ptr, len) past the end of memory
//                 (the host traps the call)
//   "bad_log"  -> calls log with a (ptr, len) past the end of memory
//   "ok"       -> "fine"
// init returns at once.
#include <tessera/compute.h>

#include <cstdint>
#include <string>

namespace {

namespace tc = tessera::compute;

void Init() {}

void Tick(std::uint32_t) { __builtin_trap(); }

tessera::Result<std::string> Invoke(const tc::Invocation& call) {
  if (call.export_name == "panic") tc::panic("boom in invoke");
  // 0xfffffff0 + 64 lies past any memory a 32-bit module can have.
  const char* far = reinterpret_cast<const char*>(std::uintptr_t{0xfffffff0u});
  if (call.export_name == "bad_ptr") {
    tessera_compute_v1_state_set(far, 64);
    return std::string("survived");
  }
  if (call.export_name == "bad_log") {
    tessera_compute_v1_log(1, far, 64);
    return std::string("survived");
  }
  if (call.export_name == "ok") return std::string("fine");
  return tessera::Error("no export " + call.export_name);
}

}  // namespace

TESSERA_COMPUTE_MODULE(Init, Tick, Invoke);
