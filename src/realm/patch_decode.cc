// The MessagePack form of a patch with interned keys, decoder side
// (patch.h DecodePatch); the byte format is docs/realms.md "Patches".
//
// The decoder reads untrusted bytes with its own bounds-checked reader
// (realm/msgpack_reader.h): every count is checked against the bytes left
// and the limits before anything is reserved, keys are checked against
// max_key_length before they are copied, and recursion is bounded by
// max_depth. Keys announced by the peer are staged and learnt into the
// KeyTable only when the whole patch has decoded.
#include <cmath>
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/text.h"
#include "realm/msgpack_reader.h"
#include "realm/patch.h"
#include "realm/patch_opcodes.h"

namespace tessera::realm {

namespace {

Status Exhausted(std::string m) {
  return Status(StatusCode::kResourceExhausted, std::move(m));
}

class Decoder {
 public:
  Decoder(std::span<const uint8_t> bytes, const KeyTable& table,
          const DecodeLimits& limits)
      : in_(bytes), size_(bytes.size()), table_(table), limits_(limits) {}

  Result<Patch> Run() {
    if (size_ > limits_.max_bytes) {
      return Exhausted("patch: " + std::to_string(size_) +
                       " bytes, over max_bytes (" +
                       std::to_string(limits_.max_bytes) + ")");
    }
    ctx_ = "patch";
    size_t n = 0;
    TESSERA_RETURN_IF_ERROR(ExpectArray(&n, "a list of ops"));
    if (n > limits_.max_ops) {
      return Exhausted("patch: " + std::to_string(n) + " ops, over max_ops (" +
                       std::to_string(limits_.max_ops) + ")");
    }
    TESSERA_RETURN_IF_ERROR(Fits(n, 1));
    Patch patch;
    patch.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      ctx_ = "op " + std::to_string(i);
      Op op;
      TESSERA_RETURN_IF_ERROR(ReadOp(&op));
      patch.push_back(std::move(op));
    }
    if (!in_.done()) {
      ctx_ = "patch";
      return Bad(std::to_string(in_.left()) + " bytes after the last op");
    }
    return patch;
  }

  std::vector<std::string>& staged() { return staged_; }

 private:
  Status Bad(const std::string& what) const {
    return InvalidArgument(ctx_ + " (byte " + std::to_string(in_.pos()) +
                           "): " + what);
  }
  Status Read(MsgItem* item) {
    std::string why;
    if (!in_.Next(item, &why)) return Bad(why);
    return Status::Ok();
  }
  // `n` items of at least `min_bytes` each must fit in what is left.
  Status Fits(size_t n, size_t min_bytes) const {
    if (n > in_.left() / min_bytes) {
      return Bad(std::to_string(n) + " items announced, " +
                 std::to_string(in_.left()) + " bytes left");
    }
    return Status::Ok();
  }
  Status ExpectArray(size_t* n, const char* what) {
    MsgItem item;
    TESSERA_RETURN_IF_ERROR(Read(&item));
    if (item.kind != MsgKind::kArray) {
      return Bad(std::string("expected ") + what + ", got " +
                 MsgKindName(item.kind));
    }
    *n = item.count;
    return Status::Ok();
  }

