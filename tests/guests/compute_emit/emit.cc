// Test compute module: every host call that sends something or can fail.
// Each invoke export makes one call and returns its outcome as JSON
// {"ok", "code", "count", "errorCode", "message", "lastError"} (lastError:
// the raw last_error JSON the host holds after the call). Exports and
// params:
//   "event"    {"name", "payload"}            emit_event
//   "channel"  {"channel", "payload"}         emit_channel
//   "spatial"  {"shard", "x", "y", "radius", "payload"}  emit_spatial
//   "oversize" {"size": int, "target": "channel"|"spatial"|"event"|"state"}
//              a payload (or state blob) of `size` bytes of 'p'
//   "random"   {"n": int}   -> {"hex": "..."} n bytes from random_bytes
//   "now"                   -> {"now": now_ms()}
//   "state"                 -> {"found": bool, "bytes": "..."} state_get
//   "log"      {"level": int, "text"} logs the line, returns {"ok": true}
// tick emits "tick" on channel "all" each time; init does nothing.
#include <tessera/compute.h>

#include <cstdint>
#include <string>

namespace {

namespace tc = tessera::compute;

struct Params {
  std::string name, payload, channel, shard, target, text;
  double x = 0, y = 0, radius = 0;
  std::int64_t size = 0, n = 0, level = 1;
};
TESSERA_FIELDS(Params, name, payload, channel, shard, target, text, x, y,
               radius, size, n, level);

struct Outcome {
  bool ok = false;
  std::int32_t code = 0;
  std::int32_t count = 0;
  std::string errorCode;
  std::string message;
  std::string lastError;
};
TESSERA_FIELDS(Outcome, ok, code, count, errorCode, message, lastError);

struct Hex {
  std::string hex;
};
TESSERA_FIELDS(Hex, hex);

struct Now {
  std::int64_t now = 0;
};
TESSERA_FIELDS(Now, now);

struct State {
  bool found = false;
  std::string bytes;
};
TESSERA_FIELDS(State, found, bytes);

std::string Report(const tc::HostStatus& s) {
  Outcome o{s.ok(), s.code(), s.count(), s.error_code(), s.message(), {}};
  const std::int32_t n = tessera_compute_v1_last_error(nullptr, 0);
  o.lastError.resize(static_cast<std::size_t>(n));
  if (n > 0) tessera_compute_v1_last_error(o.lastError.data(), n);
  return tc::to_json(o);
}

void Init() {}

tessera::Status Tick(std::uint32_t) {
  tc::HostStatus s = tc::emit_channel("all", "tick");
  return s.status();
}

tessera::Result<std::string> Invoke(const tc::Invocation& call) {
  tessera::Result<Params> pr = call.params<Params>();
  if (!pr.ok()) return tessera::Error(pr.error());
  const Params& p = *pr;
  const std::string& e = call.export_name;
  const float x = static_cast<float>(p.x), y = static_cast<float>(p.y),
              r = static_cast<float>(p.radius);
  if (e == "event") return Report(tc::emit_event(p.name, p.payload));
  if (e == "channel") return Report(tc::emit_channel(p.channel, p.payload));
  if (e == "spatial") {
    return Report(tc::emit_spatial(p.shard, x, y, r, p.payload));
  }
  if (e == "oversize") {
    const std::string big(static_cast<std::size_t>(p.size), 'p');
    if (p.target == "spatial") {
      return Report(tc::emit_spatial("arena", 0, 0, 10, big));
    }
    if (p.target == "event") return Report(tc::emit_event("big", big));
    if (p.target == "state") return Report(tc::state_set(big));
    return Report(tc::emit_channel("all", big));
  }
  if (e == "random") {
    static const char kDigits[] = "0123456789abcdef";
    const std::string bytes = tc::random_bytes(static_cast<std::size_t>(p.n));
    Hex h;
    for (unsigned char c : bytes) {
      h.hex += kDigits[c >> 4];
      h.hex += kDigits[c & 15];
    }
    return tc::to_json(h);
  }
  if (e == "now") return tc::to_json(Now{tc::now_ms()});
  if (e == "state") {
    std::optional<std::string> blob = tc::state_get();
    return tc::to_json(State{blob.has_value(), blob.value_or("")});
  }
  if (e == "log") {
    tc::log(static_cast<tc::LogLevel>(p.level), p.text);
    return std::string("{\"ok\":true}");
  }
  return tessera::Error("no export " + e);
}

}  // namespace

TESSERA_COMPUTE_MODULE(Init, Tick, Invoke);
