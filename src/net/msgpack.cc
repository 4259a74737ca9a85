#include "net/msgpack.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cassert>
#include <limits>

namespace tessera::net::msgpack {

const char* TypeName(Type type) {
  switch (type) {
    case Type::kNil:
      return "nil";
    case Type::kBool:
      return "bool";
    case Type::kUint:
      return "unsigned integer";
    case Type::kNegInt:
      return "negative integer";
    case Type::kFloat:
      return "float";
    case Type::kStr:
      return "str";
    case Type::kBin:
      return "bin";
    case Type::kArray:
      return "array";
    case Type::kMap:
      return "map";
    case Type::kExt:
      return "ext";
  }
  return "?";
}

// ---- Writer ----------------------------------------------------------------

void Writer::Byte(uint8_t b) { out_->push_back(static_cast<char>(b)); }

void Writer::BigEndian(uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) Byte(static_cast<uint8_t>(v >> (8 * i)));
}

void Writer::Nil() { Byte(0xc0); }

void Writer::Bool(bool v) { Byte(v ? 0xc3 : 0xc2); }

void Writer::Uint(uint64_t v) {
  if (v <= 0x7f) {
    Byte(static_cast<uint8_t>(v));
  } else if (v <= 0xff) {
    Byte(0xcc);
    BigEndian(v, 1);
  } else if (v <= 0xffff) {
    Byte(0xcd);
    BigEndian(v, 2);
  } else if (v <= 0xffffffff) {
    Byte(0xce);
    BigEndian(v, 4);
  } else {
    Byte(0xcf);
    BigEndian(v, 8);
  }
}

void Writer::Int(int64_t v) {
  if (v >= 0) return Uint(static_cast<uint64_t>(v));
  const uint64_t bits = static_cast<uint64_t>(v);
  if (v >= -32) {
    Byte(static_cast<uint8_t>(bits));  // negative fixint 0xe0..0xff
  } else if (v >= std::numeric_limits<int8_t>::min()) {
    Byte(0xd0);
    BigEndian(bits, 1);
  } else if (v >= std::numeric_limits<int16_t>::min()) {
    Byte(0xd1);
    BigEndian(bits, 2);
  } else if (v >= std::numeric_limits<int32_t>::min()) {
    Byte(0xd2);
    BigEndian(bits, 4);
  } else {
    Byte(0xd3);
    BigEndian(bits, 8);
  }
}

void Writer::Double(double v) {
  Byte(0xcb);
  BigEndian(std::bit_cast<uint64_t>(v), 8);
}

void Writer::StrHeader(size_t n) {
  assert(n <= 0xffffffffu);
  if (n <= 31) {
    Byte(static_cast<uint8_t>(0xa0 | n));
  } else if (n <= 0xff) {
    Byte(0xd9);
    BigEndian(n, 1);
  } else if (n <= 0xffff) {
    Byte(0xda);
    BigEndian(n, 2);
  } else {
    Byte(0xdb);
    BigEndian(n, 4);
  }
}

void Writer::BinHeader(size_t n) {
  assert(n <= 0xffffffffu);
  if (n <= 0xff) {
    Byte(0xc4);
    BigEndian(n, 1);
  } else if (n <= 0xffff) {
    Byte(0xc5);
    BigEndian(n, 2);
  } else {
    Byte(0xc6);
    BigEndian(n, 4);
  }
}

void Writer::ArrayHeader(size_t n) {
  assert(n <= 0xffffffffu);
  if (n <= 15) {
    Byte(static_cast<uint8_t>(0x90 | n));
  } else if (n <= 0xffff) {
    Byte(0xdc);
    BigEndian(n, 2);
  } else {
    Byte(0xdd);
    BigEndian(n, 4);
  }
}

