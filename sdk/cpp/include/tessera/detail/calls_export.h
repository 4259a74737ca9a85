// The optional keyed call and entity write exports (docs/guest-abi.md,
// "Keyed calls and entity writes"), defined by TESSERA_SHARD for the members
// a shard class has (tessera/shard.h, tessera/calls.h):
//
//   tessera_calls, tessera_on_call_result   with calls() and on_call_result()
//   tessera_writes                          with writes()
//
// The JSON is written with tessera/json_writer.h; a Call's args_json and a
// Write's set_json are checked (json_reader.h) before they are put in:
// text that is not JSON (or a set_json that is not an object) is a bug in
// the shard and panics, naming the call or the write, rather than spoil the
// whole list. A malformed argument from the host is answered with kError
// ("tessera_on_call_result: malformed argument: ...").
#ifndef TESSERA_DETAIL_CALLS_EXPORT_H_
#define TESSERA_DETAIL_CALLS_EXPORT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/abi.h"
#include "tessera/calls.h"
#include "tessera/detail/runtime.h"
#include "tessera/json_reader.h"
#include "tessera/json_writer.h"
#include "tessera/log.h"
#include "tessera/shard.h"

namespace tessera::detail {

// Appends `text` as a JSON string.
inline void append_json_string(std::string& out, std::string_view text) {
  json::Writer(out).string(text);
}

// Whether `text` is one JSON value (an object when `object`); the reader's
// error in *why otherwise.
inline bool is_json_value(std::string_view text, bool object,
                          std::string* why) {
  json::Reader r(text);
  if (object && r.peek() != Kind::kObject) {
    *why = "not a JSON object";
    return false;
  }
  if (r.skip() && r.finish()) return true;
  *why = r.error();
  return false;
}

// Appends `"name":<raw>` (with a leading comma unless first).
inline void append_member(std::string& out, std::string_view name,
                          std::string_view raw, bool first = false) {
  if (!first) out.push_back(',');
  append_json_string(out, name);
  out.push_back(':');
  out.append(raw);
}

// tessera_calls and tessera_on_call_result, for shards with calls() and
// on_call_result().
template <class S>
struct CallsExports {};
template <class S>
requires HasCalls<S> && HasOnCallResult<S>
struct CallsExports<S> {
  // kOk with [{"key", "function", "args"}, ...], or kNoState (none).
  TESSERA_DETAIL_EXPORT("tessera_calls") static std::int32_t calls() {
    S& s = started_shard<S>("tessera_calls");
    Runtime& rt = runtime();
    rt.output.clear();
    const std::vector<Call> list = s.calls();
    if (list.empty()) return abi::kNoState;
    std::string& out = rt.output;
    std::string quoted, why;
    out.push_back('[');
    for (const Call& call : list) {
      const std::string_view args = call.args_json.empty()
                                        ? std::string_view("null")
                                        : std::string_view(call.args_json);
      if (!is_json_value(args, false, &why)) {
        panic("calls(): the args_json of call \"" + call.key +
              "\" is not JSON: " + why);
      }
      if (out.size() > 1) out.push_back(',');
      out.push_back('{');
      quoted.clear();
      append_json_string(quoted, call.key);
      append_member(out, "key", quoted, true);
      quoted.clear();
      append_json_string(quoted, call.function);
      append_member(out, "function", quoted);
      append_member(out, "args", args);
      out.push_back('}');
    }
    out.push_back(']');
    return abi::kOk;
  }

  // Argument: {"key": str, "ok": bool, "result": any | "error": str}. kOk,
  // or kError for a malformed argument (on_call_result is then not called).
  TESSERA_DETAIL_EXPORT("tessera_on_call_result")
  static std::int32_t on_call_result(GuestPtr ptr, GuestLen len) {
    const ArgBuffer arg(ptr, len);
    S& s = started_shard<S>("tessera_on_call_result");
    runtime().output.clear();
    const std::string_view text = arg.view();
    json::Reader r(text);
    std::string key, error, name;
    bool ok = false, has_key = false, has_ok = false;
    std::string_view result = "null";
    if (r.begin_object()) {
      while (r.object_next(name)) {
        if (name == "key") {
          has_key = r.read_string(key);
        } else if (name == "ok") {
          has_ok = r.read_bool(ok);
        } else if (name == "error") {
          r.read_string(error);
        } else if (name == "result") {
          r.peek();  // past the whitespace
          const std::size_t start = r.position();
          if (r.skip()) result = text.substr(start, r.position() - start);
        } else {
          r.skip();
        }
      }
    }
    if (!r.finish()) {
      return fail_with("tessera_on_call_result: malformed argument: " +
                       r.error());
    }
    if (!has_key || !has_ok) {
      return fail_with(
          "tessera_on_call_result: malformed argument: key or ok missing");
    }
    CallOutcome outcome;
    outcome.ok = ok;
    if (ok) {
      outcome.result_json = result;
    } else {
      outcome.error = error;
    }
    s.on_call_result(key, outcome);
    return abi::kOk;
  }
};

// tessera_writes, for shards with writes().
template <class S>
struct WritesExport {};
template <HasWrites S>
struct WritesExport<S> {
  // kOk with [{"entity", "id", "set"}, ...], or kNoState (none).
  TESSERA_DETAIL_EXPORT("tessera_writes") static std::int32_t writes() {
    S& s = started_shard<S>("tessera_writes");
    Runtime& rt = runtime();
    rt.output.clear();
    const std::vector<Write> list = s.writes();
    if (list.empty()) return abi::kNoState;
    std::string& out = rt.output;
    std::string quoted, why;
    out.push_back('[');
    for (const Write& write : list) {
      if (!is_json_value(write.set_json, true, &why)) {
        panic("writes(): the set_json of " + write.entity + " \"" + write.id +
              "\" is " + why);
      }
      if (out.size() > 1) out.push_back(',');
      out.push_back('{');
      quoted.clear();
      append_json_string(quoted, write.entity);
      append_member(out, "entity", quoted, true);
      quoted.clear();
      append_json_string(quoted, write.id);
      append_member(out, "id", quoted);
      append_member(out, "set", write.set_json);
      out.push_back('}');
    }
    out.push_back(']');
    return abi::kOk;
  }
};

}  // namespace tessera::detail

// Used by TESSERA_SHARD: the call and write members with the signatures
// exported, calls() and on_call_result() together; then their exports.
#define TESSERA_DETAIL_CALLS_EXPORTS(Type)                                    \
  static_assert(!::tessera::DeclaresCalls<Type> || ::tessera::HasCalls<Type>, \
                "TESSERA_SHARD(" #Type                                        \
                "): calls() must be `std::vector<tessera::Call> calls()`");   \
  static_assert(!::tessera::DeclaresOnCallResult<Type> ||                     \
                    ::tessera::HasOnCallResult<Type>,                         \
                "TESSERA_SHARD(" #Type                                        \
                "): on_call_result() must be `void on_call_result("           \
                "std::string_view key, const tessera::CallOutcome& "          \
                "outcome)`");                                                 \
  static_assert(::tessera::CallsComplete<Type>,                               \
                "TESSERA_SHARD(" #Type                                        \
                "): calls() and on_call_result() come together");             \
  static_assert(                                                              \
      !::tessera::DeclaresWrites<Type> || ::tessera::HasWrites<Type>,         \
      "TESSERA_SHARD(" #Type                                                  \
      "): writes() must be `std::vector<tessera::Write> writes()`");          \
  template struct ::tessera::detail::CallsExports<Type>;                      \
  template struct ::tessera::detail::WritesExport<Type>

#endif  // TESSERA_DETAIL_CALLS_EXPORT_H_
