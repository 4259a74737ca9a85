// Test compute module: a counter kept in the state blob (decimal text).
// init logs "init"; every tick reads the blob, adds 1, writes it back and
// logs "tick <n> dt <dt_ms>". Invoke exports:
//   "get"  -> {"count": n, "stored": bool}   (the blob as read now)
//   "save" -> params {"value": int}: state_set(value); returns
//             {"ok", "code", "errorCode", "message"} of the call (a stale
//             write shows here as errorCode "stale_state")
#include <tessera/compute.h>

#include <cstdint>
#include <string>

namespace {

namespace tc = tessera::compute;

struct SaveParams {
  std::int64_t value = 0;
};
TESSERA_FIELDS(SaveParams, value);

struct Count {
  std::int64_t count = 0;
  bool stored = false;
};
TESSERA_FIELDS(Count, count, stored);

struct Outcome {
  bool ok = false;
  std::int32_t code = 0;
  std::string errorCode;
  std::string message;
};
TESSERA_FIELDS(Outcome, ok, code, errorCode, message);

Count Read() {
  Count c;
  std::optional<std::string> blob = tc::state_get();
  if (blob) {
    c.stored = true;
    c.count = std::strtoll(blob->c_str(), nullptr, 10);
  }
  return c;
}

tessera::Status Init() {
  tc::log_info("init");
  return {};
}

tessera::Status Tick(std::uint32_t dt_ms) {
  Count c = Read();
  ++c.count;
  tc::HostStatus s = tc::state_set(std::to_string(c.count));
  if (!s.ok()) return s.status();
  tc::log_info("tick " + std::to_string(c.count) + " dt " +
               std::to_string(dt_ms));
  return {};
}

tessera::Result<std::string> Invoke(const tc::Invocation& call) {
  if (call.export_name == "get") return tc::to_json(Read());
  if (call.export_name == "save") {
    tessera::Result<SaveParams> p = call.params<SaveParams>();
    if (!p.ok()) return tessera::Error(p.error());
    tc::HostStatus s = tc::state_set(std::to_string(p->value));
    return tc::to_json(Outcome{s.ok(), s.code(), s.error_code(), s.message()});
  }
  return tessera::Error("no export " + call.export_name);
}

}  // namespace

TESSERA_COMPUTE_MODULE(Init, Tick, Invoke);
