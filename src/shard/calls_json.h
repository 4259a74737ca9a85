// The JSON of keyed calls and entity writes (include/tessera/abi.h, "The
// app's data and functions"; docs/guest-abi.md "Keyed calls and entity
// writes"): what a guest returns from tessera_calls and tessera_writes
// (untrusted bytes), and the argument the host passes to
// tessera_on_call_result.
//
// Pure functions (nlohmann_json only), so the fuzz target `shard_calls`
// compiles them in. Thread-safe.
//
// The readers are strict and never throw: the whole output must be one JSON
// array (nested at most kMaxCallsJsonDepth deep) or it is refused as a
// whole; each element is then checked on its own, and a bad one is refused
// with a line saying which one and why while the others are taken. Nothing
// is dropped without a refusal line.
#ifndef TESSERA_SHARD_CALLS_JSON_H_
#define TESSERA_SHARD_CALLS_JSON_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "shard/shard_calls.h"

namespace tessera::shard {

// Arrays and objects nested deeper than this in a calls() or writes()
// output refuse the whole output.
inline constexpr size_t kMaxCallsJsonDepth = 64;
// Bounds of a write's entity type name and row id (the data layer checks
// the rest: data/schema.h, CheckId; its ids are 1..128 bytes too).
inline constexpr size_t kMaxWriteEntityBytes = 128;
inline constexpr size_t kMaxWriteIdBytes = 128;

// One call a guest listed (not yet checked against what is in flight).
struct CallRequest {
  std::string key;        // 1..abi::kMaxCallKeyBytes
  std::string function;   // 1..abi::kMaxCallFunctionBytes
  std::string args_json;  // compact JSON, <= abi::kMaxCallArgsBytes; "null"
                          // when absent
};

struct ParsedCalls {
  std::vector<CallRequest> calls;  // in the guest's order; a key listed
                                   // twice is taken once (the first)
  // One line per refusal: "the output is not JSON: ...", "call 3: key is
  // 200 bytes, over 128", ...; `refused` counts the calls refused (1 for a
  // refused output, whose calls cannot be counted).
  std::vector<std::string> refusals;
  size_t refused = 0;
};

// Reads tessera_calls' output: [{"key": str, "function": str, "args":
// any}, ...]. Unknown members of an element are refused (a typo must not
// lose the call's meaning); "args" may be absent (null).
ParsedCalls ParseCalls(std::string_view json);

struct ParsedWrites {
  std::vector<EntityWrite> writes;  // in order; set_json compact, an object
  std::vector<std::string> refusals;
  size_t refused = 0;  // writes refused (1 for a refused output)
};

// Reads tessera_writes' output: [{"entity": str, "id": str, "set":
// {field: value, ...}}, ...], entity and id non-empty, set a non-empty
// object. At most abi::kMaxWritesPerTick are taken; each one beyond is
// refused (one line says how many).
ParsedWrites ParseWrites(std::string_view json);

// tessera_on_call_result's argument for `result`: {"key": str, "ok": true,
// "result": any} or {"key": str, "ok": false, "error": str}. A result_json
// that is not JSON, nested too deep, or over abi::kMaxCallResultBytes is
// passed as an error instead ("BAD_RESULT: ..." / "RESULT_TOO_LARGE: ..."),
// so the guest always gets an answer it can read.
std::string CallResultArgument(const CallResult& result);

}  // namespace tessera::shard

#endif  // TESSERA_SHARD_CALLS_JSON_H_
