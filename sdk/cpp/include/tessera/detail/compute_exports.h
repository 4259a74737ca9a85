// TESSERA_COMPUTE_MODULE(init, tick, invoke[, event]): the exports of the
// tessera_compute_v1 ABI (docs/compute-abi.md) for a module's entry
// functions (tessera/compute.h says which signatures they may have), and
// the adapters they call. Included by tessera/compute.h; use the macro once
// per module, at global namespace scope.
//
// Buffers: the host writes an entry's input into a tessera_alloc buffer,
// which the entry frees when it returns; the output buffer (an invoke's
// result or a failed entry's error text) belongs to the module and stays
// valid until the next entry call.
#ifndef TESSERA_DETAIL_COMPUTE_EXPORTS_H_
#define TESSERA_DETAIL_COMPUTE_EXPORTS_H_

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "tessera/compute.h"

namespace tessera::compute::detail {

using ::tessera::detail::ArgBuffer;
using ::tessera::detail::GuestLen;
using ::tessera::detail::GuestPtr;

inline std::string& output() { return ::tessera::detail::runtime().output; }

// A failed entry: its text goes to the output buffer; returns 1.
inline std::int32_t entry_failed(std::string_view text) {
  output().assign(text.data(), text.size());
  return 1;
}

inline std::int32_t status_code(const Status& s) {
  return s.ok() ? 0 : entry_failed(s.message());
}

// Runs `f()` (void or Status).
template <class F, class... Args>
std::int32_t run_status(F& f, Args&&... args) {
  output().clear();
  if constexpr (std::is_void_v<std::invoke_result_t<F&, Args...>>) {
    f(std::forward<Args>(args)...);
    return 0;
  } else {
    return status_code(f(std::forward<Args>(args)...));
  }
}

inline Result<Invocation> parse_invocation(std::string_view input) {
  Invocation call;
  call.input = input;
  json::Reader r(input);
  std::string key;
  if (!r.begin_object()) return Error("invoke input: " + r.error());
  while (r.object_next(key)) {
    bool ok = true;
    if (key == "export") {
      ok = r.read_string(call.export_name);
    } else if (key == "callerUserId") {
      ok = r.read_string(call.caller_user_id);
    } else if (key == "callerShardId") {
      ok = r.peek() == ::tessera::Kind::kNull
               ? r.read_null()
               : r.read_string(call.caller_shard_id);
    } else {
      ok = r.skip();
    }
    if (!ok) break;
  }
  if (r.failed() || !r.finish()) return Error("invoke input: " + r.error());
  return call;
}

inline Result<Event> parse_event(std::string_view input) {
  Event e;
  e.input = input;
  json::Reader r(input);
  std::string key;
  if (!r.begin_object()) return Error("event input: " + r.error());
  while (r.object_next(key)) {
    bool ok = true;
    if (key == "name") {
      ok = r.read_string(e.name);
    } else if (key == "sourceModule") {
      ok = r.read_string(e.source_module);
    } else if (key == "flowId") {
      ok = r.read_string(e.flow_id);
    } else if (key == "depth") {
      ok = r.read_int64(e.depth);
    } else if (key == "coalesced") {
      ok = r.read_int64(e.coalesced);
    } else if (key == "payloadBase64") {
      ok = r.read_string(e.payload_base64);
    } else if (key == "payload") {
      e.payload_is_json = r.peek() != ::tessera::Kind::kNull;
      ok = r.skip();
    } else {
      ok = r.skip();
    }
    if (!ok) break;
  }
  if (r.failed() || !r.finish()) return Error("event input: " + r.error());
  return e;
}

template <class F>
std::int32_t run_invoke(F& f, GuestPtr ptr, GuestLen len) {
  const ArgBuffer in(ptr, len);
  output().clear();
  Result<std::string> result = Error("");
  if constexpr (std::is_invocable_v<F&, const Invocation&>) {
    Result<Invocation> call = parse_invocation(in.view());
    if (!call.ok()) return entry_failed(call.error());
    result = f(*call);
  } else {
    static_assert(std::is_invocable_v<F&, std::string_view>,
                  "TESSERA_COMPUTE_MODULE: invoke takes "
                  "(const tessera::compute::Invocation&) or "
                  "(std::string_view)");
    result = f(in.view());
  }
  if (!result.ok()) return entry_failed(result.error());
  output() = std::move(result).value();
  return 0;
}

template <class F>
std::int32_t run_event(F& f, GuestPtr ptr, GuestLen len) {
  const ArgBuffer in(ptr, len);
  if constexpr (std::is_invocable_v<F&, const Event&>) {
    Result<Event> e = parse_event(in.view());
    if (!e.ok()) return entry_failed(e.error());
    return run_status(f, static_cast<const Event&>(*e));
  } else {
    static_assert(std::is_invocable_v<F&, std::string_view>,
                  "TESSERA_COMPUTE_MODULE: event takes "
                  "(const tessera::compute::Event&) or (std::string_view)");
    return run_status(f, in.view());
  }
}

inline GuestPtr alloc(GuestLen len) {
  return reinterpret_cast<GuestPtr>(std::malloc(len == 0 ? 1 : len));
}

}  // namespace tessera::compute::detail

