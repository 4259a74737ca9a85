// JSON reader (RFC 8259): a bounds-checked pull parser over untrusted bytes.
// Strict: no comments, no trailing commas, no NaN, strings must be valid
// UTF-8 with no raw control characters, \u escapes must pair surrogates.
// Nesting deeper than ReaderBase::kMaxDepth is refused. API: see
// tessera/detail/reader_base.h.
#ifndef TESSERA_JSON_READER_H_
#define TESSERA_JSON_READER_H_

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "tessera/detail/reader_base.h"
#include "tessera/detail/utf8.h"

namespace tessera::json {

class Reader : public detail::ReaderBase {
 public:
  // `text` must outlive the reader.
  explicit Reader(std::string_view text) : in_(text) {}

  Kind peek() {
    if (failed()) return Kind::kInvalid;
    skip_space();
    if (pos_ >= in_.size()) return Kind::kEnd;
    switch (in_[pos_]) {
      case 'n':
        return Kind::kNull;
      case 't':
      case 'f':
        return Kind::kBool;
      case '"':
        return Kind::kString;
      case '[':
        return Kind::kArray;
      case '{':
        return Kind::kObject;
      case '-':
      case '0':
      case '1':
      case '2':
      case '3':
      case '4':
      case '5':
      case '6':
      case '7':
      case '8':
      case '9':
        return is_integer_token() ? Kind::kInteger : Kind::kFloat;
      default:
        return Kind::kInvalid;
    }
  }

  bool read_null() {
    if (peek() != Kind::kNull) return mismatch("null");
    return literal("null");
  }

  bool read_bool(bool& out) {
    if (peek() != Kind::kBool) return mismatch("a boolean");
    out = in_[pos_] == 't';
    return literal(out ? "true" : "false");
  }

  bool read_int64(std::int64_t& out) {
    detail::Number n;
    return read_number(n, "an integer") && number_to_int64(n, out);
  }
  bool read_uint64(std::uint64_t& out) {
    detail::Number n;
    return read_number(n, "an integer") && number_to_uint64(n, out);
  }
  bool read_double(double& out) {
    detail::Number n;
    return read_number(n, "a number") && number_to_double(n, out);
  }

  bool read_string(std::string& out) {
    if (peek() != Kind::kString) return mismatch("a string");
    ++pos_;
    out.clear();
    for (;;) {
      // Copy the run of plain characters up to the next quote, backslash,
      // control or non-ASCII byte in one go.
      const std::size_t start = pos_;
      while (pos_ < in_.size()) {
        const auto c = static_cast<unsigned char>(in_[pos_]);
        if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80) break;
        ++pos_;
      }
      out.append(in_.data() + start, pos_ - start);
      if (pos_ >= in_.size()) return fail_at("unterminated string");
      const auto c = static_cast<unsigned char>(in_[pos_]);
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (c < 0x20) return fail_at("control character in string");
      if (c >= 0x80) {
        const std::size_t len = detail::utf8_sequence_length(in_, pos_);
        if (len == 0) return fail_at("invalid UTF-8 in string");
        out.append(in_.data() + pos_, len);
        pos_ += len;
        continue;
      }
      if (!read_escape(out)) return false;
    }
  }

  bool begin_array() {
    if (peek() != Kind::kArray) return mismatch("an array");
    return open();
  }
  bool array_next() {
    if (!next(']')) return false;
    skip_space();
    if (pos_ < in_.size() && in_[pos_] == ']') {
      return fail_at("expected a value after ','");
    }
    return true;
  }

  bool begin_object() {
    if (peek() != Kind::kObject) return mismatch("an object");
    return open();
  }
  bool object_next(std::string& key) {
    if (!next('}')) return false;
    skip_space();
    if (pos_ >= in_.size() || in_[pos_] != '"') {
      return fail_at("expected a string key");
    }
    if (!read_string(key)) return false;
    skip_space();
    if (pos_ >= in_.size() || in_[pos_] != ':') return fail_at("expected ':'");
    ++pos_;
    return true;
  }