void Writer::MapHeader(size_t n) {
  assert(n <= 0xffffffffu);
  if (n <= 15) {
    Byte(static_cast<uint8_t>(0x80 | n));
  } else if (n <= 0xffff) {
    Byte(0xde);
    BigEndian(n, 2);
  } else {
    Byte(0xdf);
    BigEndian(n, 4);
  }
}

void Writer::Str(std::string_view s) {
  StrHeader(s.size());
  out_->append(s);
}

void Writer::Bin(std::string_view bytes) {
  BinHeader(bytes.size());
  out_->append(bytes);
}

// ---- Reader ----------------------------------------------------------------

// One value's header, fully bounds-checked by ParseHead: `size` bytes from
// the value's start cover the marker, the length/value fields and (for
// str/bin/ext) the payload; containers' elements follow.
struct Reader::Head {
  Type type = Type::kNil;
  size_t size = 1;
  uint64_t count = 0;  // array elements, map pairs, str/bin/ext length
  uint64_t bits = 0;   // bool, integer (two's complement), float bits
  size_t payload = 0;  // offset of the str/bin payload
};

namespace {

Status Truncated(const char* what, size_t pos, uint64_t need, size_t left) {
  return InvalidArgument("truncated MessagePack data: " + std::string(what) +
                         " at byte " + std::to_string(pos) + " needs " +
                         std::to_string(need) + " bytes, " +
                         std::to_string(left) + " left");
}

uint64_t LoadBigEndian(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | p[i];
  return v;
}

int64_t SignExtend(uint64_t v, int bytes) {
  const int shift = 64 - 8 * bytes;
  return static_cast<int64_t>(v << shift) >> shift;
}

}  // namespace

Reader::Reader(std::span<const uint8_t> bytes, int max_depth)
    : bytes_(bytes), max_depth_(std::clamp(max_depth, 1, kMaxDepth)) {}

