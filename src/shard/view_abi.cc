#include "shard/view_abi.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace tessera::shard {
namespace {

// Little-endian reads with bounds checks.
class LeReader {
 public:
  explicit LeReader(std::string_view bytes) : bytes_(bytes) {}
  template <class T>
  bool Read(T& v) {
    if (bytes_.size() - pos_ < sizeof(T)) return false;
    std::memcpy(&v, bytes_.data() + pos_, sizeof(T));  // wasm32 and x86: LE
    pos_ += sizeof(T);
    return true;
  }
  size_t remaining() const { return bytes_.size() - pos_; }

 private:
  std::string_view bytes_;
  size_t pos_ = 0;
};

template <class T>
void Put(std::string& out, T v) {
  char buf[sizeof(T)];
  std::memcpy(buf, &v, sizeof(T));
  out.append(buf, sizeof(T));
}

void PutIds(std::string& out, std::span<const uint64_t> ids) {
  Put<uint32_t>(out, static_cast<uint32_t>(ids.size()));
  for (uint64_t id : ids) Put<uint64_t>(out, id);
}

void PutStr(std::string& out, std::string_view s) {
  Put<uint32_t>(out, static_cast<uint32_t>(s.size()));
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
  LeReader r(bytes);
  GuestInterestConfig c;
  uint8_t flags = 0;
  r.Read(c.cell_size);
  r.Read(c.margin);
  r.Read(flags);
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
  LeReader r(bytes);
  uint32_t count = 0;
  if (!r.Read(count)) return Malformed(what, "shorter than its count");
  if (r.remaining() != size_t{count} * 20) {
    return Malformed(what, std::to_string(count) + " entities need " +
                               std::to_string(size_t{count} * 20) +
                               " bytes after the count, got " +
                               std::to_string(r.remaining()));
  }
  out.resize(count);
  for (GuestEntity& e : out) {
    r.Read(e.id);
    r.Read(e.generation);
    r.Read(e.x);
    r.Read(e.y);
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
  Put<uint32_t>(out, static_cast<uint32_t>(subscribers.size()));
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
  LeReader r(bytes);
  for (size_t i = 0; i < count; ++i) {
    uint8_t has = 0;
    GuestArea a;
    r.Read(has);
    r.Read(a.x);
    r.Read(a.y);
    r.Read(a.radius);
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
  Put<uint32_t>(out, static_cast<uint32_t>(subscribers.size()));
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
