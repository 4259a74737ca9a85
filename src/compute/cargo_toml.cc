#include "compute/cargo_toml.h"

#include <cstdint>

namespace tessera::compute {
namespace {

constexpr int kMaxDepth = 16;  // nested arrays / inline tables

bool IsBareKeyChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_' || c == '-';
}

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    *out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    *out += static_cast<char>(0xC0 | (cp >> 6));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    *out += static_cast<char>(0xE0 | (cp >> 12));
    *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    *out += static_cast<char>(0xF0 | (cp >> 18));
    *out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

class Reader {
 public:
  Reader(std::string_view text, std::string_view label)
      : text_(text), label_(label) {}

  Result<std::vector<TomlTable>> Run();

 private:
  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return AtEnd() ? '\0' : text_[pos_]; }
  bool StartsWith(std::string_view s) const {
    return text_.substr(pos_, s.size()) == s;
  }
  Status Error(const std::string& what) const {
    return InvalidArgument(std::string(label_) + ":" + std::to_string(line_) +
                           ": " + what);
  }
  void SkipSpaces() {
    while (Peek() == ' ' || Peek() == '\t') ++pos_;
  }
  // Spaces, then an optional comment, then a newline or the end.
  Status EndOfLine();
  // Spaces, comments and newlines (inside arrays).
  Status SkipBlank();
  Result<std::string> Key();
  Result<std::string> BasicString();
  Result<std::string> LiteralString();
  Result<TomlValue> Value(int depth);
  Status Comment();

  std::string_view text_;
  std::string_view label_;
  size_t pos_ = 0;
  int line_ = 1;
};

Status Reader::Comment() {
  // A comment runs to the end of the line; control characters other than
  // tab are not allowed in it.
  ++pos_;
  while (!AtEnd() && Peek() != '\n') {
    const unsigned char c = static_cast<unsigned char>(Peek());
    if ((c < 0x20 && c != '\t' && c != '\r') || c == 0x7F) {
      return Error("control character in a comment");
    }
    ++pos_;
  }
  return Status::Ok();
}

Status Reader::EndOfLine() {
  SkipSpaces();
  if (Peek() == '#') TESSERA_RETURN_IF_ERROR(Comment());
  if (Peek() == '\r') ++pos_;
  if (AtEnd()) return Status::Ok();
  if (Peek() != '\n') {
    return Error("unexpected text after the value (one entry per line)");
  }
  ++pos_;
  ++line_;
  return Status::Ok();
}

Status Reader::SkipBlank() {
  for (;;) {
    SkipSpaces();
    if (Peek() == '#') {
      TESSERA_RETURN_IF_ERROR(Comment());
    } else if (Peek() == '\r' && pos_ + 1 < text_.size() &&
               text_[pos_ + 1] == '\n') {
      ++pos_;
    } else if (Peek() == '\n') {
      ++pos_;
      ++line_;
    } else {
      return Status::Ok();
    }
  }
}

Result<std::string> Reader::BasicString() {
  if (StartsWith("\"\"\""))
    return Error("multi-line strings are not supported");
  ++pos_;
  std::string out;
  for (;;) {
    if (AtEnd() || Peek() == '\n') return Error("unterminated string");
    const char c = text_[pos_++];
    if (c == '"') return out;
    const unsigned char u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\t') || u == 0x7F) {
      return Error("control character in a string");
    }
    if (c != '\\') {
      out += c;
      continue;
    }
    if (AtEnd()) return Error("unterminated string");
    const char e = text_[pos_++];
    switch (e) {
      case 'b':
        out += '\b';
        break;
      case 't':
        out += '\t';
        break;
      case 'n':
        out += '\n';
        break;
      case 'f':
        out += '\f';
        break;
      case 'r':
        out += '\r';
        break;
      case '"':
        out += '"';
        break;
      case '\\':
        out += '\\';
        break;
      case 'u':
      case 'U': {
        const size_t n = e == 'u' ? 4 : 8;
        if (pos_ + n > text_.size()) return Error("bad \\u escape");
        uint32_t cp = 0;
        for (size_t i = 0; i < n; ++i) {
          const char h = text_[pos_ + i];
          uint32_t d;
          if (h >= '0' && h <= '9') {
            d = h - '0';
          } else if (h >= 'a' && h <= 'f') {
            d = h - 'a' + 10;
          } else if (h >= 'A' && h <= 'F') {
            d = h - 'A' + 10;
          } else {
            return Error("bad \\u escape");
          }
          cp = cp * 16 + d;
        }
        pos_ += n;
        if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
          return Error("\\u escape is not a Unicode scalar value");
        }
        AppendUtf8(cp, &out);
        break;
      }
      default:
        return Error(std::string("unknown escape \\") + e);
    }
  }
}