  bool skip() {
    switch (peek()) {
      case Kind::kNull:
        return read_null();
      case Kind::kBool: {
        bool ignored = false;
        return read_bool(ignored);
      }
      case Kind::kInteger:
      case Kind::kFloat: {
        detail::Number ignored;
        return read_number(ignored, "a number");
      }
      case Kind::kString:
        return read_string(scratch_);
      case Kind::kArray:
        if (!begin_array()) return false;
        while (array_next()) {
          if (!skip()) return false;
        }
        return !failed();
      case Kind::kObject:
        if (!begin_object()) return false;
        while (object_next(scratch_)) {
          if (!skip()) return false;
        }
        return !failed();
      case Kind::kEnd:
        return fail_at("unexpected end of input");
      default:
        return fail_at("expected a value");
    }
  }

  // The byte offset of the next unread byte: with peek() first (which skips
  // whitespace), where the next value starts; after reading it, where it
  // ended. For keeping a value's raw text.
  std::size_t position() const { return pos_; }

  bool finish() {
    if (failed()) return false;
    skip_space();
    if (pos_ != in_.size()) return fail_at("unexpected text after the value");
    return true;
  }

 private:
  bool fail_at(std::string_view what) {
    return fail("malformed JSON at byte " + std::to_string(pos_) + ": " +
                std::string(what));
  }
  bool mismatch(std::string_view expected) {
    const Kind kind = peek();
    if (kind == Kind::kInvalid && !failed()) return fail_at("expected a value");
    if (kind == Kind::kEnd) return fail_at("unexpected end of input");
    return fail(detail::mismatch_message(expected, kind));
  }

  void skip_space() {
    while (pos_ < in_.size()) {
      const char c = in_[pos_];
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
      ++pos_;
    }
  }

  bool literal(std::string_view word) {
    if (in_.substr(pos_, word.size()) != word)
      return fail_at("invalid literal");
    pos_ += word.size();
    return true;
  }

  // Whether the number token at pos_ has no fraction and no exponent.
  bool is_integer_token() const {
    std::size_t i = pos_;
    if (i < in_.size() && in_[i] == '-') ++i;
    while (i < in_.size() && in_[i] >= '0' && in_[i] <= '9') ++i;
    return i >= in_.size() || (in_[i] != '.' && in_[i] != 'e' && in_[i] != 'E');
  }

  static bool is_digit(char c) { return c >= '0' && c <= '9'; }

  bool read_number(detail::Number& n, std::string_view expected) {
    const Kind kind = peek();
    if (kind != Kind::kInteger && kind != Kind::kFloat) {
      return mismatch(expected);
    }
    // Validate the grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
    const std::size_t start = pos_;
    std::size_t i = pos_;
    const bool negative = in_[i] == '-';
    if (negative) ++i;
    if (i >= in_.size() || !is_digit(in_[i])) return fail_at("invalid number");
    if (in_[i] == '0') {
      ++i;
    } else {
      while (i < in_.size() && is_digit(in_[i])) ++i;
    }
    const std::size_t int_end = i;
    bool integral = true;
    if (i < in_.size() && in_[i] == '.') {
      integral = false;
      ++i;
      if (i >= in_.size() || !is_digit(in_[i]))
        return fail_at("invalid number");
      while (i < in_.size() && is_digit(in_[i])) ++i;
    }
    if (i < in_.size() && (in_[i] == 'e' || in_[i] == 'E')) {
      integral = false;
      ++i;
      if (i < in_.size() && (in_[i] == '+' || in_[i] == '-')) ++i;
      if (i >= in_.size() || !is_digit(in_[i]))
        return fail_at("invalid number");
      while (i < in_.size() && is_digit(in_[i])) ++i;
    }
    pos_ = i;
    if (integral && parse_integer(in_.substr(start, int_end - start), n)) {
      return true;
    }
    // Fractions, exponents and integers too long for 64 bits. The token is
    // copied so strtod stops at its end.
    scratch_.assign(in_.data() + start, i - start);
    errno = 0;
    n.type = detail::Number::Type::kDouble;
    n.d = std::strtod(scratch_.c_str(), nullptr);
    if (errno == ERANGE && (n.d > 1 || n.d < -1)) {
      pos_ = start;
      return fail_at("number out of range");
    }
    return true;
  }