// The exports every compute module has. tessera_v1_log is the symbol the
// SDK's runtime objects (operator_new.cc, wasi_stubs.c) and tessera/log.h
// log through: defined here, it forwards to tessera_compute_v1.log, so the
// module imports nothing from tessera_v1.
#define TESSERA_DETAIL_COMPUTE_EXPORTS(init_fn, tick_fn, invoke_fn)            \
  extern "C" void tessera_v1_log(std::int32_t level, const char* ptr,          \
                                 std::int32_t len) {                           \
    tessera_compute_v1_log(level, ptr, len);                                   \
  }                                                                            \
  extern "C" TESSERA_DETAIL_EXPORT("tessera_compute_abi_v1") void              \
  tessera_detail_compute_abi_marker() {}                                       \
  extern "C" TESSERA_DETAIL_EXPORT("tessera_alloc")::tessera::detail::GuestPtr \
  tessera_detail_compute_alloc(::tessera::detail::GuestLen n) {                \
    return ::tessera::compute::detail::alloc(n);                               \
  }                                                                            \
  extern "C" TESSERA_DETAIL_EXPORT(                                            \
      "tessera_output_ptr")::tessera::detail::GuestPtr                         \
  tessera_detail_compute_output_ptr() {                                        \
    return reinterpret_cast<::tessera::detail::GuestPtr>(                      \
        ::tessera::compute::detail::output().data());                          \
  }                                                                            \
  extern "C" TESSERA_DETAIL_EXPORT(                                            \
      "tessera_output_len")::tessera::detail::GuestLen                         \
  tessera_detail_compute_output_len() {                                        \
    return static_cast<::tessera::detail::GuestLen>(                           \
        ::tessera::compute::detail::output().size());                          \
  }                                                                            \
  extern "C" TESSERA_DETAIL_EXPORT("tessera_compute_init") std::int32_t        \
  tessera_detail_compute_init() {                                              \
    return ::tessera::compute::detail::run_status(init_fn);                    \
  }                                                                            \
  extern "C" TESSERA_DETAIL_EXPORT("tessera_compute_tick") std::int32_t        \
  tessera_detail_compute_tick(std::int32_t dt_ms) {                            \
    return ::tessera::compute::detail::run_status(                             \
        tick_fn, static_cast<std::uint32_t>(dt_ms < 0 ? 0 : dt_ms));           \
  }                                                                            \
  extern "C" TESSERA_DETAIL_EXPORT("tessera_compute_invoke") std::int32_t      \
  tessera_detail_compute_invoke(::tessera::detail::GuestPtr ptr,               \
                                ::tessera::detail::GuestLen len) {             \
    return ::tessera::compute::detail::run_invoke(invoke_fn, ptr, len);        \
  }

#define TESSERA_DETAIL_COMPUTE_MODULE3(init_fn, tick_fn, invoke_fn) \
  TESSERA_DETAIL_COMPUTE_EXPORTS(init_fn, tick_fn, invoke_fn)       \
  static_assert(true, "")

#define TESSERA_DETAIL_COMPUTE_MODULE4(init_fn, tick_fn, invoke_fn, event_fn) \
  TESSERA_DETAIL_COMPUTE_EXPORTS(init_fn, tick_fn, invoke_fn)                 \
  extern "C" TESSERA_DETAIL_EXPORT("tessera_compute_event") std::int32_t      \
  tessera_detail_compute_event(::tessera::detail::GuestPtr ptr,               \
                               ::tessera::detail::GuestLen len) {             \
    return ::tessera::compute::detail::run_event(event_fn, ptr, len);         \
  }                                                                           \
  static_assert(true, "")

#define TESSERA_DETAIL_COMPUTE_PICK(a, b, c, d, name, ...) name

// TESSERA_COMPUTE_MODULE(init, tick, invoke) or
// TESSERA_COMPUTE_MODULE(init, tick, invoke, event): see tessera/compute.h.
#define TESSERA_COMPUTE_MODULE(...)                                        \
  TESSERA_DETAIL_COMPUTE_PICK(__VA_ARGS__, TESSERA_DETAIL_COMPUTE_MODULE4, \
                              TESSERA_DETAIL_COMPUTE_MODULE3, unused)      \
  (__VA_ARGS__)

#endif  // TESSERA_DETAIL_COMPUTE_EXPORTS_H_
