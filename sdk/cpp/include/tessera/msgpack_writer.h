// MessagePack writer (https://msgpack.org spec, 2017 edition): appends to a
// caller-owned byte buffer, so a buffer reused across ticks stops allocating
// once it has grown to the largest message. Always picks the smallest
// encoding of each integer, string and container header.
#ifndef TESSERA_MSGPACK_WRITER_H_
#define TESSERA_MSGPACK_WRITER_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace tessera::msgpack {

class Writer {
 public:
  // Appends to `out`, which must outlive the writer.
  explicit Writer(std::string& out) : out_(out) {}

  void null() { byte(0xc0); }
  void boolean(bool value) { byte(value ? 0xc3 : 0xc2); }

  void int64(std::int64_t value) {
    if (value >= 0) return uint64(static_cast<std::uint64_t>(value));
    if (value >= -32) return byte(static_cast<std::uint8_t>(value));
    if (value >= INT8_MIN)
      return head(0xd0, static_cast<std::uint8_t>(value), 1);
    if (value >= INT16_MIN) {
      return head(0xd1, static_cast<std::uint16_t>(value), 2);
    }
    if (value >= INT32_MIN) {
      return head(0xd2, static_cast<std::uint32_t>(value), 4);
    }
    head(0xd3, static_cast<std::uint64_t>(value), 8);
  }

  void uint64(std::uint64_t value) {
    if (value < 0x80) return byte(static_cast<std::uint8_t>(value));
    if (value <= UINT8_MAX) return head(0xcc, value, 1);
    if (value <= UINT16_MAX) return head(0xcd, value, 2);
    if (value <= UINT32_MAX) return head(0xce, value, 4);
    head(0xcf, value, 8);
  }

  void float32(float value) {
    std::uint32_t bits = 0;
    std::memcpy(&bits, &value, sizeof bits);
    head(0xca, bits, 4);
  }
  void float64(double value) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, &value, sizeof bits);
    head(0xcb, bits, 8);
  }

  // `value` should be UTF-8; it is written as is.
  void string(std::string_view value) {
    const std::size_t n = value.size();
    if (n < 32) {
      byte(static_cast<std::uint8_t>(0xa0 | n));
    } else if (n <= UINT8_MAX) {
      head(0xd9, n, 1);
    } else if (n <= UINT16_MAX) {
      head(0xda, n, 2);
    } else {
      head(0xdb, n, 4);
    }
    out_.append(value);
  }

  void binary(std::string_view bytes) {
    const std::size_t n = bytes.size();
    if (n <= UINT8_MAX) {
      head(0xc4, n, 1);
    } else if (n <= UINT16_MAX) {
      head(0xc5, n, 2);
    } else {
      head(0xc6, n, 4);
    }
    out_.append(bytes);
  }

  // A container header for exactly `count` elements (pairs for objects);
  // the caller writes them next. end_*() exist for symmetry with the JSON
  // writer and write nothing.
  void begin_array(std::size_t count) {
    if (count < 16) return byte(static_cast<std::uint8_t>(0x90 | count));
    if (count <= UINT16_MAX) return head(0xdc, count, 2);
    head(0xdd, count, 4);
  }
  void end_array() {}
  void begin_object(std::size_t count) {
    if (count < 16) return byte(static_cast<std::uint8_t>(0x80 | count));
    if (count <= UINT16_MAX) return head(0xde, count, 2);
    head(0xdf, count, 4);
  }
  void key(std::string_view name) { string(name); }
  void end_object() {}

 private:
  void byte(std::uint8_t b) { out_.push_back(static_cast<char>(b)); }
  // A type byte followed by the low `size` bytes of `value`, big-endian.
  void head(std::uint8_t type, std::uint64_t value, int size) {
    char bytes[9];
    bytes[0] = static_cast<char>(type);
    for (int i = 0; i < size; ++i) {
      bytes[1 + i] = static_cast<char>(value >> (8 * (size - 1 - i)));
    }
    out_.append(bytes, 1 + size);
  }

  std::string& out_;
};

}  // namespace tessera::msgpack

#endif  // TESSERA_MSGPACK_WRITER_H_
