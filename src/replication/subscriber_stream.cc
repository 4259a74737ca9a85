#include "replication/subscriber_stream.h"

#include <cmath>

#include "replication/bit_io.h"

namespace tessera::replication {
namespace {

constexpr uint8_t kFlagBaseline = 1;
constexpr uint8_t kFlagYUp = 2;

double Priority(const Mirror& mirror, const MirrorEntity& e,
                const std::optional<Focus>& focus, uint64_t waiting) {
  double distance_ratio = 0;
  if (focus && focus->radius > 0) {
    const GroundPoint g = mirror.Ground(e);
    const double dx = g.x - focus->x;
    const double dy = g.y - focus->y;
    distance_ratio = std::sqrt(dx * dx + dy * dy) / focus->radius;
  }
  return (static_cast<double>(waiting) + 1) / (1 + distance_ratio);
}

}  // namespace

void SubscriberStream::Reset() {
  started_ = false;
  held_.clear();
  ClearScratch();
}

void SubscriberStream::Hold(const MirrorEntity& e, HeldEntity& h) {
  h.id = e.id;
  h.incarnation = e.incarnation;
  for (int a = 0; a < 3; ++a) h.q[a] = e.q[a];
  h.waiting_since = kNotWaiting;
  HoldComponents(e, h);
}

void SubscriberStream::HoldComponents(const MirrorEntity& e, HeldEntity& h) {
  h.components_version = e.components_version;
  h.components.clear();
  for (const MirrorComponent& c : e.components) {
    h.components.push_back(HeldComponent{c.id, c.version});
  }
}

uint32_t SubscriberStream::DiffComponents(const MirrorEntity& e,
                                          const HeldEntity& h) {
  uint32_t count = 0;
  size_t i = 0;
  size_t j = 0;
  auto set = [&](const MirrorComponent& c) {
    comp_scratch_.push_back(static_cast<char>(c.id));
    PutVarint(comp_scratch_, c.bytes.size() + 1);
    comp_scratch_ += c.bytes;
    ++count;
  };
  while (i < e.components.size() || j < h.components.size()) {
    if (j == h.components.size() ||
        (i < e.components.size() && e.components[i].id < h.components[j].id)) {
      set(e.components[i++]);
    } else if (i == e.components.size() ||
               h.components[j].id < e.components[i].id) {
      comp_scratch_.push_back(static_cast<char>(h.components[j++].id));
      PutVarint(comp_scratch_, 0);  // removed
      ++count;
    } else {
      if (e.components[i].version != h.components[j].version) {
        set(e.components[i]);
      }
      ++i;
      ++j;
    }
  }
  return count;
}

void SubscriberStream::Consider(const MirrorEntity& e, uint32_t held_index) {
  HeldEntity& h = next_[held_index];
  UpdateCandidate c;
  for (int a = 0; a < 3; ++a) {
    if (e.q[a] != h.q[a]) {
      c.mask |= kMaskX >> a;
      c.zz[a] = ZigZag(e.q[a] - h.q[a]);
    }
  }
  if (e.components_version != h.components_version) {
    c.comp_offset = static_cast<uint32_t>(comp_scratch_.size());
    c.comp_count = DiffComponents(e, h);
    c.comp_length = static_cast<uint32_t>(comp_scratch_.size()) - c.comp_offset;
    if (c.comp_count == 0) {
      h.components_version = e.components_version;  // nothing differs
    } else {
      c.mask |= kMaskC;
      c.comp_bytes =
          static_cast<uint32_t>(VarintSize(c.comp_count) + c.comp_length);
    }
  }
  if (c.mask == 0) {
    h.waiting_since = kNotWaiting;
    return;
  }
  c.id = e.id;
  c.held_index = held_index;
  c.entity = &e;
  candidates_.push_back(c);
}

void SubscriberStream::WriteHeader(const Config& config, bool baseline,
                                   std::string& out) {
  out.push_back(static_cast<char>((baseline ? kFlagBaseline : 0) |
                                  (config.y_up ? kFlagYUp : 0)));
  if (baseline) PutF64(out, config.precision);
  PutVarint(out, despawns_.size());
  for (size_t i = 0; i < despawns_.size(); ++i) {
    PutVarint(out, i == 0 ? despawns_[i] : despawns_[i] - despawns_[i - 1] - 1);
  }
  PutVarint(out, spawns_.size());
  for (size_t i = 0; i < spawns_.size(); ++i) {
    const MirrorEntity& e = *spawns_[i];
    PutVarint(out, i == 0 ? e.id : e.id - spawns_[i - 1]->id - 1);
    for (int a = 0; a < 3; ++a) PutVarint(out, ZigZag(e.q[a]));
    PutVarint(out, e.components.size());
    for (const MirrorComponent& c : e.components) {
      out.push_back(static_cast<char>(c.id));
      PutVarint(out, c.bytes.size());
      out += c.bytes;
    }
  }
}

void SubscriberStream::WriteUpdates(const UpdatePlan& plan, uint64_t tick,
                                    std::string& out) {
  PutVarint(out, plan.count);
  if (plan.count > 0) {
    for (int a = 0; a < 3; ++a) out.push_back(static_cast<char>(plan.k[a]));
    bits_.clear();
    BitWriter bw(&bits_);
    uint8_t prev_mask = kInitialMask;
    uint64_t prev_id = 0;
    bool first = true;
    for (size_t i = 0; i < candidates_.size(); ++i) {
      if (!selected_[i]) continue;
      const UpdateCandidate& c = candidates_[i];
      bw.WriteExpGolomb(first ? c.id : c.id - prev_id - 1, 0);
      first = false;
      prev_id = c.id;
      if (c.wire_mask == prev_mask) {
        bw.Write(1, 1);
      } else {
        bw.Write(c.wire_mask, 5);  // a 0 bit, then the 4 mask bits
        prev_mask = c.wire_mask;
      }
      for (int a = 0; a < 3; ++a) {
        if (c.wire_mask & (kMaskX >> a)) bw.WriteExpGolomb(c.zz[a], plan.k[a]);
      }
    }
    bw.Flush();
    PutVarint(out, bits_.size());
    out += bits_;
    for (size_t i = 0; i < candidates_.size(); ++i) {
      const UpdateCandidate& c = candidates_[i];
      if (!selected_[i] || (c.mask & kMaskC) == 0) continue;
      PutVarint(out, c.comp_count);
      out.append(comp_scratch_, c.comp_offset, c.comp_length);
    }
  }
  for (size_t i = 0; i < candidates_.size(); ++i) {
    const UpdateCandidate& c = candidates_[i];
    HeldEntity& h = next_[c.held_index];
    if (selected_[i]) {
      for (int a = 0; a < 3; ++a) h.q[a] = c.entity->q[a];
      h.waiting_since = kNotWaiting;
      if (c.mask & kMaskC) HoldComponents(*c.entity, h);
    } else {
      deferred_.push_back(c.held_index);
      if (h.waiting_since == kNotWaiting) h.waiting_since = tick;
    }
  }
}

void SubscriberStream::ClearScratch() {
  despawns_.clear();
  spawns_.clear();
  candidates_.clear();
  deferred_.clear();
  comp_scratch_.clear();
}

void SubscriberStream::MergeVisible(const Mirror& mirror,
                                    std::span<const uint64_t> visible) {
  next_.clear();
  ClearScratch();
  // Merge what the client holds with what it should see, both ascending.
  size_t h = 0;
  size_t m = 0;
  bool any = false;
  uint64_t last_id = 0;
  for (uint64_t id : visible) {
    if (any && id <= last_id) continue;  // not ascending: a caller's bug
    any = true;
    last_id = id;
    m = mirror.LowerBound(id, m);
    if (m == mirror.size() || mirror.ids()[m] != id) continue;
    const MirrorEntity& e = mirror.entity_at(m);
    while (h < held_.size() && held_[h].id < id) {
      despawns_.push_back(held_[h++].id);
    }
    if (h < held_.size() && held_[h].id == id) {
      HeldEntity& old = held_[h++];
      if (old.incarnation == e.incarnation) {
        next_.push_back(std::move(old));
        Consider(e, static_cast<uint32_t>(next_.size() - 1));
        continue;
      }
      despawns_.push_back(id);  // removed and reused: despawn and spawn
    }
    spawns_.push_back(&e);
    next_.emplace_back();
    Hold(e, next_.back());
  }
  while (h < held_.size()) despawns_.push_back(held_[h++].id);
}

bool SubscriberStream::InStep(const Mirror& mirror,
                              std::span<const uint64_t> visible) {
  // Only the last Apply's changes are new to this client when it was sent
  // everything (nothing deferred) at the previous generation and still
  // sees exactly what it holds.
  if (generation_ + 1 != mirror.generation() || last_.deferred != 0 ||
      visible.size() != held_.size()) {
    return false;
  }
  for (size_t i = 0; i < visible.size(); ++i) {
    if (visible[i] != held_[i].id) return false;
  }
  next_.clear();
  next_.swap(held_);
  ClearScratch();
  size_t h = 0;
  for (uint64_t id : mirror.changed_ids()) {
    while (h < next_.size() && next_[h].id < id) ++h;
    if (h == next_.size()) break;
    if (next_[h].id != id) continue;  // not visible to this client
    const MirrorEntity* e = mirror.Find(id);
    if (e == nullptr || e->incarnation != next_[h].incarnation) {
      // Removed and reused: the full merge despawns and spawns it.
      held_.swap(next_);
      return false;
    }
    Consider(*e, static_cast<uint32_t>(h));
  }
  return true;
}

void SubscriberStream::Encode(const Mirror& mirror,
                              std::span<const uint64_t> visible,
                              std::optional<Focus> focus, uint64_t tick,
                              std::string& out) {
  const bool baseline = !started_;
  started_ = true;
  const bool in_step = !baseline && InStep(mirror, visible);
  if (!in_step) MergeVisible(mirror, visible);
  generation_ = mirror.generation();

  out.clear();
  WriteHeader(mirror.config(), baseline, out);
  const uint32_t budget = mirror.config().max_bytes_per_tick;
  UpdatePlan plan = planner_.PlanAll(candidates_, &selected_);
  if (budget > 0 && out.size() + plan.size > budget && candidates_.size() > 1) {
    for (UpdateCandidate& c : candidates_) {
      const HeldEntity& hh = next_[c.held_index];
      const uint64_t waiting =
          hh.waiting_since == kNotWaiting || hh.waiting_since > tick
              ? 0
              : tick - hh.waiting_since;
      c.priority = Priority(mirror, *c.entity, focus, waiting);
    }
    plan = planner_.PlanWithin(candidates_, out.size(), budget, &selected_);
  }
  WriteUpdates(plan, tick, out);
  held_.swap(next_);

  last_.baseline = baseline;
  last_.in_step = in_step;
  last_.despawns = despawns_.size();
  last_.spawns = spawns_.size();
  last_.updates = plan.count;
  last_.deferred = candidates_.size() - plan.count;
  last_.bytes = out.size();
}

}  // namespace tessera::replication
