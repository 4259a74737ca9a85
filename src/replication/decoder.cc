#include "replication/decoder.h"

#include <algorithm>
#include <cmath>

#include "replication/bit_io.h"
#include "replication/change_list.h"
#include "replication/update_plan.h"

namespace tessera::replication {
namespace {

constexpr uint8_t kFlagBaseline = 1;
constexpr uint8_t kFlagYUp = 2;
constexpr int64_t kMaxQ = int64_t{1} << 52;

Status Bad(std::string m) { return InvalidArgument(std::move(m)); }
Status Truncated(const std::string& what) { return Bad("truncated: " + what); }

// Reads a list of ascending ids in the "ids" scheme (varints).
bool NextId(ByteReader& r, bool first, uint64_t prev, uint64_t* id) {
  uint64_t v = 0;
  if (!r.Varint(&v)) return false;
  *id = first ? v : prev + v + 1;
  return true;
}

bool IdOk(bool first, uint64_t prev, uint64_t gap, uint64_t id) {
  if (!first && (gap > kMaxEntityId || id <= prev)) return false;
  return id <= kMaxEntityId;
}

bool QOk(int64_t q) { return q >= -kMaxQ && q <= kMaxQ; }

// Index of `id` in `v` (ascending) searching from `from`; v.size() if
// absent.
size_t FindFrom(const std::vector<DecodedEntity>& v, size_t from, uint64_t id) {
  auto it = std::lower_bound(
      v.begin() + static_cast<std::ptrdiff_t>(std::min(from, v.size())),
      v.end(), id, [](const DecodedEntity& e, uint64_t x) { return e.id < x; });
  return it != v.end() && it->id == id ? static_cast<size_t>(it - v.begin())
                                       : v.size();
}

void SetComponent(DecodedEntity& e, uint8_t id, std::string_view bytes) {
  auto it = std::lower_bound(
      e.components.begin(), e.components.end(), id,
      [](const DecodedComponent& c, uint8_t x) { return c.id < x; });
  if (it != e.components.end() && it->id == id) {
    it->bytes.assign(bytes);
  } else {
    e.components.insert(it, DecodedComponent{id, std::string(bytes)});
  }
}

void RemoveComponent(DecodedEntity& e, uint8_t id) {
  auto it = std::lower_bound(
      e.components.begin(), e.components.end(), id,
      [](const DecodedComponent& c, uint8_t x) { return c.id < x; });
  if (it != e.components.end() && it->id == id) e.components.erase(it);
}

}  // namespace

void Decoder::Reset() {
  has_baseline_ = false;
  entities_.clear();
}

const DecodedEntity* Decoder::Find(uint64_t id) const {
  const size_t i = FindFrom(entities_, 0, id);
  return i == entities_.size() ? nullptr : &entities_[i];
}

Status Decoder::Apply(std::string_view payload) {
  entered_.clear();
  left_.clear();
  if (!payload.empty() && (payload[0] & kFlagBaseline) == 0 && !has_baseline_) {
    return Status(StatusCode::kFailedPrecondition,
                  "waiting for a baseline: payload ignored");
  }
  Status s = ApplyValid(payload);
  if (!s.ok()) {
    Reset();
    entered_.clear();
    left_.clear();
    return Bad("malformed entities payload: " + s.message());
  }
  return s;
}

Status Decoder::ApplyValid(std::string_view payload) {
  ByteReader r(payload);
  uint8_t flags = 0;
  if (!r.U8(&flags)) return Truncated("no flags byte");
  if ((flags & ~(kFlagBaseline | kFlagYUp)) != 0) {
    return Bad("flags bits 2-7 are set (flags " + std::to_string(flags) + ")");
  }
  y_up_ = (flags & kFlagYUp) != 0;
  if (flags & kFlagBaseline) {
    double precision = 0;
    if (!r.F64(&precision)) return Truncated("precision");
    if (!std::isfinite(precision) || !(precision > 0)) {
      return Bad("precision is not a finite number > 0");
    }
    precision_ = precision;
    has_baseline_ = true;
    // Everything held is dropped; what is not spawned again has left.
    merged_.swap(entities_);
    entities_.clear();
  } else {
    merged_.clear();
  }

  // Despawns.
  uint64_t count = 0;
  if (!r.Varint(&count)) return Truncated("despawn_count");
  if (count > r.remaining()) return Truncated("despawn list");
  despawned_.assign(entities_.size(), 0);
  uint64_t prev = 0;
  size_t cursor = 0;
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t id = 0;
    if (!NextId(r, i == 0, prev, &id)) return Truncated("despawn list");
    if (!IdOk(i == 0, prev, id - prev - 1, id)) {
      return Bad("despawn id out of range");
    }
    prev = id;
    cursor = FindFrom(entities_, cursor, id);
    if (cursor == entities_.size()) {
      return Bad("despawn of entity id " + std::to_string(id) +
                 ", which is not held");
    }
    despawned_[cursor] = 1;
    left_.push_back(id);
  }
  if (count > 0) {
    size_t w = 0;
    for (size_t i = 0; i < entities_.size(); ++i) {
      if (!despawned_[i]) {
        if (w != i) entities_[w] = std::move(entities_[i]);
        ++w;
      }
    }
    entities_.resize(w);
  }

