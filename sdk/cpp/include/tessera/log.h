// Logging and panics for guest code.
//
// In a wasm32 build, log() calls the module's one import,
// tessera_v1.log(level, ptr, len); the host copies the text during the call.
// In a native build (the SDK's own tests) the text goes to a replaceable sink,
// so tests can capture it.
#ifndef TESSERA_LOG_H_
#define TESSERA_LOG_H_

#include <cstdint>
#include <string_view>

#include "tessera/abi.h"

#if defined(__wasm__)
// The import. Same symbol name in sdk/cpp/src/wasi_stubs.c, so the module has
// exactly one import entry.
extern "C" __attribute__((import_module("tessera_v1"), import_name("log"))) void
tessera_v1_log(std::int32_t level, const char* ptr, std::int32_t len);
#else
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <utility>
#endif

namespace tessera {

using LogLevel = abi::LogLevel;

#if !defined(__wasm__)
namespace native {

// Receives every log line of a native build. Not thread-safe: tests set it
// before driving a shard and restore it afterwards.
using LogSink = std::function<void(LogLevel level, std::string_view text)>;

inline LogSink& log_sink() {
  static LogSink* sink = new LogSink([](LogLevel level, std::string_view text) {
    std::fprintf(stderr, "[guest %d] %.*s\n", static_cast<int>(level),
                 static_cast<int>(text.size()), text.data());
  });
  return *sink;
}

// Replaces the sink; returns the previous one.
inline LogSink set_log_sink(LogSink sink) {
  return std::exchange(log_sink(), std::move(sink));
}

}  // namespace native
#endif

namespace detail {

inline void emit_log(LogLevel level, std::string_view text) {
#if defined(__wasm__)
  tessera_v1_log(static_cast<std::int32_t>(level), text.data(),
                 static_cast<std::int32_t>(text.size()));
#else
  native::log_sink()(level, text);
#endif
}

}  // namespace detail

// Sends one log line to the host. A level above kLogError is logged as
// kLogError: only panic() may log at kLogPanic.
inline void log(LogLevel level, std::string_view text) {
  detail::emit_log(level > abi::kLogError ? abi::kLogError : level, text);
}
inline void log_debug(std::string_view text) { log(abi::kLogDebug, text); }
inline void log_info(std::string_view text) { log(abi::kLogInfo, text); }
inline void log_warn(std::string_view text) { log(abi::kLogWarn, text); }
inline void log_error(std::string_view text) { log(abi::kLogError, text); }

// Ends the module for good: logs `text` at kLogPanic, then traps. The host
// stops the shard with reason "failed" and `text` as its message; the
// instance is dead (a trap leaves its stack pointer corrupt). Native builds
// call std::abort() instead of trapping.
[[noreturn]] inline void panic(std::string_view text) {
  detail::emit_log(abi::kLogPanic, text);
#if defined(__wasm__)
  __builtin_trap();
#else
  std::abort();
#endif
}

}  // namespace tessera

#endif  // TESSERA_LOG_H_
