#include "shard/talk_abi.h"

#include <cstdint>
#include <utility>

#include "replication/bit_io.h"
#include "tessera/abi.h"

namespace tessera::shard {
namespace {

using replication::ByteReader;
using replication::PutU32;

void PutStr(std::string& out, std::string_view s) {
  PutU32(out, static_cast<uint32_t>(s.size()));
  out.append(s);
}

// Reads one export's output; the first problem becomes the error, prefixed
// with "<export> output: " and the item being read.
class LayoutReader {
 public:
  LayoutReader(const char* what, std::string_view bytes)
      : what_(what), r_(bytes) {}

  // The leading u32 count of `min_item_bytes`-byte (at least) items:
  // refused when that many cannot fit in what is left.
  bool Count(uint32_t* count, size_t min_item_bytes, const char* items) {
    if (!r_.U32(count)) {
      return Fail(std::string("count: ") + Short(4));
    }
    const uint64_t need = uint64_t{*count} * min_item_bytes;
    if (need > r_.remaining()) {
      return Fail("count " + std::to_string(*count) + " of " + items +
                  " needs at least " + std::to_string(need) + " bytes, only " +
                  std::to_string(r_.remaining()) + " follow");
    }
    return true;
  }

  bool U8(uint8_t* v, const std::string& item) {
    if (r_.U8(v)) return true;
    return Fail(item + ": " + Short(1));
  }

  bool Str(std::string* out, const std::string& item) {
    uint32_t len = 0;
    if (!r_.U32(&len)) return Fail(item + ": length: " + Short(4));
    std::string_view bytes;
    if (!r_.Bytes(len, &bytes)) {
      return Fail(item + ": length " + std::to_string(len) +
                  " runs past the end (" + std::to_string(r_.remaining()) +
                  " bytes left at byte " + std::to_string(r_.offset()) + ")");
    }
    out->assign(bytes);
    return true;
  }

  // Refuses bytes after the last item.
  bool End() {
    if (r_.AtEnd()) return true;
    return Fail(std::to_string(r_.remaining()) +
                " trailing bytes after the last item (at byte " +
                std::to_string(r_.offset()) + ")");
  }

  bool Fail(const std::string& why) {
    if (error_.empty()) {
      error_ = std::string(what_) + " output: " + why;
    }
    return false;
  }
  Status status() const { return InvalidArgument(error_); }
  size_t offset() const { return r_.offset(); }

 private:
  std::string Short(size_t n) const {
    return "needs " + std::to_string(n) + " bytes at byte " +
           std::to_string(r_.offset()) + ", only " +
           std::to_string(r_.remaining()) + " left";
  }

  const char* what_;
  ByteReader r_;
  std::string error_;
};

std::string Item(const char* noun, uint32_t i, const char* field) {
  return std::string(noun) + " " + std::to_string(i) + ": " + field;
}

}  // namespace

std::string EncodeTransferIn(std::string_view subscriber,
                             std::string_view state,
                             std::string_view claims_json, bool returning,
                             std::string_view peer_shard) {
  std::string out;
  out.reserve(20 + subscriber.size() + peer_shard.size() + claims_json.size() +
              state.size());
  PutU32(out, returning ? abi::kTransferInReturning : 0u);
  PutStr(out, subscriber);
  PutStr(out, peer_shard);
  PutStr(out, claims_json);
  PutStr(out, state);
  return out;
}

Result<std::vector<TransferRequestOut>> DecodeTransferRequests(
    std::string_view bytes) {
  LayoutReader r(abi::kExportTransferRequests, bytes);
  uint32_t count = 0;
  if (!r.Count(&count, 8, "requests")) return r.status();
  std::vector<TransferRequestOut> out(count);
  for (uint32_t i = 0; i < count; ++i) {
    if (!r.Str(&out[i].subscriber, Item("request", i, "subscriber")) ||
        !r.Str(&out[i].to, Item("request", i, "target shard"))) {
      return r.status();
    }
  }
  if (!r.End()) return r.status();
  return out;
}

Result<std::vector<std::string>> DecodeGroups(std::string_view bytes) {
  LayoutReader r(abi::kExportGroups, bytes);
  uint32_t count = 0;
  if (!r.Count(&count, 4, "groups")) return r.status();
  std::vector<std::string> out(count);
  for (uint32_t i = 0; i < count; ++i) {
    if (!r.Str(&out[i], "group " + std::to_string(i))) return r.status();
  }
  if (!r.End()) return r.status();
  return out;
}

Result<std::vector<OutgoingMessage>> DecodeOutbox(std::string_view bytes) {
  LayoutReader r(abi::kExportOutbox, bytes);
  uint32_t count = 0;
  if (!r.Count(&count, 13, "messages")) return r.status();
  std::vector<OutgoingMessage> out(count);
  for (uint32_t i = 0; i < count; ++i) {
    OutgoingMessage& m = out[i];
    uint8_t kind = 0;
    const size_t kind_at = r.offset();
    if (!r.U8(&kind, Item("message", i, "target kind"))) return r.status();
    switch (kind) {
      case abi::kTargetShard:
        m.to.kind = TargetKind::kShard;
        break;
      case abi::kTargetGroup:
        m.to.kind = TargetKind::kGroup;
        break;
      case abi::kTargetAll:
        m.to.kind = TargetKind::kAll;
        break;
      default:
        r.Fail(Item("message", i, "unknown target kind ") +
               std::to_string(kind) + " at byte " + std::to_string(kind_at) +
               " (0 shard, 1 group, 2 all)");
        return r.status();
    }
    if (!r.Str(&m.to.name, Item("message", i, "target")) ||
        !r.Str(&m.topic, Item("message", i, "topic")) ||
        !r.Str(&m.data, Item("message", i, "data"))) {
      return r.status();
    }
    if (m.to.kind == TargetKind::kAll && !m.to.name.empty()) {
      r.Fail(Item("message", i, "target kind all with a non-empty target"));
      return r.status();
    }
  }
  if (!r.End()) return r.status();
  return out;
}

std::string EncodeMessages(
    std::span<const std::shared_ptr<const ShardMessage>> batch) {
  size_t size = 4;
  for (const auto& m : batch) {
    size += 12 + m->from.size() + m->topic.size() + m->data.size();
  }
  std::string out;
  out.reserve(size);
  PutU32(out, static_cast<uint32_t>(batch.size()));
  for (const auto& m : batch) {
    PutStr(out, m->from);
    PutStr(out, m->topic);
    PutStr(out, m->data);
  }
  return out;
}

}  // namespace tessera::shard