Result<std::string> Reader::LiteralString() {
  if (StartsWith("'''")) return Error("multi-line strings are not supported");
  ++pos_;
  std::string out;
  for (;;) {
    if (AtEnd() || Peek() == '\n') return Error("unterminated string");
    const char c = text_[pos_++];
    if (c == '\'') return out;
    const unsigned char u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\t') || u == 0x7F) {
      return Error("control character in a string");
    }
    out += c;
  }
}

Result<std::string> Reader::Key() {
  if (Peek() == '"') return BasicString();
  if (Peek() == '\'') return LiteralString();
  const size_t start = pos_;
  while (IsBareKeyChar(Peek())) ++pos_;
  if (pos_ == start) return Error("expected a key");
  return std::string(text_.substr(start, pos_ - start));
}

Result<TomlValue> Reader::Value(int depth) {
  if (depth > kMaxDepth) return Error("values nested too deeply");
  TomlValue v;
  v.line = line_;
  const char c = Peek();
  if (c == '"' || c == '\'') {
    Result<std::string> s = c == '"' ? BasicString() : LiteralString();
    if (!s.ok()) return s.status();
    v.kind = TomlValue::Kind::kString;
    v.str = std::move(*s);
    return v;
  }
  if (StartsWith("true") || StartsWith("false")) {
    v.kind = TomlValue::Kind::kBool;
    v.boolean = c == 't';
    pos_ += v.boolean ? 4 : 5;
    if (IsBareKeyChar(Peek())) return Error("expected a value");
    return v;
  }
  if (c == '+' || c == '-' || (c >= '0' && c <= '9')) {
    const bool negative = c == '-';
    if (c == '+' || c == '-') ++pos_;
    if (!(Peek() >= '0' && Peek() <= '9')) return Error("expected a value");
    uint64_t n = 0;
    bool last_digit = false;
    while ((Peek() >= '0' && Peek() <= '9') || Peek() == '_') {
      if (Peek() == '_') {
        if (!last_digit) return Error("misplaced '_' in an integer");
        last_digit = false;
      } else {
        if (n > (UINT64_C(1) << 62)) return Error("integer out of range");
        n = n * 10 + static_cast<uint64_t>(Peek() - '0');
        last_digit = true;
      }
      ++pos_;
    }
    if (!last_digit) return Error("misplaced '_' in an integer");
    if (IsBareKeyChar(Peek()) || Peek() == '.' || Peek() == ':') {
      return Error(
          "only decimal integers are supported (no floats, dates or hex)");
    }
    v.kind = TomlValue::Kind::kInt;
    v.integer = negative ? -static_cast<int64_t>(n) : static_cast<int64_t>(n);
    return v;
  }
  if (c == '[') {
    ++pos_;
    v.kind = TomlValue::Kind::kArray;
    for (;;) {
      TESSERA_RETURN_IF_ERROR(SkipBlank());
      if (Peek() == ']') {
        ++pos_;
        return v;
      }
      Result<TomlValue> item = Value(depth + 1);
      if (!item.ok()) return item.status();
      v.array.push_back(std::move(*item));
      TESSERA_RETURN_IF_ERROR(SkipBlank());
      if (Peek() == ',') {
        ++pos_;
      } else if (Peek() != ']') {
        return Error("expected ',' or ']' in an array");
      }
    }
  }
  if (c == '{') {
    ++pos_;
    v.kind = TomlValue::Kind::kTable;
    SkipSpaces();
    if (Peek() == '}') {
      ++pos_;
      return v;
    }
    for (;;) {
      SkipSpaces();
      Result<std::string> key = Key();
      if (!key.ok()) return key.status();
      SkipSpaces();
      if (Peek() == '.') return Error("dotted keys are not supported");
      if (Peek() != '=') return Error("expected '=' after key `" + *key + "`");
      ++pos_;
      SkipSpaces();
      for (const auto& [k, unused] : v.table) {
        if (k == *key) return Error("duplicate key `" + *key + "`");
      }
      Result<TomlValue> item = Value(depth + 1);
      if (!item.ok()) return item.status();
      v.table.push_back({std::move(*key), std::move(*item)});
      SkipSpaces();
      if (Peek() == '}') {
        ++pos_;
        return v;
      }
      if (Peek() != ',') {
        return Error("expected ',' or '}' in an inline table (one line)");
      }
      ++pos_;
    }
  }
  return Error(
      "expected a value (a string, integer, boolean, array or "
      "inline table)");
}

