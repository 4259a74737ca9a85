// MessagePack reader: a bounds-checked pull parser over untrusted bytes.
// Never reads outside the given span, never trusts a length or count before
// checking it against the bytes that remain, and refuses nesting deeper than
// ReaderBase::kMaxDepth. API: see tessera/detail/reader_base.h.
#ifndef TESSERA_MSGPACK_READER_H_
#define TESSERA_MSGPACK_READER_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "tessera/detail/reader_base.h"
#include "tessera/detail/utf8.h"

namespace tessera::msgpack {

class Reader : public detail::ReaderBase {
 public:
  // `bytes` must outlive the reader.
  explicit Reader(std::string_view bytes) : in_(bytes) {}

  Kind peek() const {
    if (failed()) return Kind::kInvalid;
    if (pos_ >= in_.size()) return Kind::kEnd;
    const std::uint8_t b = at(pos_);
    if (b <= 0x7f || b >= 0xe0) return Kind::kInteger;
    if (b <= 0x8f) return Kind::kObject;
    if (b <= 0x9f) return Kind::kArray;
    if (b <= 0xbf) return Kind::kString;
    switch (b) {
      case 0xc0:
        return Kind::kNull;
      case 0xc2:
      case 0xc3:
        return Kind::kBool;
      case 0xc4:
      case 0xc5:
      case 0xc6:
        return Kind::kBinary;
      case 0xc7:
      case 0xc8:
      case 0xc9:
      case 0xd4:
      case 0xd5:
      case 0xd6:
      case 0xd7:
      case 0xd8:
        return Kind::kExtension;
      case 0xca:
      case 0xcb:
        return Kind::kFloat;
      case 0xd9:
      case 0xda:
      case 0xdb:
        return Kind::kString;
      case 0xdc:
      case 0xdd:
        return Kind::kArray;
      case 0xde:
      case 0xdf:
        return Kind::kObject;
      default:
        break;
    }
    if (b >= 0xcc && b <= 0xd3) return Kind::kInteger;
    return Kind::kInvalid;  // 0xc1, never used
  }

  bool read_null() {
    if (peek() != Kind::kNull) return mismatch("null");
    ++pos_;
    return true;
  }

  bool read_bool(bool& out) {
    if (peek() != Kind::kBool) return mismatch("a boolean");
    out = at(pos_++) == 0xc3;
    return true;
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
    std::string_view s;
    if (!read_string_view(s)) return false;
    out.assign(s.data(), s.size());
    return true;
  }

  bool begin_array() {
    if (peek() != Kind::kArray) return mismatch("an array");
    const std::uint8_t b = at(pos_);
    std::uint64_t count = 0;
    if (b <= 0x9f) {
      ++pos_;
      count = b & 0x0f;
    } else if (!read_payload(b == 0xdc ? 2 : 4, count)) {
      return false;
    }
    return open(count);
  }
  bool array_next() { return next(); }

  bool begin_object() {
    if (peek() != Kind::kObject) return mismatch("an object");
    const std::uint8_t b = at(pos_);
    std::uint64_t count = 0;
    if (b <= 0x8f) {
      ++pos_;
      count = b & 0x0f;
    } else if (!read_payload(b == 0xde ? 2 : 4, count)) {
      return false;
    }
    return open(count * 2);
  }
  bool object_next(std::string& key) {
    if (!next()) return false;
    // The key and its value are the two elements of this pair.
    --remaining_[depth() - 1];
    if (peek() != Kind::kString) {
      return fail_at("object keys must be strings");
    }
    return read_string(key);
  }

  bool skip() {
    const Kind kind = peek();
    if (kind == Kind::kEnd) return fail_at("truncated");
    if (kind == Kind::kInvalid) return fail_at("invalid type byte");
    const std::uint8_t b = at(pos_);
    if (kind == Kind::kArray || kind == Kind::kObject) {
      if (!(kind == Kind::kArray ? begin_array() : begin_object())) {
        return false;
      }
      while (next()) {
        if (!skip()) return false;
      }
      return !failed();
    }
    if (kind == Kind::kString) {
      std::string_view ignored;
      return read_string_view(ignored);
    }
    ++pos_;
    std::uint64_t size = 0;
    if (b <= 0x7f || b >= 0xe0 || b == 0xc0 || b == 0xc2 || b == 0xc3) {
      size = 0;
    } else if (b >= 0xc4 && b <= 0xc6) {  // bin 8/16/32
      if (!read_length(1 << (b - 0xc4), size)) return false;
    } else if (b >= 0xc7 && b <= 0xc9) {  // ext 8/16/32: length, type, data
      if (!read_length(1 << (b - 0xc7), size)) return false;
      size += 1;
    } else if (b == 0xca) {
      size = 4;
    } else if (b == 0xcb) {
      size = 8;
    } else if (b >= 0xcc && b <= 0xcf) {
      size = std::uint64_t{1} << (b - 0xcc);
    } else if (b >= 0xd0 && b <= 0xd3) {
      size = std::uint64_t{1} << (b - 0xd0);
    } else {  // fixext 1/2/4/8/16: type, data
      size = 1 + (std::uint64_t{1} << (b - 0xd4));
    }
    if (!need(size)) return false;
    pos_ += size;
    return true;
  }

