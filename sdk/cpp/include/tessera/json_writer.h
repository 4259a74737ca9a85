// JSON writer (RFC 8259): appends compact JSON to a caller-owned buffer, so a
// buffer reused across ticks stops allocating once it has grown to the
// largest message. Commas are placed automatically; the caller keeps
// begin_*/end_* and key/value calls balanced.
#ifndef TESSERA_JSON_WRITER_H_
#define TESSERA_JSON_WRITER_H_

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "tessera/detail/utf8.h"

namespace tessera::json {

class Writer {
 public:
  // Appends to `out`, which must outlive the writer.
  explicit Writer(std::string& out) : out_(out) {}

  void null() { raw_value("null"); }
  void boolean(bool value) { raw_value(value ? "true" : "false"); }

  void int64(std::int64_t value) {
    const bool negative = value < 0;
    // Negate in unsigned arithmetic: -INT64_MIN overflows int64.
    std::uint64_t magnitude = static_cast<std::uint64_t>(value);
    if (negative) magnitude = ~magnitude + 1;
    write_integer(negative, magnitude);
  }
  void uint64(std::uint64_t value) { write_integer(false, value); }

  // Shortest of %.6g..%.9g (float) or %.15g..%.17g (double) that reads back
  // as the same value. JSON has no NaN or infinity: they are written as null.
  void float32(float value) {
    write_floating(value, 6, 9, [](const char* s) {
      return static_cast<double>(std::strtof(s, nullptr));
    });
  }
  void float64(double value) {
    write_floating(value, 15, 17,
                   [](const char* s) { return std::strtod(s, nullptr); });
  }

  // Invalid UTF-8 in `value` is replaced by U+FFFD, so the output is always
  // valid JSON.
  void string(std::string_view value) {
    comma();
    quoted(value);
    need_comma_ = true;
  }
  // Binary data has no JSON form: written as an array of byte values.
  void binary(std::string_view bytes) {
    begin_array(bytes.size());
    for (char c : bytes) uint64(static_cast<unsigned char>(c));
    end_array();
  }

  // The counts are ignored (JSON needs none); they keep the API identical to
  // msgpack::Writer.
  void begin_array(std::size_t /*count*/) { open('['); }
  void end_array() { close(']'); }
  void begin_object(std::size_t /*count*/) { open('{'); }
  void key(std::string_view name) {
    comma();
    quoted(name);
    out_.push_back(':');
    need_comma_ = false;
  }
  void end_object() { close('}'); }

 private:
  void comma() {
    if (need_comma_) out_.push_back(',');
  }
  void raw_value(std::string_view text) {
    comma();
    out_.append(text);
    need_comma_ = true;
  }
  void open(char c) {
    comma();
    out_.push_back(c);
    need_comma_ = false;
  }
  void close(char c) {
    out_.push_back(c);
    need_comma_ = true;
  }

  void write_integer(bool negative, std::uint64_t magnitude) {
    char digits[21];
    int n = 0;
    do {
      digits[n++] = static_cast<char>('0' + magnitude % 10);
      magnitude /= 10;
    } while (magnitude != 0);
    comma();
    if (negative) out_.push_back('-');
    while (n > 0) out_.push_back(digits[--n]);
    need_comma_ = true;
  }

  template <class T, class Parse>
  void write_floating(T value, int min_digits, int max_digits, Parse parse) {
    if (!std::isfinite(value)) return null();
    char text[40];
    int len = 0;
    for (int digits = min_digits; digits <= max_digits; ++digits) {
      len = std::snprintf(text, sizeof text, "%.*g", digits,
                          static_cast<double>(value));
      if (parse(text) == static_cast<double>(value)) break;
    }
    raw_value(std::string_view(text, static_cast<std::size_t>(len)));
  }

  void quoted(std::string_view s) {
    static constexpr char kHex[] = "0123456789abcdef";
    out_.push_back('"');
    std::size_t i = 0;
    while (i < s.size()) {
      const auto c = static_cast<unsigned char>(s[i]);
      if (c >= 0x80) {
        const std::size_t len = detail::utf8_sequence_length(s, i);
        if (len == 0) {
          out_.append("\\ufffd");
          ++i;
        } else {
          out_.append(s.substr(i, len));
          i += len;
        }
        continue;
      }
      ++i;
      switch (c) {
        case '"':
          out_.append("\\\"");
          break;
        case '\\':
          out_.append("\\\\");
          break;
        case '\n':
          out_.append("\\n");
          break;
        case '\r':
          out_.append("\\r");
          break;
        case '\t':
          out_.append("\\t");
          break;
        case '\b':
          out_.append("\\b");
          break;
        case '\f':
          out_.append("\\f");
          break;
        default:
          if (c < 0x20) {
            const char escape[] = {'\\', 'u',          '0',
                                   '0',  kHex[c >> 4], kHex[c & 0xf]};
            out_.append(escape, sizeof escape);
          } else {
            out_.push_back(static_cast<char>(c));
          }
      }
    }
    out_.push_back('"');
  }

  std::string& out_;
  // True after a complete value: the next value or key needs a comma first.
  bool need_comma_ = false;
};

}  // namespace tessera::json

#endif  // TESSERA_JSON_WRITER_H_
