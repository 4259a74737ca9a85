// tessera/compute.h: the C++ SDK for compute modules, the tessera_compute_v1
// ABI (docs/compute-abi.md). A compute module is a set of functions the
// server runs in the same sandbox as shards: init once per fresh instance,
// tick on a schedule, invoke when a player or a management caller calls one
// of its exports, and optionally event when a compute event it listens for
// is raised.
//
//   #include <tessera/compute.h>
//
//   tessera::Status init() { return {}; }
//   tessera::Status tick(std::uint32_t dt_ms) { ...; return {}; }
//   tessera::Result<std::string> invoke(const tessera::compute::Invocation& c)
//   {
//     if (c.export_name == "echo") return std::string(c.input);
//     return tessera::Error("no export " + c.export_name);
//   }
//   TESSERA_COMPUTE_MODULE(init, tick, invoke);
//
// With an event handler, the four-argument form:
//
//   tessera::Status on_event(const tessera::compute::Event& e) { ... }
//   TESSERA_COMPUTE_MODULE(init, tick, invoke, on_event);
//
// Entry functions (name functions, not lambdas: a comma would split the
// macro argument), each with one of these signatures:
//   init:   tessera::Status ()                         or void ()
//   tick:   tessera::Status (std::uint32_t dt_ms)      or void (...)
//   invoke: tessera::Result<std::string> (const Invocation&)
//           or tessera::Result<std::string> (std::string_view input_json)
//           The bytes are the result: JSON reaches the caller as
//           `resultJson`, anything else as `resultBase64` (to_json helps).
//   event:  tessera::Status (const Event&)             or (std::string_view)
// A failed Status / Result fails the run with its message (the host cuts it
// to compute_abi::kMaxErrorBytes). panic() fails the run and kills the
// instance; a fresh one runs init next time (in-memory state is a cache:
// keep what must survive in the state blob).
//
// Host API (namespace tessera::compute): log, now_ms, random_bytes,
// state_get / state_set, emit_event, emit_channel, emit_spatial. Expected
// failures are values: every call that can fail returns a HostStatus with
// the ABI's code, its name (`error_code()`, e.g. "egress_budget") and the
// host's message, read from last_error.
//
// The app's data and shards (tessera/compute_data.h, included here):
// data::get / lookup / list / count / insert / update / remove and
// shards::create / get / list / ticket / send / publish / transfer / stop,
// each returning a Reply (the host's JSON reply, or a HostStatus whose
// error_code() is e.g. "ROW_NOT_FOUND"). An entry call that uses them runs
// in one transaction: it commits only if the entry succeeds.
//
// Build: the same recipe as a shard (sdk/cpp/BUILD.md): the module's *.cc,
// the SDK's operator_new.cc and wasi_stubs.c, wasm-ld with crt1-reactor.o.
// TESSERA_COMPUTE_MODULE defines the symbol the SDK's runtime objects log
// through (tessera_v1_log) as a forwarder to tessera_compute_v1.log, so the
// module's only imports are tessera_compute_v1.* (printf lines, panics and
// out-of-memory messages become the module's log lines). tessera::log and
// tessera::panic from tessera/log.h work too and end up in the same place.
//
// Threading: a module is single-threaded; the host makes one entry call at a
// time. wasm32 builds only.
#ifndef TESSERA_COMPUTE_H_
#define TESSERA_COMPUTE_H_

#if !defined(__wasm__)
#error "tessera/compute.h builds wasm32 compute modules (sdk/cpp/BUILD.md)"
#endif

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "tessera/codec.h"
#include "tessera/compute_abi.h"
#include "tessera/detail/compute_imports.h"
#include "tessera/detail/runtime.h"
#include "tessera/json_reader.h"
#include "tessera/log.h"
#include "tessera/result.h"

namespace tessera::compute {

namespace abi = ::tessera::compute_abi;
using LogLevel = abi::LogLevel;

// ---- Host API -------------------------------------------------------------

// The outcome of a host call that can fail. ok(): the call succeeded and
// count() is what it returned (emit_channel / emit_spatial: connections
// reached; otherwise 0). Otherwise code() is a negative
// compute_abi::ErrorCode, error_code() its name in last_error ("too_large",
// "stale_state", "egress_budget", ...) and message() the host's reason.
class [[nodiscard]] HostStatus {
 public:
  HostStatus() = default;
  static HostStatus Ok(std::int32_t count) {
    HostStatus s;
    s.count_ = count;
    return s;
  }
  static HostStatus Failed(std::int32_t code, std::string error_code,
                           std::string message) {
    HostStatus s;
    s.code_ = code;
    s.error_code_ = std::move(error_code);
    s.message_ = std::move(message);
    return s;
  }

