#include "replication/change_list.h"

#include <cmath>

#include "replication/bit_io.h"

namespace tessera::replication {
namespace {

constexpr uint8_t kFlagFull = 1;
constexpr uint8_t kWhatNew = 1;
constexpr uint8_t kWhatPosition = 2;
// |v / precision| must stay below this.
constexpr double kMaxQuantised = 4503599627370496.0;  // 2^52

// Smallest encodings, to bound counts by the bytes that remain.
constexpr size_t kMinChangedSize = 8 + 1 + 1;  // id, what, component_count
constexpr size_t kMinComponentSize = 1 + 4;

std::string EntityLabel(size_t index, uint64_t id) {
  return "changed entity " + std::to_string(index) + " (id " +
         std::to_string(id) + ")";
}

Status Truncated(size_t offset, const std::string& where) {
  return InvalidArgument("truncated change list: " + where +
                         " needs more bytes than remain after byte " +
                         std::to_string(offset));
}

Status CheckId(uint64_t id, const char* list) {
  if (id > kMaxEntityId) {
    return InvalidArgument(std::string("entity id ") + std::to_string(id) +
                           " in the " + list +
                           " list is not below 2^53 (9007199254740992)");
  }
  return Status::Ok();
}

}  // namespace

Status ParseChangeList(std::string_view bytes, double precision,
                       ChangeList* out) {
  out->full = false;
  out->removed.clear();
  out->changed.clear();
  out->components.clear();
  ByteReader r(bytes);
  uint8_t flags = 0;
  if (!r.U8(&flags)) return Truncated(0, "flags");
  if ((flags & ~kFlagFull) != 0) {
    return InvalidArgument("unknown change list flag bits " +
                           std::to_string(flags & ~kFlagFull) +
                           " (only bit 0, FULL, is defined)");
  }
  out->full = (flags & kFlagFull) != 0;

  uint32_t removed_count = 0;
  if (!r.U32(&removed_count)) return Truncated(r.offset(), "removed_count");
  if (removed_count > r.remaining() / 8) {
    return Truncated(r.offset(), "removed list of " +
                                     std::to_string(removed_count) + " ids");
  }
  out->removed.reserve(removed_count);
  for (uint32_t i = 0; i < removed_count; ++i) {
    uint64_t id = 0;
    r.U64(&id);
    TESSERA_RETURN_IF_ERROR(CheckId(id, "removed"));
    out->removed.push_back(id);
  }

  uint32_t changed_count = 0;
  if (!r.U32(&changed_count)) return Truncated(r.offset(), "changed_count");
  if (changed_count > r.remaining() / kMinChangedSize) {
    return Truncated(
        r.offset(),
        "changed list of " + std::to_string(changed_count) + " entities");
  }
  out->changed.reserve(changed_count);
  for (uint32_t i = 0; i < changed_count; ++i) {
    EntityChange c;
    uint8_t what = 0;
    if (!r.U64(&c.id)) return Truncated(r.offset(), EntityLabel(i, 0));
    TESSERA_RETURN_IF_ERROR(CheckId(c.id, "changed"));
    if (!r.U8(&what)) {
      return Truncated(r.offset(), EntityLabel(i, c.id) + " 'what'");
    }
    if ((what & ~(kWhatNew | kWhatPosition)) != 0) {
      return InvalidArgument(
          "unknown 'what' bits " +
          std::to_string(what & ~(kWhatNew | kWhatPosition)) + " in " +
          EntityLabel(i, c.id) + " (bit 0 NEW, bit 1 POS are defined)");
    }
    c.is_new = (what & kWhatNew) != 0;
    c.has_position = (what & kWhatPosition) != 0;
    if (c.has_position) {
      for (int axis = 0; axis < 3; ++axis) {
        double v = 0;
        if (!r.F64(&v)) {
          return Truncated(r.offset(), EntityLabel(i, c.id) + " position");
        }
        if (!std::isfinite(v)) {
          return InvalidArgument("non-finite coordinate " +
                                 std::string(1, "xyz"[axis]) + " of " +
                                 EntityLabel(i, c.id));
        }
        if (!(std::fabs(v / precision) < kMaxQuantised)) {
          return InvalidArgument(
              "coordinate out of range: " + std::string(1, "xyz"[axis]) +
              " = " + std::to_string(v) + " of " + EntityLabel(i, c.id) +
              " (|coordinate / precision| must be below 2^52)");
        }
        c.position[axis] = v;
      }
    }
    uint8_t component_count = 0;
    if (!r.U8(&component_count)) {
      return Truncated(r.offset(), EntityLabel(i, c.id) + " component_count");
    }
    if (component_count > r.remaining() / kMinComponentSize) {
      return Truncated(r.offset(), EntityLabel(i, c.id) + " components");
    }
    c.first_component = static_cast<uint32_t>(out->components.size());
    c.component_count = component_count;
    uint32_t seen[8] = {0, 0, 0, 0, 0, 0, 0, 0};  // a bit per component id
    for (uint8_t j = 0; j < component_count; ++j) {
      ComponentChange cc;
      uint32_t len_plus_one = 0;
      if (!r.U8(&cc.id) || !r.U32(&len_plus_one)) {
        return Truncated(r.offset(), EntityLabel(i, c.id) + " component " +
                                         std::to_string(j));
      }
      if ((seen[cc.id / 32] >> (cc.id % 32)) & 1) {
        return InvalidArgument("component " + std::to_string(cc.id) +
                               " listed twice for " + EntityLabel(i, c.id));
      }
      seen[cc.id / 32] |= 1u << (cc.id % 32);
      cc.removed = len_plus_one == 0;
      if (!cc.removed && !r.Bytes(len_plus_one - 1, &cc.bytes)) {
        return Truncated(r.offset(), EntityLabel(i, c.id) + " component " +
                                         std::to_string(cc.id) + " of " +
                                         std::to_string(len_plus_one - 1) +
                                         " bytes");
      }
      out->components.push_back(cc);
    }
    out->changed.push_back(c);
  }
  if (!r.AtEnd()) {
    return InvalidArgument("trailing bytes after the change list: " +
                           std::to_string(r.remaining()) + " after byte " +
                           std::to_string(r.offset()));
  }
  return Status::Ok();
}

void ChangeListWriter::Change(uint64_t id, bool is_new) {
  entries_.push_back(Entry{id, is_new, std::nullopt, {}});
}

void ChangeListWriter::Position(double x, double y, double z) {
  entries_.back().position = std::array<double, 3>{x, y, z};
}

void ChangeListWriter::SetComponent(uint8_t id, std::string_view bytes) {
  entries_.back().components.emplace_back(id, std::string(bytes));
}

void ChangeListWriter::RemoveComponent(uint8_t id) {
  entries_.back().components.emplace_back(id, std::nullopt);
}

std::string ChangeListWriter::Finish() const {
  std::string out;
  out.push_back(full_ ? kFlagFull : 0);
  PutU32(out, static_cast<uint32_t>(removed_.size()));
  for (uint64_t id : removed_) PutU64(out, id);
  PutU32(out, static_cast<uint32_t>(entries_.size()));
  for (const Entry& e : entries_) {
    PutU64(out, e.id);
    out.push_back(static_cast<char>((e.is_new ? kWhatNew : 0) |
                                    (e.position ? kWhatPosition : 0)));
    if (e.position) {
      for (double v : *e.position) PutF64(out, v);
    }
    out.push_back(static_cast<char>(e.components.size()));
    for (const auto& [id, bytes] : e.components) {
      out.push_back(static_cast<char>(id));
      if (bytes) {
        PutU32(out, static_cast<uint32_t>(bytes->size() + 1));
        out += *bytes;
      } else {
        PutU32(out, 0);
      }
    }
  }
  return out;
}

}  // namespace tessera::replication
