// Splitting an HTTP request target into decoded path segments, and the
// shapes of ids the API accepts. Pure functions; any thread.
#ifndef TESSERA_SERVER_REQUEST_TARGET_H_
#define TESSERA_SERVER_REQUEST_TARGET_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::server {

struct RequestTarget {
  std::string path;                   // without the query, still encoded
  std::vector<std::string> segments;  // percent-decoded, empty ones dropped
};

// Parses "/a/b%20c?x=1" into path "/a/b%20c" and segments {"a", "b c"}.
// Returns nullopt for a target that is not an absolute path or holds a bad
// percent escape or a decoded NUL.
std::optional<RequestTarget> ParseTarget(std::string_view target);

// The query of `target` ("/p?a=1&b=x%20y" -> {a: "1", b: "x y"}; "+" is a
// space; a name without "=" has value ""). nullopt for a bad escape or a
// name given twice. No query: {}.
std::optional<std::map<std::string, std::string>> ParseQuery(
    std::string_view target);

// Decodes %XX escapes ('+' stays '+'); nullopt on a malformed escape.
std::optional<std::string> PercentDecode(std::string_view text);

inline constexpr size_t kMaxIdBytes = 128;

// Shard ids: 1..128 bytes of [A-Za-z0-9._:-] (safe in URLs and logs).
bool IsValidShardId(std::string_view id);

// Subscriber ids: 1..128 bytes, no control characters. An empty id is
// reserved for server-side inputs and never valid here.
bool IsValidSubscriberId(std::string_view id);

}  // namespace tessera::server

#endif  // TESSERA_SERVER_REQUEST_TARGET_H_
