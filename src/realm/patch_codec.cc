// The MessagePack form of a patch with interned keys, encoder side, and
// the KeyTable (patch.h EncodePatch, KeyTable); the byte format is
// docs/realms.md "Patches". The decoder is patch_decode.cc.
#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <string>

#include "common/text.h"
#include "realm/msgpack_writer.h"
#include "realm/patch.h"
#include "realm/patch_opcodes.h"

namespace tessera::realm {

// ---- KeyTable ----

uint32_t KeyTable::Intern(std::string_view key, bool* added) {
  auto it = ids_.find(key);
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
  auto it = ids_.find(key);
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

class Writer : public MsgWriter {
 public:
  explicit Writer(KeyTable* keys) : keys_(keys) {}

  // A known key as its id; a new one as the announce [id, "text"].
  void Key(std::string_view key) {
    // The ops of one patch mostly share their path's first keys
    // ("players", an avatar): those are found here, not in the table
    // (which costs a cache miss or two per lookup, per reader).
    for (size_t i = 0; i < recent_used_; ++i) {
      if (recent_[i].key == key) return Uint(recent_[i].id);
    }
    bool added = false;
    const uint32_t id = keys_->Intern(key, &added);
    recent_[next_recent_] = Recent{key, id};
    next_recent_ = (next_recent_ + 1) % recent_.size();
    recent_used_ = std::min(recent_used_ + 1, recent_.size());
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
        return Bool(v.get<bool>());
      case Json::value_t::number_integer:
        return Int(v.get<int64_t>());
      case Json::value_t::number_unsigned:
        return Uint(v.get<uint64_t>());
      case Json::value_t::number_float:
        return Double(v.get<double>());
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
        return Nil();
    }
  }

 private:
  struct Recent {
    std::string_view key;  // points into the patch being encoded
    uint32_t id = 0;
  };
  KeyTable* keys_;
  std::array<Recent, 4> recent_{};
  size_t next_recent_ = 0;
  size_t recent_used_ = 0;
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