  Status ReadOp(Op* op) {
    size_t fields = 0;
    TESSERA_RETURN_IF_ERROR(
        ExpectArray(&fields, "an op [opcode, path, value?]"));
    MsgItem code;
    if (fields == 0) return Bad("empty op");
    TESSERA_RETURN_IF_ERROR(Read(&code));
    if (code.kind != MsgKind::kUint || code.u > uint64_t{kOpAppend}) {
      return Bad("expected an opcode (0 set, 1 delete, 2 append)");
    }
    op->kind = code.u == uint64_t{kOpSet}      ? OpKind::kSet
               : code.u == uint64_t{kOpDelete} ? OpKind::kDelete
                                               : OpKind::kAppend;
    const size_t want = op->kind == OpKind::kDelete ? 2 : 3;
    if (fields != want) {
      return Bad(std::string(OpName(op->kind)) + " takes " +
                 std::to_string(want) + " fields, got " +
                 std::to_string(fields));
    }
    const std::string base = ctx_;
    ctx_ = base + " path";
    size_t segments = 0;
    TESSERA_RETURN_IF_ERROR(ExpectArray(&segments, "a path (list)"));
    if (segments > limits_.max_depth) {
      return Exhausted(ctx_ + ": " + std::to_string(segments) +
                       " segments, over max_depth (" +
                       std::to_string(limits_.max_depth) + ")");
    }
    TESSERA_RETURN_IF_ERROR(Fits(segments, 1));
    op->path.reserve(segments);
    for (size_t s = 0; s < segments; ++s) {
      MsgItem item;
      TESSERA_RETURN_IF_ERROR(Read(&item));
      if (item.kind == MsgKind::kInt) {
        op->path.emplace_back(~item.i);  // -1 - index
        continue;
      }
      std::string key;
      TESSERA_RETURN_IF_ERROR(KeyFrom(item, &key));
      op->path.emplace_back(std::move(key));
    }
    if (want == 2) return Status::Ok();
    ctx_ = base + " value";
    size_t leaves = 0;
    return ReadValue(segments, &leaves, &op->value);
  }

  // A key reference: an id, or the announce [id, "text"] of the next id.
  Status KeyFrom(const MsgItem& item, std::string* key) {
    if (item.kind == MsgKind::kUint) {
      const std::string* known = item.u <= std::numeric_limits<uint32_t>::max()
                                     ? Known(static_cast<uint32_t>(item.u))
                                     : nullptr;
      if (known == nullptr)
        return Bad("unknown key id " + std::to_string(item.u));
      *key = *known;
      return Status::Ok();
    }
    if (item.kind != MsgKind::kArray || item.count != 2) {
      return Bad(std::string("expected a key (id or [id, text]), got ") +
                 MsgKindName(item.kind));
    }
    MsgItem id;
    TESSERA_RETURN_IF_ERROR(Read(&id));
    const size_t next = table_.size() + staged_.size();
    if (id.kind != MsgKind::kUint || id.u != next) {
      return Bad("key announce: expected the next id " + std::to_string(next));
    }
    MsgItem text;
    TESSERA_RETURN_IF_ERROR(Read(&text));
    if (text.kind != MsgKind::kStr)
      return Bad("key announce: expected a string");
    if (text.count > limits_.max_key_length) {
      return Exhausted(ctx_ + ": key of " + std::to_string(text.count) +
                       " bytes, over max_key_length (" +
                       std::to_string(limits_.max_key_length) + ")");
    }
    std::string_view view;
    TESSERA_RETURN_IF_ERROR(Text(text, &view));
    std::string s(view);
    if (table_.IdOf(s) || staged_ids_.contains(s)) {
      return Bad("key \"" + EscapeForLog(s, 64) + "\" announced again");
    }
    staged_ids_.emplace(s, static_cast<uint32_t>(next));
    staged_.push_back(s);
    *key = std::move(s);
    return Status::Ok();
  }

  const std::string* Known(uint32_t id) const {
    if (id < table_.size()) return table_.Find(id);
    const size_t k = id - table_.size();
    return k < staged_.size() ? &staged_[k] : nullptr;
  }

  Status Text(const MsgItem& item, std::string_view* out) {
    std::string why;
    if (!in_.Payload(item.count, out, &why)) return Bad(why);
    if (!ValidUtf8(*out)) return Bad("string is not valid UTF-8");
    return Status::Ok();
  }

  Status Leaf(size_t* leaves) {
    if (++*leaves > limits_.max_expanded_leaves) {
      return Exhausted(ctx_ + ": over max_expanded_leaves (" +
                       std::to_string(limits_.max_expanded_leaves) + ")");
    }
    return Status::Ok();
  }