  // Spawns.
  if (!r.Varint(&count)) return Truncated("spawn_count");
  if (count > r.remaining() / 5) return Truncated("spawn list");
  spawned_.resize(count);
  for (uint64_t i = 0; i < count; ++i) {
    DecodedEntity& e = spawned_[i];
    const uint64_t before = prev;
    if (!NextId(r, i == 0, prev, &e.id)) return Truncated("spawn id");
    if (!IdOk(i == 0, before, e.id - before - 1, e.id)) {
      return Bad("spawn id out of range");
    }
    prev = e.id;
    const std::string label = "spawn of entity id " + std::to_string(e.id);
    for (int a = 0; a < 3; ++a) {
      uint64_t zz = 0;
      if (!r.Varint(&zz)) return Truncated(label + " position");
      e.q[a] = UnZigZag(zz);
      if (!QOk(e.q[a])) return Bad(label + ": |q| above 2^52");
    }
    uint64_t comps = 0;
    if (!r.Varint(&comps)) return Truncated(label + " component_count");
    if (comps > r.remaining() / 2) return Truncated(label + " components");
    e.components.resize(comps);
    for (uint64_t j = 0; j < comps; ++j) {
      DecodedComponent& c = e.components[j];
      uint64_t len = 0;
      std::string_view bytes;
      if (!r.U8(&c.id) || !r.Varint(&len) || !r.Bytes(len, &bytes)) {
        return Truncated(label + " component");
      }
      if (j > 0 && c.id <= e.components[j - 1].id) {
        return Bad(label + ": component ids not strictly ascending");
      }
      c.bytes.assign(bytes);
    }
    entered_.push_back(e.id);
  }
  if (flags & kFlagBaseline) {
    // Held before the baseline and not spawned again: left.
    size_t s = 0;
    for (const DecodedEntity& old : merged_) {
      while (s < spawned_.size() && spawned_[s].id < old.id) ++s;
      if (s == spawned_.size() || spawned_[s].id != old.id) {
        left_.push_back(old.id);
      }
    }
  }
  if (count > 0) {
    merged_.clear();
    size_t a = 0;
    for (DecodedEntity& s : spawned_) {
      while (a < entities_.size() && entities_[a].id < s.id) {
        merged_.push_back(std::move(entities_[a++]));
      }
      if (a < entities_.size() && entities_[a].id == s.id) ++a;  // replaced
      merged_.push_back(std::move(s));
    }
    while (a < entities_.size()) merged_.push_back(std::move(entities_[a++]));
    entities_.swap(merged_);
  }

  // Updates.
  if (!r.Varint(&count)) return Truncated("update_count");
  if (count > 0) {
    uint8_t k[3] = {0, 0, 0};
    for (int a = 0; a < 3; ++a) {
      if (!r.U8(&k[a])) return Truncated("Exp-Golomb orders");
      if (k[a] > kMaxOrder) {
        return Bad("Exp-Golomb order " + std::to_string(k[a]) + " above 32");
      }
    }
    uint64_t bit_bytes = 0;
    std::string_view section;
    if (!r.Varint(&bit_bytes) || !r.Bytes(bit_bytes, &section)) {
      return Truncated("bit section");
    }
    if (count > bit_bytes * 4) return Truncated("bit section records");
    BitReader br(section);
    comp_targets_.clear();
    uint8_t prev_mask = kInitialMask;
    cursor = 0;
    for (uint64_t i = 0; i < count; ++i) {
      uint64_t gap = 0;
      uint64_t same = 0;
      uint64_t mask = prev_mask;
      if (!br.ReadExpGolomb(0, &gap) || !br.Read(1, &same) ||
          (!same && !br.Read(4, &mask))) {
        return Truncated("update record " + std::to_string(i));
      }
      const uint64_t id = i == 0 ? gap : prev + gap + 1;
      if (!IdOk(i == 0, prev, gap, id)) return Bad("update id out of range");
      prev = id;
      prev_mask = static_cast<uint8_t>(mask);
      cursor = FindFrom(entities_, cursor, id);
      if (cursor == entities_.size()) {
        return Bad("update of entity id " + std::to_string(id) +
                   ", which is not held");
      }
      DecodedEntity& e = entities_[cursor];
      for (int a = 0; a < 3; ++a) {
        if ((mask & (kMaskX >> a)) == 0) continue;
        uint64_t zz = 0;
        if (!br.ReadExpGolomb(k[a], &zz)) {
          return Truncated("update record " + std::to_string(i) + " delta");
        }
        int64_t q = 0;
        if (__builtin_add_overflow(e.q[a], UnZigZag(zz), &q) || !QOk(q)) {
          return Bad("update of entity id " + std::to_string(id) +
                     ": |q| above 2^52");
        }
        e.q[a] = q;
      }
      if (mask & kMaskC) comp_targets_.push_back(static_cast<uint32_t>(cursor));
    }
    if (br.bytes_consumed() != section.size()) {
      return Bad("trailing bytes in the bit section");
    }
    for (uint32_t index : comp_targets_) {
      DecodedEntity& e = entities_[index];
      uint64_t changes = 0;
      if (!r.Varint(&changes)) return Truncated("component changes");
      if (changes > r.remaining() / 2) return Truncated("component changes");
      for (uint64_t j = 0; j < changes; ++j) {
        uint8_t id = 0;
        uint64_t len_plus_one = 0;
        std::string_view bytes;
        if (!r.U8(&id) || !r.Varint(&len_plus_one)) {
          return Truncated("component change");
        }
        if (len_plus_one == 0) {
          RemoveComponent(e, id);
          continue;
        }
        if (!r.Bytes(len_plus_one - 1, &bytes)) {
          return Truncated("component bytes");
        }
        SetComponent(e, id, bytes);
      }
    }
  }
  if (!r.AtEnd()) {
    return Bad("trailing bytes: " + std::to_string(r.remaining()) +
               " after byte " + std::to_string(r.offset()));
  }
  return Status::Ok();
}

}  // namespace tessera::replication