Result<Reader::Head> Reader::ParseHead(size_t pos) const {
  if (pos >= bytes_.size()) {
    return InvalidArgument("truncated MessagePack data: no value at byte " +
                           std::to_string(pos));
  }
  const uint8_t marker = bytes_[pos];
  const uint8_t* field = bytes_.data() + pos + 1;
  const size_t left = bytes_.size() - pos - 1;  // bytes after the marker
  Head h;

  // Fixed-size value: `n` bytes after the marker.
  auto fixed = [&](Type type, int n, const char* what) -> Result<Head> {
    if (static_cast<size_t>(n) > left) return Truncated(what, pos, n, left);
    h.type = type;
    h.size = 1 + n;
    h.bits = LoadBigEndian(field, n);
    return h;
  };
  // str/bin/ext: a `len_bytes` length, then the payload (`extra` more bytes
  // for ext's type byte).
  auto sized = [&](Type type, int len_bytes, uint64_t len, int extra,
                   const char* what) -> Result<Head> {
    if (static_cast<size_t>(len_bytes) > left) {
      return Truncated(what, pos, len_bytes, left);
    }
    if (len_bytes > 0) len = LoadBigEndian(field, len_bytes);
    const uint64_t need = len + extra;
    if (need > left - len_bytes) {
      return Truncated(what, pos, need, left - len_bytes);
    }
    h.type = type;
    h.count = len;
    h.payload = pos + 1 + len_bytes + extra;
    h.size = 1 + len_bytes + need;
    return h;
  };
  // array/map: a `count_bytes` count; every element needs at least a byte.
  auto container = [&](Type type, int count_bytes, uint64_t count,
                       const char* what) -> Result<Head> {
    if (static_cast<size_t>(count_bytes) > left) {
      return Truncated(what, pos, count_bytes, left);
    }
    if (count_bytes > 0) count = LoadBigEndian(field, count_bytes);
    const uint64_t min_bytes = type == Type::kMap ? 2 * count : count;
    if (min_bytes > left - count_bytes) {
      return InvalidArgument(
          "truncated MessagePack data: " + std::string(what) + " of " +
          std::to_string(count) + " elements at byte " + std::to_string(pos) +
          " with " + std::to_string(left - count_bytes) + " bytes left");
    }
    h.type = type;
    h.count = count;
    h.size = 1 + count_bytes;
    return h;
  };
  auto integer = [&](int n, bool is_signed) -> Result<Head> {
    auto r = fixed(Type::kUint, n, "integer");
    if (!r.ok() || !is_signed) return r;
    const int64_t v = SignExtend(r->bits, n);
    r->bits = static_cast<uint64_t>(v);
    r->type = v < 0 ? Type::kNegInt : Type::kUint;
    return r;
  };

  if (marker <= 0x7f) {
    h.type = Type::kUint;
    h.bits = marker;
    return h;
  }
  if (marker >= 0xe0) {
    h.type = Type::kNegInt;
    h.bits = static_cast<uint64_t>(SignExtend(marker, 1));
    return h;
  }
  if (marker <= 0x8f) return container(Type::kMap, 0, marker & 0x0f, "map");
  if (marker <= 0x9f) {
    return container(Type::kArray, 0, marker & 0x0f, "array");
  }
  if (marker <= 0xbf) return sized(Type::kStr, 0, marker & 0x1f, 0, "str");
  switch (marker) {
    case 0xc0:
      h.type = Type::kNil;
      return h;
    case 0xc2:
      h.type = Type::kBool;
      h.bits = 0;
      return h;
    case 0xc3:
      h.type = Type::kBool;
      h.bits = 1;
      return h;
    case 0xc4:
      return sized(Type::kBin, 1, 0, 0, "bin");
    case 0xc5:
      return sized(Type::kBin, 2, 0, 0, "bin");
    case 0xc6:
      return sized(Type::kBin, 4, 0, 0, "bin");
    case 0xc7:
      return sized(Type::kExt, 1, 0, 1, "ext");
    case 0xc8:
      return sized(Type::kExt, 2, 0, 1, "ext");
    case 0xc9:
      return sized(Type::kExt, 4, 0, 1, "ext");
    case 0xca:
      return fixed(Type::kFloat, 4, "float32");
    case 0xcb:
      return fixed(Type::kFloat, 8, "float64");
    case 0xcc:
      return integer(1, false);
    case 0xcd:
      return integer(2, false);
    case 0xce:
      return integer(4, false);
    case 0xcf:
      return integer(8, false);
    case 0xd0:
      return integer(1, true);
    case 0xd1:
      return integer(2, true);
    case 0xd2:
      return integer(4, true);
    case 0xd3:
      return integer(8, true);
    case 0xd4:
      return sized(Type::kExt, 0, 1, 1, "fixext");
    case 0xd5:
      return sized(Type::kExt, 0, 2, 1, "fixext");
    case 0xd6:
      return sized(Type::kExt, 0, 4, 1, "fixext");
    case 0xd7:
      return sized(Type::kExt, 0, 8, 1, "fixext");
    case 0xd8:
      return sized(Type::kExt, 0, 16, 1, "fixext");
    case 0xd9:
      return sized(Type::kStr, 1, 0, 0, "str");
    case 0xda:
      return sized(Type::kStr, 2, 0, 0, "str");
    case 0xdb:
      return sized(Type::kStr, 4, 0, 0, "str");
    case 0xdc:
      return container(Type::kArray, 2, 0, "array");
    case 0xdd:
      return container(Type::kArray, 4, 0, "array");
    case 0xde:
      return container(Type::kMap, 2, 0, "map");
    case 0xdf:
      return container(Type::kMap, 4, 0, "map");
  }
  // Only 0xc1 is left: "never used" in the spec.
  return InvalidArgument("invalid MessagePack byte 0xc1 at byte " +
                         std::to_string(pos));
}

Result<Reader::Head> Reader::Expect(Type type, const char* want) const {
  auto h = ParseHead(pos_);
  if (!h.ok()) return h.status();
  if (h->type != type) {
    return InvalidArgument(std::string("expected ") + want + ", got " +
                           TypeName(h->type));
  }
  return h;
}

