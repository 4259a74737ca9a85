// The MessagePack form of a patch with interned keys, encoder side, and
// the KeyTable (patch.h EncodePatch, KeyTable); the byte format is
// docs/realms.md "Patches". The decoder is patch_decode.cc.
#include <cstring>
#include <limits>
#include <string>

#include "common/text.h"
#include "realm/patch.h"
#include "realm/patch_opcodes.h"

namespace tessera::realm {

// ---- KeyTable ----

uint32_t KeyTable::Intern(std::string_view key, bool* added) {
  auto it = ids_.find(std::string(key));
  if (it != ids_.end()) {
    if (added != nullptr) *added = false;
    return it->second;
  }
  const auto id = static_cast<uint32_t>(keys_.size());
  keys_.emplace_back(key);
  ids_.emplace(keys_.back(), id);
  if (added != nullptr) *added = true;
  return id;
}

const std::string* KeyTable::Find(uint32_t id) const {
  return id < keys_.size() ? &keys_[id] : nullptr;
}

std::optional<uint32_t> KeyTable::IdOf(std::string_view key) const {
  auto it = ids_.find(std::string(key));
  if (it == ids_.end()) return std::nullopt;
  return it->second;
}

Status KeyTable::Learn(uint32_t id, std::string key) {
  if (id != keys_.size()) {
    return InvalidArgument("key id " + std::to_string(id) +
                           " announced, expected " +
                           std::to_string(keys_.size()));
  }
  if (ids_.contains(key)) {
    return InvalidArgument("key \"" + EscapeForLog(key, 64) +
                           "\" announced again");
  }
  keys_.push_back(std::move(key));
  ids_.emplace(keys_.back(), id);
  return Status::Ok();
}

namespace {

// ---- Encoder ----

class Writer {
 public:
  explicit Writer(KeyTable* keys) : keys_(keys) {}

  std::string Take() { return std::move(out_); }

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

  void Str(std::string_view s) {
    Header(s.size(), 0xa0, 32, 0xd9, 0xda, 0xdb);
    out_.append(s);
  }
  void Array(size_t n) { Header(n, 0x90, 16, 0, 0xdc, 0xdd); }
  void Map(size_t n) { Header(n, 0x80, 16, 0, 0xde, 0xdf); }

  // A known key as its id; a new one as the announce [id, "text"].
  void Key(std::string_view key) {
    bool added = false;
    const uint32_t id = keys_->Intern(key, &added);
    if (added) {
      Array(2);
      Uint(id);
      Str(key);
    } else {
      Uint(id);
    }
  }

  void Segment(const PathSegment& seg) {
    if (const auto* key = std::get_if<std::string>(&seg)) return Key(*key);
    int64_t index = std::get<int64_t>(seg);
    if (index < 0) index = std::numeric_limits<int64_t>::max();
    Int(~index);  // -1 - index: negative, so never a key id
  }

  void Value(const Json& v) {
    switch (v.type()) {
      case Json::value_t::boolean:
        return Byte(v.get<bool>() ? 0xc3 : 0xc2);
      case Json::value_t::number_integer:
        return Int(v.get<int64_t>());
      case Json::value_t::number_unsigned:
        return Uint(v.get<uint64_t>());
      case Json::value_t::number_float: {
        Byte(0xcb);
        uint64_t bits = 0;
        const double d = v.get<double>();
        static_assert(sizeof bits == sizeof d);
        std::memcpy(&bits, &d, sizeof bits);
        return Be(bits, 8);
      }
      case Json::value_t::string:
        return Str(v.get_ref<const std::string&>());
      case Json::value_t::array:
        Array(v.size());
        for (const Json& e : v) Value(e);
        return;
      case Json::value_t::object:
        Map(v.size());
        for (auto it = v.begin(); it != v.end(); ++it) {
          Key(it.key());
          Value(it.value());
        }
        return;
      default:  // null; binary and discarded have no JSON form
        return Byte(0xc0);
    }
  }

 private:
  void Byte(uint8_t b) { out_.push_back(static_cast<char>(b)); }
  void Be(uint64_t v, int bytes) {
    for (int i = bytes - 1; i >= 0; --i)
      Byte(static_cast<uint8_t>(v >> (8 * i)));
  }
  // `fix` | n below `fix_limit`, else the 8-bit (if any), 16- or 32-bit
  // length form.
  void Header(size_t n, uint8_t fix, size_t fix_limit, uint8_t b8, uint8_t b16,
              uint8_t b32) {
    if (n < fix_limit) {
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

  KeyTable* keys_;
  std::string out_;
};

}  // namespace

std::string EncodePatch(const Patch& patch, KeyTable* keys) {
  Writer w(keys);
  w.Array(patch.size());
  for (const Op& op : patch) {
    const bool has_value = op.kind != OpKind::kDelete;
    w.Array(has_value ? 3 : 2);
    w.Uint(op.kind == OpKind::kSet      ? kOpSet
           : op.kind == OpKind::kDelete ? kOpDelete
                                        : kOpAppend);
    w.Array(op.path.size());
    for (const PathSegment& seg : op.path) w.Segment(seg);
    if (has_value) w.Value(op.value);
  }
  return w.Take();
}

}  // namespace tessera::realm