  bool ok() const { return code_ == 0; }
  std::int32_t code() const { return code_; }
  std::int32_t count() const { return count_; }
  const std::string& error_code() const { return error_code_; }
  const std::string& message() const { return message_; }
  // As a tessera::Status: "<error_code>: <message>" when failed, so an entry
  // function can `return s.status();`.
  Status status() const {
    if (ok()) return Status();
    return Error(error_code_ + ": " + message_);
  }

 private:
  std::int32_t code_ = 0;
  std::int32_t count_ = 0;
  std::string error_code_;
  std::string message_;
};

namespace detail {

// {"code","message"} of last_error, or a fallback for `code` when the host
// recorded none.
inline HostStatus host_failure(std::int32_t code) {
  std::string text;
  const std::int32_t size = tessera_compute_v1_last_error(nullptr, 0);
  if (size > 0) {
    text.resize(static_cast<std::size_t>(size));
    tessera_compute_v1_last_error(text.data(), size);
  }
  std::string name = "error";
  std::string message;
  json::Reader r(text);
  std::string key;
  if (!text.empty() && r.begin_object()) {
    while (r.object_next(key)) {
      if (key == "code") {
        if (!r.read_string(name)) break;
      } else if (key == "message") {
        if (!r.read_string(message)) break;
      } else if (!r.skip()) {
        break;
      }
    }
  }
  if (message.empty())
    message = "host call failed with code " + std::to_string(code);
  return HostStatus::Failed(code, std::move(name), std::move(message));
}

inline HostStatus host_status(std::int32_t result) {
  if (result >= 0) return HostStatus::Ok(result);
  return host_failure(result);
}

inline std::int32_t len32(std::string_view s) {
  return static_cast<std::int32_t>(s.size());
}

}  // namespace detail

// One log line in the module's logs (levels: compute_abi::LogLevel). A
// level above kLogError is logged as kLogError: only panic() logs kLogPanic.
inline void log(LogLevel level, std::string_view text) {
  const LogLevel l = level > abi::kLogError ? abi::kLogError : level;
  tessera_compute_v1_log(static_cast<std::int32_t>(l), text.data(),
                         detail::len32(text));
}
inline void log_debug(std::string_view text) { log(abi::kLogDebug, text); }
inline void log_info(std::string_view text) { log(abi::kLogInfo, text); }
inline void log_warn(std::string_view text) { log(abi::kLogWarn, text); }
inline void log_error(std::string_view text) { log(abi::kLogError, text); }

// Fails the run and kills the instance (logs `text` at kLogPanic, then
// traps). A fresh instance runs init on the next call.
[[noreturn]] inline void panic(std::string_view text) {
  tessera_compute_v1_log(abi::kLogPanic, text.data(), detail::len32(text));
  __builtin_trap();
}

// Unix time in milliseconds, from the host.
inline std::int64_t now_ms() { return tessera_compute_v1_now_ms(); }

// `n` bytes from the host's CSPRNG (asked for in pieces of at most
// compute_abi::kMaxRandomBytes).
inline std::string random_bytes(std::size_t n) {
  std::string out(n, '\0');
  std::size_t done = 0;
  while (done < n) {
    std::size_t part = n - done;
    if (part > abi::kMaxRandomBytes) part = abi::kMaxRandomBytes;
    tessera_compute_v1_random_bytes(out.data() + done,
                                    static_cast<std::int32_t>(part));
    done += part;
  }
  return out;
}

// The module's durable state blob; nullopt when none was ever set (or the
// host cannot read it now: then last_error says why). Two host calls: the
// size, then the bytes.
inline std::optional<std::string> state_get() {
  const std::int32_t size = tessera_compute_v1_state_get(nullptr, 0);
  if (size < 0) return std::nullopt;
  std::string blob(static_cast<std::size_t>(size), '\0');
  if (size == 0) return blob;
  const std::int32_t got = tessera_compute_v1_state_get(blob.data(), size);
  if (got < 0) return std::nullopt;
  if (got < size) blob.resize(static_cast<std::size_t>(got));
  return blob;
}

// Replaces the blob (at most compute_abi::kMaxStateBytes). "stale_state":
// another instance (the tick-lease holder) wrote it since this instance
// read it; the write was dropped (read it again to merge).
inline HostStatus state_set(std::string_view bytes) {
  return detail::host_status(
      tessera_compute_v1_state_set(bytes.data(), detail::len32(bytes)));
}

// Raises compute event `name` for the modules' event triggers (payload:
// JSON reaches them as `payload`, other bytes as `payloadBase64`).
inline HostStatus emit_event(std::string_view name, std::string_view payload) {
  return detail::host_status(
      tessera_compute_v1_emit_event(name.data(), detail::len32(name),
                                    payload.data(), detail::len32(payload)));
}

// A NOTIFY to the players of `channel` ("all", "shard:<id>", "kind:<kind>",
// "group:<name>", "player:<id>"); payload at most
// compute_abi::kMaxNotifyPayloadBytes. count(): connections reached.
inline HostStatus emit_channel(std::string_view channel,
                               std::string_view payload) {
  return detail::host_status(
      tessera_compute_v1_emit_channel(channel.data(), detail::len32(channel),
                                      payload.data(), detail::len32(payload)));
}

// A NOTIFY to the players of shard `shard` whose interest-area centre is
// within `radius` of (x, y). count(): connections reached.
inline HostStatus emit_spatial(std::string_view shard, float x, float y,
                               float radius, std::string_view payload) {
  return detail::host_status(tessera_compute_v1_emit_spatial(
      shard.data(), detail::len32(shard), x, y, radius, payload.data(),
      detail::len32(payload)));
}

// ---- Entry inputs ---------------------------------------------------------

// The invoke input {"export","params","callerUserId","callerShardId"},
// parsed.
struct Invocation {
  std::string export_name;
  std::string caller_user_id;  // "" for management callers
  // The shard whose keyed call (or onStop) runs this invoke; "" otherwise.
  std::string caller_shard_id;
  std::string_view input;  // the whole input JSON

