// The MessagePack form of a patch with interned keys, encoder side, and
// the KeyTable (patch.h EncodePatch, KeyTable); the byte format is
// docs/realms.md "Patches". The decoder is patch_decode.cc.
#include <algorithm>
#include <array>
#include <atomic>
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

uint32_t KeyTable::InternShared(uint64_t source, uint32_t shared_id,
                                std::string_view key, bool* added) {
  if (source != shared_source_) {
    shared_source_ = source;
    by_shared_.clear();
  }
  if (shared_id < by_shared_.size() && by_shared_[shared_id] != 0) {
    if (added != nullptr) *added = false;
    return by_shared_[shared_id] - 1;
  }
  const uint32_t id = Intern(key, added);
  if (shared_id >= by_shared_.size()) {
    by_shared_.resize(std::max<size_t>(shared_id + 1, by_shared_.size() * 2));
  }
  by_shared_[shared_id] = id + 1;
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
  // With `plan`, the i-th key met is looked up by plan->ids[i]; with
  // `record`, the id of each key met is appended to it.
  explicit Writer(KeyTable* keys, const KeyPlan* plan = nullptr,
                  std::vector<uint32_t>* record = nullptr)
      : keys_(keys),
        plan_(plan != nullptr && plan->source != 0 ? plan : nullptr),
        record_(record) {}

  // A known key as its id; a new one as the announce [id, "text"].
  void Key(std::string_view key) {
    bool added = false;
    uint32_t id = 0;
    if (plan_ != nullptr && planned_ < plan_->ids.size()) {
      id = keys_->InternShared(plan_->source, plan_->ids[planned_++], key,
                               &added);
    } else {
      id = Lookup(key, &added);
    }
    if (record_ != nullptr) record_->push_back(id);
    if (added) {
      Array(2);
      Uint(id);
      Str(key);
    } else {
      Uint(id);
    }
  }

  // The ops of one patch mostly share their path's first keys ("players",
  // an avatar): those are found here, not in the table (which costs a
  // cache miss or two per lookup, per reader).
  uint32_t Lookup(std::string_view key, bool* added) {
    for (size_t i = 0; i < recent_used_; ++i) {
      if (recent_[i].key == key) return recent_[i].id;
    }
    const uint32_t id = keys_->Intern(key, added);
    recent_[next_recent_] = Recent{key, id};
    next_recent_ = (next_recent_ + 1) % recent_.size();
    recent_used_ = std::min(recent_used_ + 1, recent_.size());
    return id;
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
  const KeyPlan* plan_;
  size_t planned_ = 0;  // keys looked up through plan_
  std::vector<uint32_t>* record_;
  std::array<Recent, 4> recent_{};
  size_t next_recent_ = 0;
  size_t recent_used_ = 0;
};

}  // namespace

namespace {

void WritePatch(const Patch& patch, Writer& w) {
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
}

}  // namespace

std::string EncodePatch(const Patch& patch, KeyTable* keys) {
  return EncodePatch(patch, keys, nullptr);
}

std::string EncodePatch(const Patch& patch, KeyTable* keys,
                        const KeyPlan* plan) {
  Writer w(keys, plan);
  WritePatch(patch, w);
  return w.Take();
}

void EncodePatchTo(const Patch& patch, KeyTable* keys, const KeyPlan* plan,
                   std::string* out) {
  Writer w(keys, plan);
  w.Reuse(std::move(*out));
  WritePatch(patch, w);
  *out = w.Take();
}

uint64_t NewKeySource() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

KeyPlan PlanKeys(const Patch& patch, KeyTable* shared, uint64_t source) {
  KeyPlan plan;
  plan.source = source;
  Writer w(shared, nullptr, &plan.ids);
  WritePatch(patch, w);
  return plan;
}

}  // namespace tessera::realm