Result<std::vector<TomlTable>> Reader::Run() {
  std::vector<TomlTable> tables(1);
  for (;;) {
    TESSERA_RETURN_IF_ERROR(SkipBlank());
    if (AtEnd()) break;
    if (Peek() == '[') {
      TomlTable table;
      table.line = line_;
      ++pos_;
      if (Peek() == '[') {
        table.array = true;
        ++pos_;
      }
      for (;;) {
        SkipSpaces();
        Result<std::string> part = Key();
        if (!part.ok()) return part.status();
        table.path.push_back(std::move(*part));
        SkipSpaces();
        if (Peek() != '.') break;
        ++pos_;
      }
      if (Peek() != ']' || (table.array && !StartsWith("]]"))) {
        return Error(table.array ? "expected ']]'" : "expected ']'");
      }
      pos_ += table.array ? 2 : 1;
      if (!table.array) {
        for (const TomlTable& t : tables) {
          if (!t.array && t.path == table.path) {
            return Error("table defined twice (first at line " +
                         std::to_string(t.line) + ")");
          }
        }
      }
      TESSERA_RETURN_IF_ERROR(EndOfLine());
      tables.push_back(std::move(table));
      continue;
    }
    Result<std::string> key = Key();
    if (!key.ok()) return key.status();
    SkipSpaces();
    if (Peek() == '.') return Error("dotted keys are not supported");
    if (Peek() != '=') return Error("expected '=' after key `" + *key + "`");
    ++pos_;
    SkipSpaces();
    TomlTable& table = tables.back();
    for (const auto& [k, unused] : table.entries) {
      if (k == *key) return Error("duplicate key `" + *key + "`");
    }
    Result<TomlValue> value = Value(0);
    if (!value.ok()) return value.status();
    table.entries.push_back({std::move(*key), std::move(*value)});
    TESSERA_RETURN_IF_ERROR(EndOfLine());
  }
  // A header [a.b] must not also be key `b` of table [a].
  for (const TomlTable& t : tables) {
    if (t.path.size() < 2) continue;
    const std::vector<std::string> parent(t.path.begin(), t.path.end() - 1);
    for (const TomlTable& p : tables) {
      if (p.path != parent) continue;
      for (const auto& [k, v] : p.entries) {
        if (k == t.path.back()) {
          return InvalidArgument(std::string(label_) + ":" +
                                 std::to_string(t.line) + ": key `" + k +
                                 "` is defined twice (also at line " +
                                 std::to_string(v.line) + ")");
        }
      }
    }
  }
  return tables;
}

}  // namespace

Result<std::vector<TomlTable>> ParseCargoToml(std::string_view text,
                                              std::string_view label) {
  return Reader(text, label).Run();
}

}  // namespace tessera::compute