  bool finish() {
    if (failed()) return false;
    if (pos_ != in_.size()) return fail_at("unexpected bytes after the value");
    return true;
  }

 private:
  std::uint8_t at(std::size_t i) const {
    return static_cast<std::uint8_t>(in_[i]);
  }

  bool fail_at(std::string_view what) {
    return fail("malformed MessagePack at byte " + std::to_string(pos_) + ": " +
                std::string(what));
  }
  bool mismatch(std::string_view expected) {
    const Kind kind = peek();
    if (kind == Kind::kInvalid && !failed()) {
      return fail_at("invalid type byte");
    }
    if (kind == Kind::kEnd) return fail_at("truncated");
    return fail(detail::mismatch_message(expected, kind));
  }

  bool need(std::uint64_t n) {
    if (in_.size() - pos_ < n) return fail_at("truncated");
    return true;
  }

  // Reads an unsigned big-endian integer of `size` bytes (1, 2, 4 or 8).
  bool read_length(int size, std::uint64_t& out) {
    if (!need(size)) return false;
    out = 0;
    for (int i = 0; i < size; ++i) out = (out << 8) | at(pos_++);
    return true;
  }

  // Consumes a type byte plus a `size`-byte payload.
  bool read_payload(int size, std::uint64_t& out) {
    ++pos_;
    return read_length(size, out);
  }

  bool read_number(detail::Number& n, std::string_view expected) {
    const Kind kind = peek();
    if (kind != Kind::kInteger && kind != Kind::kFloat) {
      return mismatch(expected);
    }
    const std::uint8_t b = at(pos_);
    using Type = detail::Number::Type;
    if (b <= 0x7f) {
      ++pos_;
      n.type = Type::kUnsigned;
      n.u = b;
      return true;
    }
    if (b >= 0xe0) {
      ++pos_;
      n.type = Type::kSigned;
      n.i = static_cast<std::int8_t>(b);
      return true;
    }
    std::uint64_t raw = 0;
    if (b == 0xca) {
      if (!read_payload(4, raw)) return false;
      float f = 0;
      const auto bits = static_cast<std::uint32_t>(raw);
      std::memcpy(&f, &bits, sizeof f);
      n.type = Type::kDouble;
      n.d = f;
      return true;
    }
    if (b == 0xcb) {
      if (!read_payload(8, raw)) return false;
      n.type = Type::kDouble;
      std::memcpy(&n.d, &raw, sizeof n.d);
      return true;
    }
    if (b >= 0xcc && b <= 0xcf) {
      if (!read_payload(1 << (b - 0xcc), raw)) return false;
      n.type = Type::kUnsigned;
      n.u = raw;
      return true;
    }
    // int 8/16/32/64: sign-extend from the payload width.
    const int size = 1 << (b - 0xd0);
    if (!read_payload(size, raw)) return false;
    n.type = Type::kSigned;
    if (size == 1) n.i = static_cast<std::int8_t>(raw);
    if (size == 2) n.i = static_cast<std::int16_t>(raw);
    if (size == 4) n.i = static_cast<std::int32_t>(raw);
    if (size == 8) n.i = static_cast<std::int64_t>(raw);
    return true;
  }

  // A view into the input; valid UTF-8 only.
  bool read_string_view(std::string_view& out) {
    if (peek() != Kind::kString) return mismatch("a string");
    const std::uint8_t b = at(pos_);
    std::uint64_t size = 0;
    if (b <= 0xbf) {
      ++pos_;
      size = b & 0x1f;
    } else if (!read_payload(1 << (b - 0xd9), size)) {
      return false;
    }
    if (!need(size)) return false;
    out = in_.substr(pos_, size);
    if (!detail::is_valid_utf8(out)) return fail_at("invalid UTF-8 in string");
    pos_ += size;
    return true;
  }

  // Enters a container of `count` elements (keys and values both count).
  bool open(std::uint64_t count) {
    // Every element takes at least one byte: refuse counts the input cannot
    // hold before anyone reserves memory for them.
    if (!need(count)) return false;
    if (!enter()) return false;
    remaining_[depth() - 1] = count;
    return true;
  }
  bool next() {
    if (failed()) return false;
    std::uint64_t& remaining = remaining_[depth() - 1];
    if (remaining == 0) {
      leave();
      return false;
    }
    --remaining;
    return true;
  }

  std::string_view in_;
  std::size_t pos_ = 0;
  std::array<std::uint64_t, kMaxDepth> remaining_{};
};

}  // namespace tessera::msgpack

#endif  // TESSERA_MSGPACK_READER_H_