  // `depth`: the nesting above this value (path segments and containers).
  Status ReadValue(size_t depth, size_t* leaves, Json* out) {
    MsgItem item;
    TESSERA_RETURN_IF_ERROR(Read(&item));
    const bool container =
        item.kind == MsgKind::kArray || item.kind == MsgKind::kMap;
    if (!container || item.count == 0) TESSERA_RETURN_IF_ERROR(Leaf(leaves));
    if (container) {
      if (depth + 1 > limits_.max_depth) {
        return Exhausted(ctx_ + ": nested deeper than max_depth (" +
                         std::to_string(limits_.max_depth) + ")");
      }
      // Each element expands to at least one leaf.
      if (*leaves + item.count > limits_.max_expanded_leaves) {
        return Exhausted(ctx_ + ": " + std::to_string(item.count) +
                         " elements, over max_expanded_leaves (" +
                         std::to_string(limits_.max_expanded_leaves) + ")");
      }
    }
    switch (item.kind) {
      case MsgKind::kNil:
        *out = nullptr;
        return Status::Ok();
      case MsgKind::kBool:
        *out = item.b;
        return Status::Ok();
      case MsgKind::kUint:
        *out = item.u;
        return Status::Ok();
      case MsgKind::kInt:
        *out = item.i;
        return Status::Ok();
      case MsgKind::kFloat:
        if (!std::isfinite(item.f)) return Bad("float is not finite");
        *out = item.f;
        return Status::Ok();
      case MsgKind::kStr: {
        std::string_view view;
        TESSERA_RETURN_IF_ERROR(Text(item, &view));
        *out = std::string(view);
        return Status::Ok();
      }
      case MsgKind::kArray: {
        TESSERA_RETURN_IF_ERROR(Fits(item.count, 1));
        *out = Json::array();
        auto& list = out->get_ref<Json::array_t&>();
        list.reserve(item.count);
        for (size_t k = 0; k < item.count; ++k) {
          list.emplace_back();
          TESSERA_RETURN_IF_ERROR(ReadValue(depth + 1, leaves, &list.back()));
        }
        return Status::Ok();
      }
      case MsgKind::kMap: {
        TESSERA_RETURN_IF_ERROR(Fits(item.count, 2));
        *out = Json::object();
        auto& map = out->get_ref<Json::object_t&>();
        for (size_t k = 0; k < item.count; ++k) {
          MsgItem ref;
          TESSERA_RETURN_IF_ERROR(Read(&ref));
          std::string key;
          TESSERA_RETURN_IF_ERROR(KeyFrom(ref, &key));
          auto [it, added] = map.try_emplace(std::move(key));
          if (!added) {
            return Bad("duplicate key \"" + EscapeForLog(it->first, 64) + "\"");
          }
          TESSERA_RETURN_IF_ERROR(ReadValue(depth + 1, leaves, &it->second));
        }
        return Status::Ok();
      }
      case MsgKind::kBin:  // never read: the reader is in Mode::kPatch
      case MsgKind::kExt:
        break;
    }
    return Bad("unexpected item");
  }

  MsgReader in_;
  size_t size_;
  const KeyTable& table_;
  const DecodeLimits& limits_;
  std::string ctx_;
  std::vector<std::string> staged_;
  std::unordered_map<std::string, uint32_t> staged_ids_;
};

}  // namespace

Result<Patch> DecodePatch(std::span<const uint8_t> bytes, KeyTable* keys,
                          const DecodeLimits& limits) {
  Decoder decoder(bytes, *keys, limits);
  Result<Patch> patch = decoder.Run();
  if (!patch.ok()) return patch;
  for (std::string& key : decoder.staged()) {
    // Cannot fail: each was checked to be new and the next id.
    Status learned =
        keys->Learn(static_cast<uint32_t>(keys->size()), std::move(key));
    if (!learned.ok()) return learned;
  }
  return patch;
}

}  // namespace tessera::realm