  // Decodes "params" into a TESSERA_FIELDS struct (tessera/fields.h):
  // unknown keys are skipped, missing ones keep their defaults.
  template <class T>
  Result<T> params() const {
    T out{};
    json::Reader r(input);
    std::string key;
    if (!r.begin_object()) return Error("invoke input: " + r.error());
    while (r.object_next(key)) {
      if (key == "params") {
        if (!::tessera::decode_value(r, out)) {
          return Error("params: " + r.error());
        }
      } else if (!r.skip()) {
        break;
      }
    }
    if (r.failed()) return Error("invoke input: " + r.error());
    return out;
  }
};

// The event input (docs/compute-abi.md "Events"), parsed.
struct Event {
  std::string name;
  std::string source_module;
  std::string flow_id;
  std::int64_t depth = 0;
  std::int64_t coalesced = 0;  // events folded into this one (debounceMs)
  bool payload_is_json = false;
  std::string payload_base64;  // when the payload is not JSON
  std::string_view input;      // the whole input JSON

  // Decodes the JSON "payload" into `T` (a TESSERA_FIELDS struct or any
  // decodable type).
  template <class T>
  Result<T> payload() const {
    T out{};
    json::Reader r(input);
    std::string key;
    if (!r.begin_object()) return Error("event input: " + r.error());
    while (r.object_next(key)) {
      if (key == "payload") {
        if (!::tessera::decode_value(r, out)) {
          return Error("payload: " + r.error());
        }
        return out;
      }
      if (!r.skip()) break;
    }
    if (r.failed()) return Error("event input: " + r.error());
    return Error("the event has no JSON payload");
  }
};

// `value` encoded as JSON (a TESSERA_FIELDS struct, a map, a string, ...),
// e.g. an invoke result.
template <class T>
std::string to_json(const T& value) {
  std::string out;
  ::tessera::encode(::tessera::abi::kCodecJson, value, out);
  return out;
}

}  // namespace tessera::compute

#include "tessera/compute_data.h"
#include "tessera/detail/compute_exports.h"

#endif  // TESSERA_COMPUTE_H_
