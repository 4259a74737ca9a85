// The MessagePack writer of the realm codecs (patch_codec.cc, wire.cc):
// always the shortest form of every integer, string, bin, array and map
// header, floats as float64. Appends to a string; never fails.
#ifndef TESSERA_REALM_MSGPACK_WRITER_H_
#define TESSERA_REALM_MSGPACK_WRITER_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <utility>

namespace tessera::realm {

class MsgWriter {
 public:
  std::string Take() { return std::move(out_); }
  size_t size() const { return out_.size(); }
  // Writes into `buffer` from now on (emptied, its capacity kept): one
  // allocation for many messages encoded in turn.
  void Reuse(std::string buffer) {
    buffer.clear();
    out_ = std::move(buffer);
  }
  void Reserve(size_t bytes) { out_.reserve(bytes); }

  void Uint(uint64_t v) {
    if (v < 0x80) {
      Byte(static_cast<uint8_t>(v));
    } else if (v <= 0xff) {
      Byte(0xcc);
      Be(v, 1);
    } else if (v <= 0xffff) {
      Byte(0xcd);
      Be(v, 2);
    } else if (v <= 0xffffffffu) {
      Byte(0xce);
      Be(v, 4);
    } else {
      Byte(0xcf);
      Be(v, 8);
    }
  }

  void Int(int64_t v) {
    if (v >= 0) return Uint(static_cast<uint64_t>(v));
    const auto bits = static_cast<uint64_t>(v);
    if (v >= -32) {
      Byte(static_cast<uint8_t>(bits));
    } else if (v >= std::numeric_limits<int8_t>::min()) {
      Byte(0xd0);
      Be(bits, 1);
    } else if (v >= std::numeric_limits<int16_t>::min()) {
      Byte(0xd1);
      Be(bits, 2);
    } else if (v >= std::numeric_limits<int32_t>::min()) {
      Byte(0xd2);
      Be(bits, 4);
    } else {
      Byte(0xd3);
      Be(bits, 8);
    }
  }

  void Double(double d) {
    Byte(0xcb);
    uint64_t bits = 0;
    static_assert(sizeof bits == sizeof d);
    std::memcpy(&bits, &d, sizeof bits);
    Be(bits, 8);
  }
  void Bool(bool b) { Byte(b ? 0xc3 : 0xc2); }
  void Nil() { Byte(0xc0); }

  void Str(std::string_view s) {
    Header(s.size(), 0xa0, 32, 0xd9, 0xda, 0xdb);
    out_.append(s);
  }
  // bin has no fix form: bin 8 from length 0.
  void Bin(std::string_view s) {
    Header(s.size(), 0, 0, 0xc4, 0xc5, 0xc6);
    out_.append(s);
  }
  // Bytes already encoded (a whole element, or room kept for one).
  void Raw(std::string_view bytes) { out_.append(bytes); }
  void Array(size_t n) { Header(n, 0x90, 16, 0, 0xdc, 0xdd); }
  void Map(size_t n) { Header(n, 0x80, 16, 0, 0xde, 0xdf); }

 private:
  void Byte(uint8_t b) { out_.push_back(static_cast<char>(b)); }
  void Be(uint64_t v, int n) {
    for (int k = n - 1; k >= 0; --k) Byte(static_cast<uint8_t>(v >> (8 * k)));
  }
  // `fix` | n below `limit` (limit 0: no fix form), else the 8-bit (b8 0:
  // none), 16- or 32-bit length form.
  void Header(size_t n, uint8_t fix, size_t limit, uint8_t b8, uint8_t b16,
              uint8_t b32) {
    if (n < limit) {
      Byte(static_cast<uint8_t>(fix | n));
    } else if (b8 != 0 && n <= 0xff) {
      Byte(b8);
      Be(n, 1);
    } else if (n <= 0xffff) {
      Byte(b16);
      Be(n, 2);
    } else {
      Byte(b32);
      Be(n, 4);
    }
  }

  std::string out_;
};

}  // namespace tessera::realm

#endif  // TESSERA_REALM_MSGPACK_WRITER_H_
