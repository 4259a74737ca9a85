// The realm layer's MessagePack reader (msgpack_reader.h).
#include "realm/msgpack_reader.h"

#include <cstring>

namespace tessera::realm {

const char* MsgKindName(MsgKind kind) {
  switch (kind) {
    case MsgKind::kNil:
      return "nil";
    case MsgKind::kBool:
      return "bool";
    case MsgKind::kUint:
      return "unsigned integer";
    case MsgKind::kInt:
      return "negative integer";
    case MsgKind::kFloat:
      return "float";
    case MsgKind::kStr:
      return "string";
    case MsgKind::kArray:
      return "array";
    case MsgKind::kMap:
      return "map";
    case MsgKind::kBin:
      return "bin";
    case MsgKind::kExt:
      return "ext";
  }
  return "unknown";
}

bool MsgReader::Be(size_t n, uint64_t* v, std::string* why) {
  if (left() < n) {
    *why = "truncated: " + std::to_string(n) + " bytes needed, " +
           std::to_string(left()) + " left";
    return false;
  }
  uint64_t out = 0;
  for (size_t k = 0; k < n; ++k) out = (out << 8) | bytes_[pos_ + k];
  pos_ += n;
  *v = out;
  return true;
}

bool MsgReader::Next(MsgItem* item, std::string* why) {
  if (done()) {
    *why = "truncated: the bytes end where an item was expected";
    return false;
  }
  const uint8_t b = bytes_[pos_++];
  *item = MsgItem();
  uint64_t v = 0;
  auto sized = [&](MsgKind kind, size_t width) {
    if (!Be(width, &v, why)) return false;
    item->kind = kind;
    item->count = static_cast<size_t>(v);
    return true;
  };
  // ext 8/16/32 (`width` bytes of length) or fixext (`width` 0, `fixed`
  // bytes), then the type byte.
  auto ext = [&](size_t width, size_t fixed) {
    if (width == 0) {
      v = fixed;
    } else if (!Be(width, &v, why)) {
      return false;
    }
    uint64_t type = 0;
    if (!Be(1, &type, why)) return false;
    item->kind = MsgKind::kExt;
    item->count = static_cast<size_t>(v);
    item->ext_type = static_cast<int8_t>(static_cast<uint8_t>(type));
    return true;
  };
  auto uint = [&](size_t width) {
    if (!Be(width, &v, why)) return false;
    item->kind = MsgKind::kUint;
    item->u = v;
    return true;
  };
  auto sint = [&](size_t width) {
    if (!Be(width, &v, why)) return false;
    const int shift = static_cast<int>(64 - 8 * width);
    // Sign-extend the `width`-byte two's complement value.
    const int64_t s = static_cast<int64_t>(v << shift) >> shift;
    if (s >= 0) {
      item->kind = MsgKind::kUint;
      item->u = static_cast<uint64_t>(s);
    } else {
      item->kind = MsgKind::kInt;
      item->i = s;
    }
    return true;
  };

  if (b <= 0x7f) {
    item->kind = MsgKind::kUint;
    item->u = b;
    return true;
  }
  if (b >= 0xe0) {
    item->kind = MsgKind::kInt;
    item->i = static_cast<int8_t>(b);
    return true;
  }
  if ((b & 0xf0) == 0x80) {
    item->kind = MsgKind::kMap;
    item->count = b & 0x0f;
    return true;
  }
  if ((b & 0xf0) == 0x90) {
    item->kind = MsgKind::kArray;
    item->count = b & 0x0f;
    return true;
  }
  if ((b & 0xe0) == 0xa0) {
    item->kind = MsgKind::kStr;
    item->count = b & 0x1f;
    return true;
  }
  switch (b) {
    case 0xc0:
      item->kind = MsgKind::kNil;
      return true;
    case 0xc2:
    case 0xc3:
      item->kind = MsgKind::kBool;
      item->b = b == 0xc3;
      return true;
    case 0xca: {
      if (!Be(4, &v, why)) return false;
      const auto bits = static_cast<uint32_t>(v);
      float f = 0;
      std::memcpy(&f, &bits, sizeof f);
      item->kind = MsgKind::kFloat;
      item->f = f;
      return true;
    }
    case 0xcb: {
      if (!Be(8, &v, why)) return false;
      double d = 0;
      std::memcpy(&d, &v, sizeof d);
      item->kind = MsgKind::kFloat;
      item->f = d;
      return true;
    }
    case 0xcc:
      return uint(1);
    case 0xcd:
      return uint(2);
    case 0xce:
      return uint(4);
    case 0xcf:
      return uint(8);
    case 0xd0:
      return sint(1);
    case 0xd1:
      return sint(2);
    case 0xd2:
      return sint(4);
    case 0xd3:
      return sint(8);
    case 0xd9:
      return sized(MsgKind::kStr, 1);
    case 0xda:
      return sized(MsgKind::kStr, 2);
    case 0xdb:
      return sized(MsgKind::kStr, 4);
    case 0xdc:
      return sized(MsgKind::kArray, 2);
    case 0xdd:
      return sized(MsgKind::kArray, 4);
    case 0xde:
      return sized(MsgKind::kMap, 2);
    case 0xdf:
      return sized(MsgKind::kMap, 4);
    default:
      break;
  }
  if (mode_ == Mode::kAll) {
    switch (b) {
      case 0xc4:
        return sized(MsgKind::kBin, 1);
      case 0xc5:
        return sized(MsgKind::kBin, 2);
      case 0xc6:
        return sized(MsgKind::kBin, 4);
      case 0xc7:
        return ext(1, 0);
      case 0xc8:
        return ext(2, 0);
      case 0xc9:
        return ext(4, 0);
      case 0xd4:
        return ext(0, 1);
      case 0xd5:
        return ext(0, 2);
      case 0xd6:
        return ext(0, 4);
      case 0xd7:
        return ext(0, 8);
      case 0xd8:
        return ext(0, 16);
      default:
        break;
    }
  }
  static const char kHex[] = "0123456789abcdef";
  *why = std::string(mode_ == Mode::kAll ? "invalid MessagePack byte 0x"
                                         : "unsupported MessagePack type 0x") +
         kHex[b >> 4] + kHex[b & 0xf];
  if (mode_ == Mode::kPatch) *why += " (bin, ext and 0xc1 are not used)";
  --pos_;
  return false;
}

bool MsgReader::Payload(size_t n, std::string_view* out, std::string* why) {
  if (left() < n) {
    *why = "truncated: a payload of " + std::to_string(n) + " bytes, " +
           std::to_string(left()) + " left";
    return false;
  }
  *out =
      std::string_view(reinterpret_cast<const char*>(bytes_.data()) + pos_, n);
  pos_ += n;
  return true;
}

bool MsgReader::Skip(const MsgItem& first, std::string* why) {
  // Items still to skip. Every item takes at least one byte, so `pending`
  // never exceeds left() once checked, and adding a count (< 2^33) to it
  // cannot overflow.
  uint64_t pending = 0;
  MsgItem item = first;
  while (true) {
    switch (item.kind) {
      case MsgKind::kStr:
      case MsgKind::kBin:
      case MsgKind::kExt: {
        std::string_view ignored;
        if (!Payload(item.count, &ignored, why)) return false;
        break;
      }
      case MsgKind::kArray:
        pending += item.count;
        break;
      case MsgKind::kMap:
        pending += 2 * static_cast<uint64_t>(item.count);
        break;
      default:
        break;
    }
    if (pending == 0) return true;
    if (pending > left()) {
      *why = "truncated: " + std::to_string(pending) + " items announced, " +
             std::to_string(left()) + " bytes left";
      return false;
    }
    if (!Next(&item, why)) return false;
    --pending;
  }
}

bool ValidUtf8(std::string_view text) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    const unsigned char c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len = 0;
    uint32_t cp = 0;
    if ((c & 0xe0) == 0xc0) {
      len = 2;
      cp = c & 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
      len = 3;
      cp = c & 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
      len = 4;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (n - i < len) return false;
    for (size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (p[i + k] & 0x3f);
    }
    static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
      return false;
    }
    i += len;
  }
  return true;
}

}  // namespace tessera::realm
