// Keyed calls to the app's functions and writes to the app's data
// (docs/guest-abi.md, "Keyed calls and entity writes"). The members a shard
// class defines (calls(), on_call_result(), writes()) are described in
// tessera/shard.h; TESSERA_SHARD exports them (tessera/detail/calls_export.h).
//
// A keyed call runs a function ("module.export", or an export name) once
// per key, for good: the host stores the key with its result in the same
// transaction as the function's own changes, so listing the same key again
// (after a restart, say) returns the stored result without running it
// again. List every call you still wait for in calls(), every tick; apply
// its effect only in on_call_result(); save the calls you wait for with
// your state and list them again after restore(). Make keys unique for
// good (e.g. "loot:<player>:<counter you save>"): the same key with other
// args is refused with "KEY_REUSED: ...".
#ifndef TESSERA_CALLS_H_
#define TESSERA_CALLS_H_

#include <string>
#include <string_view>

namespace tessera {

// One call the shard waits for. key: 1..128 bytes; function: 1..256 bytes;
// args_json: the function's params as JSON text (at most 64 KiB).
struct Call {
  std::string key;
  std::string function;
  std::string args_json = "null";
};

// A call's outcome, for on_call_result(). ok: the function's reply as JSON
// text in result_json; !ok: "CODE: message" in error (KEY_REUSED,
// FUNCTION_NOT_FOUND, the function's own refusal, ...). The views are
// valid only during the call: copy what you keep.
struct CallOutcome {
  bool ok = false;
  std::string_view result_json;
  std::string_view error;
};

// One write of fields of a row of the app's data: `set_json` is a JSON
// object {field: value, ...}. The host keeps the latest value per row and
// field and writes them every few seconds and when the shard stops.
struct Write {
  std::string entity;
  std::string id;
  std::string set_json;
};

}  // namespace tessera

#endif  // TESSERA_CALLS_H_