  // An integer token that fits 64 bits; false (with no error) when it does
  // not fit.
  static bool parse_integer(std::string_view token, detail::Number& n) {
    const bool negative = token[0] == '-';
    if (negative) token.remove_prefix(1);
    std::uint64_t value = 0;
    for (char c : token) {
      const auto digit = static_cast<std::uint64_t>(c - '0');
      if (value > (UINT64_MAX - digit) / 10) return false;
      value = value * 10 + digit;
    }
    if (!negative) {
      n.type = detail::Number::Type::kUnsigned;
      n.u = value;
      return true;
    }
    if (value > std::uint64_t{1} << 63) return false;
    n.type = detail::Number::Type::kSigned;
    n.i = static_cast<std::int64_t>(~value + 1);
    return true;
  }

  static int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  // Reads the 4 hex digits of a \u escape at pos_.
  bool read_hex4(std::uint32_t& out) {
    if (in_.size() - pos_ < 4) return fail_at("truncated \\u escape");
    out = 0;
    for (int k = 0; k < 4; ++k) {
      const int v = hex_value(in_[pos_ + k]);
      if (v < 0) return fail_at("invalid \\u escape");
      out = (out << 4) | static_cast<std::uint32_t>(v);
    }
    pos_ += 4;
    return true;
  }

  // Decodes the escape at pos_ (a backslash) and appends it as UTF-8.
  bool read_escape(std::string& out) {
    if (in_.size() - pos_ < 2) return fail_at("unterminated string");
    const char e = in_[pos_ + 1];
    pos_ += 2;
    switch (e) {
      case '"':
        out.push_back('"');
        return true;
      case '\\':
        out.push_back('\\');
        return true;
      case '/':
        out.push_back('/');
        return true;
      case 'b':
        out.push_back('\b');
        return true;
      case 'f':
        out.push_back('\f');
        return true;
      case 'n':
        out.push_back('\n');
        return true;
      case 'r':
        out.push_back('\r');
        return true;
      case 't':
        out.push_back('\t');
        return true;
      case 'u':
        break;
      default:
        pos_ -= 2;
        return fail_at("invalid escape");
    }
    std::uint32_t cp = 0;
    if (!read_hex4(cp)) return false;
    if (cp >= 0xdc00 && cp <= 0xdfff) return fail_at("unpaired surrogate");
    if (cp >= 0xd800 && cp <= 0xdbff) {
      if (in_.substr(pos_, 2) != "\\u") return fail_at("unpaired surrogate");
      pos_ += 2;
      std::uint32_t low = 0;
      if (!read_hex4(low)) return false;
      if (low < 0xdc00 || low > 0xdfff) return fail_at("unpaired surrogate");
      cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
    }
    detail::append_utf8(out, cp);
    return true;
  }

  bool open() {
    if (!enter()) return false;
    ++pos_;
    first_ = true;
    return true;
  }
  // Advances to the next element of the innermost container, or past its
  // closing bracket. `first_` is true right after an opening bracket and
  // false once any element has been read (a finished nested container
  // counts), which is all the comma logic needs: no stack.
  bool next(char close) {
    if (failed()) return false;
    skip_space();
    if (pos_ >= in_.size()) return fail_at("unexpected end of input");
    if (in_[pos_] == close) {
      ++pos_;
      leave();
      first_ = false;
      return false;
    }
    if (!first_) {
      if (in_[pos_] != ',') {
        return fail_at(close == ']' ? "expected ',' or ']'"
                                    : "expected ',' or '}'");
      }
      ++pos_;
    }
    first_ = false;
    return true;
  }

  std::string_view in_;
  std::size_t pos_ = 0;
  bool first_ = false;
  std::string scratch_;
};

}  // namespace tessera::json

#endif  // TESSERA_JSON_READER_H_