Result<Type> Reader::PeekType() const {
  auto h = ParseHead(pos_);
  if (!h.ok()) return h.status();
  return h->type;
}

Status Reader::ReadNil() {
  auto h = Expect(Type::kNil, "nil");
  if (!h.ok()) return h.status();
  pos_ += h->size;
  return Status::Ok();
}

Result<bool> Reader::ReadBool() {
  auto h = Expect(Type::kBool, "a bool");
  if (!h.ok()) return h.status();
  pos_ += h->size;
  return h->bits != 0;
}

Result<uint64_t> Reader::ReadUint() {
  auto h = Expect(Type::kUint, "an unsigned integer");
  if (!h.ok()) return h.status();
  pos_ += h->size;
  return h->bits;
}

Result<int64_t> Reader::ReadInt() {
  auto h = ParseHead(pos_);
  if (!h.ok()) return h.status();
  if (h->type != Type::kUint && h->type != Type::kNegInt) {
    return InvalidArgument(std::string("expected an integer, got ") +
                           TypeName(h->type));
  }
  if (h->type == Type::kUint &&
      h->bits > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return InvalidArgument("integer " + std::to_string(h->bits) +
                           " out of int64 range");
  }
  pos_ += h->size;
  return static_cast<int64_t>(h->bits);
}

Result<double> Reader::ReadDouble() {
  auto h = Expect(Type::kFloat, "a float");
  if (!h.ok()) return h.status();
  pos_ += h->size;
  if (h->size == 5) {
    return static_cast<double>(
        std::bit_cast<float>(static_cast<uint32_t>(h->bits)));
  }
  return std::bit_cast<double>(h->bits);
}

Result<std::string_view> Reader::ReadStr() {
  auto h = Expect(Type::kStr, "a str");
  if (!h.ok()) return h.status();
  pos_ += h->size;
  return std::string_view(
      reinterpret_cast<const char*>(bytes_.data() + h->payload), h->count);
}

Result<std::string_view> Reader::ReadBin() {
  auto h = Expect(Type::kBin, "a bin");
  if (!h.ok()) return h.status();
  pos_ += h->size;
  return std::string_view(
      reinterpret_cast<const char*>(bytes_.data() + h->payload), h->count);
}

Result<uint32_t> Reader::ReadArrayHeader() {
  auto h = Expect(Type::kArray, "an array");
  if (!h.ok()) return h.status();
  pos_ += h->size;
  return static_cast<uint32_t>(h->count);
}

Result<uint32_t> Reader::ReadMapHeader() {
  auto h = Expect(Type::kMap, "a map");
  if (!h.ok()) return h.status();
  pos_ += h->size;
  return static_cast<uint32_t>(h->count);
}

Status Reader::Skip() {
  // pending[d]: values still to skip at nesting level d (level 0 holds the
  // value being skipped). Counts were checked against the remaining bytes,
  // so they cannot overflow.
  std::array<uint64_t, kMaxDepth + 1> pending;
  int depth = 0;
  pending[0] = 1;
  size_t pos = pos_;
  while (true) {
    while (depth >= 0 && pending[depth] == 0) --depth;
    if (depth < 0) break;
    --pending[depth];
    auto h = ParseHead(pos);
    if (!h.ok()) return h.status();
    pos += h->size;
    if (h->type == Type::kArray || h->type == Type::kMap) {
      if (depth + 1 > max_depth_) {
        return InvalidArgument("MessagePack nesting deeper than " +
                               std::to_string(max_depth_) + " at byte " +
                               std::to_string(pos - h->size));
      }
      pending[++depth] = h->type == Type::kMap ? 2 * h->count : h->count;
    }
  }
  pos_ = pos;
  return Status::Ok();
}

}  // namespace tessera::net::msgpack
