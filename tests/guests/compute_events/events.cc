// Test compute module with an event export. The event handler logs
// "event <name> from <sourceModule> depth <depth> coalesced <n> payload
// <json|base64:...>" and keeps the last event's whole input JSON in the
// state blob; an event named "fail" fails with "event refused: fail", and
// one named "again" raises "again" once more (a cascade: the host stops
// it at the depth limit; the handler returns that call's error code name
// as its failure when it is refused). invoke "last" returns the blob; init
// and tick do nothing.
#include <tessera/compute.h>

#include <cstdint>
#include <string>

namespace {

namespace tc = tessera::compute;

void Init() {}
void Tick(std::uint32_t) {}

tessera::Result<std::string> Invoke(const tc::Invocation& call) {
  if (call.export_name == "last") {
    return tc::state_get().value_or(std::string("null"));
  }
  return tessera::Error("no export " + call.export_name);
}

tessera::Status OnEvent(const tc::Event& e) {
  std::string line = "event " + e.name + " from " + e.source_module +
                     " depth " + std::to_string(e.depth) + " coalesced " +
                     std::to_string(e.coalesced) + " payload ";
  line += e.payload_is_json ? "json" : "base64:" + e.payload_base64;
  tc::log_info(line);
  tc::HostStatus s = tc::state_set(e.input);
  if (!s.ok()) return s.status();
  if (e.name == "fail") return tessera::Error("event refused: fail");
  if (e.name == "again") {
    tc::HostStatus again = tc::emit_event("again", "{}");
    if (!again.ok()) return again.status();
  }
  return {};
}

}  // namespace

TESSERA_COMPUTE_MODULE(Init, Tick, Invoke, OnEvent);
