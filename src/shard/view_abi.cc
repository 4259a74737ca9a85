#include "shard/view_abi.h"

#include <algorithm>
#include <cmath>

#include "replication/bit_io.h"

namespace tessera::shard {
namespace {

using replication::ByteReader;
using replication::PutU32;
using replication::PutU64;

void PutIds(std::string& out, std::span<const uint64_t> ids) {
  PutU32(out, static_cast<uint32_t>(ids.size()));
  for (uint64_t id : ids) PutU64(out, id);
}

void PutStr(std::string& out, std::string_view s) {
  PutU32(out, static_cast<uint32_t>(s.size()));
  out.append(s);
}

Status Malformed(const char* what, const std::string& why) {
  return InvalidArgument(std::string(what) + ": " + why);
}

}  // namespace

Result<GuestInterestConfig> ParseInterestConfig(std::string_view bytes) {
  const char* what = "tessera_interest_config output";
  if (bytes.size() != 17) {
    return Malformed(what,
                     "expected 17 bytes, got " + std::to_string(bytes.size()));
  }
  ByteReader r(bytes);
  GuestInterestConfig c;
  uint8_t flags = 0;
  r.F64(&c.cell_size);
  r.F64(&c.margin);
  r.U8(&flags);
  if (!std::isfinite(c.cell_size) || c.cell_size <= 0) {
    return Malformed(what, "cell_size must be a finite number above 0");
  }
  if (!std::isfinite(c.margin) || c.margin < 0) {
    return Malformed(what, "margin must be a finite number, 0 or more");
  }
  if ((flags & ~1u) != 0) return Malformed(what, "unknown flag bits");
  c.shared_snapshots = (flags & 1u) != 0;
  return c;
}

Status ParseEntities(std::string_view bytes, std::vector<GuestEntity>& out) {
  const char* what = "tessera_entities output";
  out.clear();
  ByteReader r(bytes);
  uint32_t count = 0;
  if (!r.U32(&count)) return Malformed(what, "shorter than its count");
  if (r.remaining() != size_t{count} * 20) {
    return Malformed(what, std::to_string(count) + " entities need " +
                               std::to_string(size_t{count} * 20) +
                               " bytes after the count, got " +
                               std::to_string(r.remaining()));
  }
  out.resize(count);
  for (GuestEntity& e : out) {
    r.U64(&e.id);
    r.U32(&e.generation);
    r.F32(&e.x);
    r.F32(&e.y);
    if (e.id > kMaxEntityId) {
      return Malformed(what,
                       "entity id " + std::to_string(e.id) + " exceeds 2^53-1");
    }
    if (!std::isfinite(e.x) || !std::isfinite(e.y)) {
      return Malformed(what, "entity " + std::to_string(e.id) +
                                 " has a non-finite position");
    }
  }
  // Unique ids: sort a copy of the ids (entities stay in guest order).
  std::vector<uint64_t> ids(out.size());
  for (size_t i = 0; i < out.size(); ++i) ids[i] = out[i].id;
  std::sort(ids.begin(), ids.end());
  auto dup = std::adjacent_find(ids.begin(), ids.end());
  if (dup != ids.end()) {
    return Malformed(what,
                     "entity id " + std::to_string(*dup) + " is listed twice");
  }
  return Status::Ok();
}

std::string EncodeSubscriberList(std::span<const std::string> subscribers) {
  std::string out;
  PutU32(out, static_cast<uint32_t>(subscribers.size()));
  for (const std::string& s : subscribers) PutStr(out, s);
  return out;
}

Status ParseAreas(std::string_view bytes, size_t count,
                  std::vector<std::optional<GuestArea>>& out) {
  const char* what = "tessera_interest_areas output";
  if (bytes.size() != count * 13) {
    return Malformed(what, std::to_string(count) + " subscribers need " +
                               std::to_string(count * 13) + " bytes, got " +
                               std::to_string(bytes.size()));
  }
  out.assign(count, std::nullopt);
  ByteReader r(bytes);
  for (size_t i = 0; i < count; ++i) {
    uint8_t has = 0;
    GuestArea a;
    r.U8(&has);
    r.F32(&a.x);
    r.F32(&a.y);
    r.F32(&a.radius);
    if (has > 1) return Malformed(what, "has_area must be 0 or 1");
    if (has == 0) continue;
    if (!std::isfinite(a.x) || !std::isfinite(a.y) ||
        !std::isfinite(a.radius) || a.radius < 0) {
      return Malformed(what, "area " + std::to_string(i) +
                                 " is not finite or has a negative radius");
    }
    out[i] = a;
  }
  return Status::Ok();
}

std::string EncodeFilterRequest(
    std::span<const std::string> subscribers,
    std::span<const std::span<const uint64_t>> candidates) {
  std::string out;
  PutU32(out, static_cast<uint32_t>(subscribers.size()));
  for (size_t i = 0; i < subscribers.size(); ++i) {
    PutStr(out, subscribers[i]);
    PutIds(out, candidates[i]);
  }
  return out;
}

std::string EncodeViewRequest(std::string_view subscriber,
                              std::span<const uint64_t> visible,
                              std::span<const uint64_t> entered,
                              std::span<const uint64_t> left) {
  std::string out;
  out.reserve(16 + subscriber.size() +
              8 * (visible.size() + entered.size() + left.size()));
  PutStr(out, subscriber);
  PutIds(out, visible);
  PutIds(out, entered);
  PutIds(out, left);
  return out;
}

}  // namespace tessera::shard
