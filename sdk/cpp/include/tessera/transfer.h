// Moving players between shards (docs/guest-abi.md, "Transfers and
// messages"): what transfer_in() is told about the player, and the moves a
// shard asks for in transfer_requests(). The members a shard class defines
// are described in tessera/shard.h.
#ifndef TESSERA_TRANSFER_H_
#define TESSERA_TRANSFER_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "tessera/json_reader.h"

namespace tessera {
namespace detail {

// The end of the JSON value that starts at `pos` in `text`, which the
// json::Reader has already checked to be valid JSON.
inline std::size_t json_value_end(std::string_view text, std::size_t pos) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = pos; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
        if (depth == 0) return i + 1;
      }
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        break;
      case '{':
      case '[':
        ++depth;
        break;
      case '}':
      case ']':
        if (depth == 0) return i;  // the end of the enclosing container
        if (--depth == 0) return i + 1;
        break;
      case ',':
      case ' ':
      case '\t':
      case '\n':
      case '\r':
        if (depth == 0) return i;
        break;
      default:
        break;
    }
  }
  return text.size();
}

inline std::size_t json_skip_space(std::string_view text, std::size_t pos) {
  while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' ||
                               text[pos] == '\n' || text[pos] == '\r')) {
    ++pos;
  }
  return pos;
}

// Valid JSON text without the whitespace outside strings.
inline std::string json_compact(std::string_view text) {
  std::string out;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out.push_back(c);
      if (c == '\\' && i + 1 < text.size()) {
        out.push_back(text[++i]);
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
      out.push_back(c);
    } else if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
      out.push_back(c);
    }
  }
  return out;
}

// The member `name` of the JSON object `json`: a string as its text, any
// other value as compact JSON text. nullopt when absent, or when `json` is
// not a valid JSON object. With a key given twice, the last one counts.
inline std::optional<std::string> json_member(std::string_view json,
                                              std::string_view name) {
  {
    json::Reader check(json);
    if (check.peek() != Kind::kObject || !check.skip() || !check.finish()) {
      return std::nullopt;
    }
  }
  // Valid: walk the top-level members by hand to keep each value's text.
  std::optional<std::string> found;
  std::size_t pos = json_skip_space(json, 0) + 1;  // past '{'
  std::string key;
  for (;;) {
    pos = json_skip_space(json, pos);
    if (pos >= json.size() || json[pos] == '}') break;
    if (json[pos] == ',') pos = json_skip_space(json, pos + 1);
    const std::size_t key_end = json_value_end(json, pos);
    json::Reader key_reader(json.substr(pos, key_end - pos));
    if (!key_reader.read_string(key)) return std::nullopt;
    pos = json_skip_space(json, key_end) + 1;  // past ':'
    pos = json_skip_space(json, pos);
    const std::size_t end = json_value_end(json, pos);
    const std::string_view value = json.substr(pos, end - pos);
    pos = end;
    if (key != name) continue;
    if (!value.empty() && value[0] == '"') {
      std::string text;
      json::Reader value_reader(value);
      if (!value_reader.read_string(text)) return std::nullopt;
      found = std::move(text);
    } else {
      found = json_compact(value);
    }
  }
  return found;
}

}  // namespace detail

// The player moving in, and the claims of its ticket for this shard (a JSON
// object, e.g. {"party":"p7","level":3}). Valid during transfer_in() only:
// copy what you keep.
class Auth {
 public:
  Auth(std::string_view subscriber, std::string_view claims_json,
       std::string_view from_shard)
      : subscriber_(subscriber),
        claims_json_(claims_json),
        from_shard_(from_shard) {}

  std::string_view subscriber() const { return subscriber_; }
  // A claim's value: a JSON string as its text, any other JSON value as
  // compact JSON text (`3`, `true`, `{"a":1}`); nullopt when absent (or
  // when the claims are not a JSON object).
  std::optional<std::string> claim(std::string_view name) const {
    return detail::json_member(claims_json_, name);
  }
  std::string_view claims_json() const { return claims_json_; }
  // Where the player comes from; for a returning player, the shard that
  // refused it.
  std::string_view from_shard() const { return from_shard_; }

 private:
  std::string_view subscriber_;
  std::string_view claims_json_;
  std::string_view from_shard_;
};

// A move transfer_requests() asks for: `subscriber`'s entity to shard `to`.
struct TransferRequest {
  std::string subscriber;
  std::string to;
};

}  // namespace tessera

#endif  // TESSERA_TRANSFER_H_
