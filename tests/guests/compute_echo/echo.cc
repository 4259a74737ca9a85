// Test compute module: echo. Invoke exports:
//   "echo"    -> the whole invoke input JSON, as received
//   "caller"  -> {"caller": callerUserId, "export": export}
//   "bytes"   -> three bytes that are not JSON: 0x00 0xff 0x01
//   "fail"    -> fails with "echo failed: <params.reason>"
//   "big"     -> params {"n": int}: n bytes of 'x' (not JSON)
// init and tick do nothing.
#include <tessera/compute.h>

#include <cstdint>
#include <string>

namespace {

namespace tc = tessera::compute;

struct FailParams {
  std::string reason;
};
TESSERA_FIELDS(FailParams, reason);

struct BigParams {
  std::int64_t n = 0;
};
TESSERA_FIELDS(BigParams, n);

struct Caller {
  std::string caller;
  std::string exportName;
};
TESSERA_FIELDS(Caller, caller, exportName);

void Init() {}
void Tick(std::uint32_t) {}

tessera::Result<std::string> Invoke(const tc::Invocation& call) {
  if (call.export_name == "echo") return std::string(call.input);
  if (call.export_name == "caller") {
    return tc::to_json(Caller{call.caller_user_id, call.export_name});
  }
  if (call.export_name == "bytes") return std::string("\x00\xff\x01", 3);
  if (call.export_name == "fail") {
    tessera::Result<FailParams> p = call.params<FailParams>();
    if (!p.ok()) return tessera::Error(p.error());
    return tessera::Error("echo failed: " + p->reason);
  }
  if (call.export_name == "big") {
    tessera::Result<BigParams> p = call.params<BigParams>();
    if (!p.ok()) return tessera::Error(p.error());
    return std::string(static_cast<std::size_t>(p->n), 'x');
  }
  return tessera::Error("no export " + call.export_name);
}

}  // namespace

TESSERA_COMPUTE_MODULE(Init, Tick, Invoke);
