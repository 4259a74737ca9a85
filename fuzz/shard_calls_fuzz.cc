// libFuzzer target: the JSON of keyed calls and entity writes
// (src/shard/calls_json.h, docs/guest-abi.md "Keyed calls and entity
// writes"): the readers of what a guest returns from tessera_calls and
// tessera_writes (untrusted bytes), and the host's argument of
// tessera_on_call_result built around a result from the call runner.
//
// The first byte picks the reader (0 calls, 1 writes, 2 the result
// argument with ok, 3 with an error); the rest is its input. Besides memory
// safety it checks:
//  - nothing is lost silently: every element of an array the readers parse
//    is either taken or counted as refused (with at least one refusal line);
//  - what is taken keeps the limits (key, function, args sizes; entity, id
//    non-empty; set a non-empty JSON object; at most kMaxWritesPerTick);
//  - the same bytes always give the same verdict;
//  - the result argument is always one JSON object the guest can read:
//    {"key", "ok": true, "result"} or {"key", "ok": false, "error"}.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>

#include "shard/calls_json.h"
#include "tessera/abi.h"

namespace {

using namespace tessera;
using namespace tessera::shard;
using json = nlohmann::json;

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "shard_calls_fuzz: invariant broken: %s\n", what);
    std::abort();
  }
}

// The number of top-level elements when `text` is a JSON array nlohmann
// reads (at the readers' depth limit), else -1.
long Elements(std::string_view text) {
  size_t deepest = 0;
  json::parser_callback_t deep = [&](int depth, json::parse_event_t, json&) {
    if (static_cast<size_t>(depth) > deepest) deepest = depth;
    return true;
  };
  json root = json::parse(text.begin(), text.end(), deep, false);
  if (root.is_discarded() || !root.is_array() || deepest > kMaxCallsJsonDepth) {
    return -1;
  }
  return static_cast<long>(root.size());
}

void FuzzCalls(std::string_view text) {
  const ParsedCalls a = ParseCalls(text);
  const ParsedCalls b = ParseCalls(text);
  Check(a.calls.size() == b.calls.size() && a.refusals == b.refusals &&
            a.refused == b.refused,
        "ParseCalls is not deterministic");
  Check(a.refused == a.refusals.size(), "a refused call without its line");
  std::set<std::string> keys;
  for (const CallRequest& call : a.calls) {
    Check(!call.key.empty() && call.key.size() <= abi::kMaxCallKeyBytes,
          "a key out of bounds was taken");
    Check(!call.function.empty() &&
              call.function.size() <= abi::kMaxCallFunctionBytes,
          "a function out of bounds was taken");
    Check(call.args_json.size() <= abi::kMaxCallArgsBytes,
          "args over the limit were taken");
    Check(json::accept(call.args_json), "args that are not JSON");
    Check(keys.insert(call.key).second, "a key taken twice");
  }
  const long elements = Elements(text);
  if (elements < 0) {
    Check(a.calls.empty() && a.refused == 1, "a non-array output was taken");
  } else {
    // Duplicate keys are folded, so taken + refused <= elements.
    Check(a.calls.size() + a.refused <= static_cast<size_t>(elements),
          "more calls than elements");
  }
}

void FuzzWrites(std::string_view text) {
  const ParsedWrites a = ParseWrites(text);
  const ParsedWrites b = ParseWrites(text);
  Check(a.writes.size() == b.writes.size() && a.refusals == b.refusals,
        "ParseWrites is not deterministic");
  if (a.refused > 0) Check(!a.refusals.empty(), "refused without a line");
  Check(a.writes.size() <= abi::kMaxWritesPerTick, "over the tick limit");
  for (const EntityWrite& w : a.writes) {
    Check(!w.entity.empty() && !w.id.empty(), "an empty entity or id");
    json set = json::parse(w.set_json, nullptr, false);
    Check(set.is_object() && !set.empty(), "set is not a non-empty object");
  }
  const long elements = Elements(text);
  if (elements < 0) {
    Check(a.writes.empty() && a.refused == 1, "a non-array output was taken");
  } else {
    Check(a.writes.size() + a.refused == static_cast<size_t>(elements),
          "a write was lost without a refusal");
  }
}

void FuzzResult(std::string_view text, bool ok) {
  CallResult r;
  r.ok = ok;
  // The first line is the key, the rest the result (or error) text.
  const size_t nl = text.find('\n');
  r.key = std::string(text.substr(0, nl));
  const std::string_view rest =
      nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
  if (ok) {
    r.result_json = std::string(rest);
  } else {
    r.error = std::string(rest);
  }
  const std::string arg = CallResultArgument(r);
  json parsed = json::parse(arg, nullptr, false);
  Check(parsed.is_object(), "the argument is not a JSON object");
  Check(parsed.contains("key") && parsed["key"].is_string(), "no key");
  Check(parsed.contains("ok") && parsed["ok"].is_boolean(), "no ok");
  if (parsed["ok"].get<bool>()) {
    Check(ok, "an error became ok");
    Check(parsed.contains("result") && !parsed.contains("error"),
          "ok without a result");
  } else {
    Check(parsed.contains("error") && parsed["error"].is_string() &&
              !parsed.contains("result"),
          "an error without its text");
  }
  Check(arg == CallResultArgument(r), "CallResultArgument is not pure");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data + 1),
                              size - 1);
  switch (data[0] % 4) {
    case 0:
      FuzzCalls(text);
      break;
    case 1:
      FuzzWrites(text);
      break;
    case 2:
      FuzzResult(text, true);
      break;
    default:
      FuzzResult(text, false);
      break;
  }
  return 0;
}
