// Compiled with -ffp-contract=off (CMakeLists.txt): the drawn positions
// must be computed as the client computes them, a multiply and an add, not
// a fused multiply-add.
#include "replication/sent_history.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <unordered_set>

#include "replication/draw_rule.h"

namespace tessera::replication {
namespace {

bool SameQ(const int64_t* a, const int64_t* b) {
  return a[0] == b[0] && a[1] == b[1] && a[2] == b[2];
}

bool Holds(const std::vector<uint64_t>& bits, size_t i) {
  return ((bits[i >> 6] >> (i & 63)) & 1) != 0;
}

}  // namespace

SentHistory::SentHistory(uint32_t history_ticks)
    : history_ticks_(std::max<uint32_t>(history_ticks, 1)) {}

uint32_t SentHistory::history_ticks() const { return history_ticks_; }

void SentHistory::Clear() {
  for (WorldRecord& w : world_) {
    if (spare_q_.size() < 2) spare_q_.push_back(std::move(w.q));
  }
  world_.clear();
  subscribers_.clear();
  previous_world_tick_.reset();
}

void SentHistory::RecordWorld(const Mirror& mirror, uint64_t tick) {
  // Ticks went back (a restore): what clients were sent is gone with them.
  if (!world_.empty() && tick <= world_.back().tick) Clear();
  previous_world_tick_.reset();
  if (!world_.empty()) previous_world_tick_ = world_.back().tick;

  const size_t n = mirror.size();
  std::shared_ptr<const Membership> members;
  if (!world_.empty()) {
    const Membership& last = *world_.back().members;
    bool same =
        last.ids.size() == n &&
        std::equal(last.ids.begin(), last.ids.end(), mirror.ids().begin());
    for (size_t i = 0; same && i < n; ++i) {
      same = last.incarnations[i] == mirror.entity_at(i).incarnation;
    }
    if (same) members = world_.back().members;
  }
  if (members == nullptr) {
    auto m = std::make_shared<Membership>();
    m->serial = next_serial_++;
    m->ids.assign(mirror.ids().begin(), mirror.ids().end());
    m->incarnations.resize(n);
    for (size_t i = 0; i < n; ++i) {
      m->incarnations[i] = mirror.entity_at(i).incarnation;
    }
    members = std::move(m);
  }

  WorldRecord w;
  w.tick = tick;
  w.precision = mirror.config().precision;
  w.keep_until = tick + history_ticks_;
  w.members = std::move(members);
  if (!spare_q_.empty()) {
    w.q = std::move(spare_q_.back());
    spare_q_.pop_back();
  }
  w.q.resize(3 * n);
  for (size_t i = 0; i < n; ++i) {
    const MirrorEntity& e = mirror.entity_at(i);
    std::copy(e.q, e.q + 3, w.q.begin() + static_cast<ptrdiff_t>(3 * i));
  }
  world_.push_back(std::move(w));

  while (world_.size() > 1 && world_.front().keep_until < tick) {
    if (spare_q_.size() < 2) spare_q_.push_back(std::move(world_.front().q));
    world_.pop_front();
  }
  // Subscriber entries older than the ring go; so do subscribers left
  // without any (they were not sent anything for history_ticks ticks).
  const uint64_t oldest = tick > history_ticks_ ? tick - history_ticks_ : 0;
  for (auto it = subscribers_.begin(); it != subscribers_.end();) {
    Subscriber& s = it->second;
    while (s.count > 0 && s.at(0).tick < oldest) {
      s.ring[s.head].record.reset();
      s.head = (s.head + 1) % s.ring.size();
      --s.count;
    }
    it = s.count == 0 ? subscribers_.erase(it) : std::next(it);
  }
}

const SentHistory::Entry* SentHistory::Previous(
    std::string_view subscriber, const SubscriberStream& stream) const {
  if (!previous_world_tick_) return nullptr;
  auto it = subscribers_.find(subscriber);
  if (it == subscribers_.end() || it->second.count == 0) return nullptr;
  const Entry& e = it->second.back();
  if (e.tick != *previous_world_tick_ || e.stream != &stream) return nullptr;
  return &e;
}

void SentHistory::AddOverride(const HeldEntity& h, size_t m) {
  WorldRecord& w = world_.back();
  if (SameQ(&w.q[3 * m], h.q)) return;
  Override o{static_cast<uint32_t>(m), kExplicit};
  if (h.waiting_since != kNotWaiting && h.waiting_since > world_.front().tick) {
    // The client holds what it was sent before waiting_since: the newest
    // world record before it has that position (checked). Ticks usually
    // follow each other: look there first.
    const uint64_t want = h.waiting_since - 1;
    size_t k = static_cast<size_t>(
        std::min<uint64_t>(want - world_.front().tick, world_.size() - 1));
    if (world_[k].tick != want) {
      k = static_cast<size_t>(
              std::lower_bound(
                  world_.begin(), world_.end(), h.waiting_since,
                  [](const WorldRecord& x, uint64_t t) { return x.tick < t; }) -
              world_.begin()) -
          1;
    }
    WorldRecord& source = world_[k];
    // Only within the ring: keeps at most 2 * history_ticks + 1 world
    // records alive.
    if (w.tick - source.tick <= history_ticks_) {
      const Membership& sm = *source.members;
      const size_t j = LowerBoundFrom(sm.ids, h.id, source_cursors_[k]);
      source_cursors_[k] = j;
      if (j < sm.ids.size() && sm.ids[j] == h.id &&
          sm.incarnations[j] == h.incarnation && SameQ(&source.q[3 * j], h.q)) {
        o.source = static_cast<uint32_t>(w.tick - source.tick);
        source.keep_until =
            std::max(source.keep_until, w.tick + history_ticks_);
      }
    }
  }
  if (o.source == kExplicit) {
    o.source = kExplicit | static_cast<uint32_t>(explicit_q_.size() / 3);
    explicit_q_.insert(explicit_q_.end(), h.q, h.q + 3);
  }
  overrides_.push_back(o);
}

void SentHistory::BuildAll(const SubscriberStream& stream, Record& r) {
  const Membership& members = *world_.back().members;
  const size_t n = members.ids.size();
  r.bits.assign((n + 63) / 64, 0);
  size_t m = 0;
  for (const HeldEntity& h : stream.held()) {
    m = LowerBoundFrom(members.ids, h.id, m);
    if (m == n) break;
    // Held entities all come from this mirror (an encode of another one
    // would not match: it is not recorded).
    if (members.ids[m] != h.id || members.incarnations[m] != h.incarnation) {
      continue;
    }
    r.bits[m >> 6] |= uint64_t{1} << (m & 63);
    ++r.count;
    AddOverride(h, m);
  }
}

bool SentHistory::BuildFrom(const Record& previous,
                            const SubscriberStream& stream, Record& r) {
  const Membership& members = *world_.back().members;
  const std::vector<uint64_t>& ids = members.ids;
  r.bits = previous.bits;
  size_t m = 0;
  for (uint64_t id : stream.despawned()) {
    m = LowerBoundFrom(ids, id, m);
    if (m < ids.size() && ids[m] == id) {
      r.bits[m >> 6] &= ~(uint64_t{1} << (m & 63));
    }
  }
  m = 0;
  for (const MirrorEntity* e : stream.spawned()) {
    m = LowerBoundFrom(ids, e->id, m);
    if (m == ids.size() || ids[m] != e->id ||
        members.incarnations[m] != e->incarnation) {
      return false;
    }
    r.bits[m >> 6] |= uint64_t{1} << (m & 63);
  }
  r.count = 0;
  for (uint64_t word : r.bits) {
    r.count += static_cast<size_t>(std::popcount(word));
  }
  std::span<const HeldEntity> held = stream.held();
  if (r.count != held.size()) return false;
  // Only the deferred entities can be elsewhere than in the world record.
  m = 0;
  for (uint32_t i : stream.deferred()) {
    if (i >= held.size()) return false;
    const HeldEntity& h = held[i];
    m = LowerBoundFrom(ids, h.id, m);
    if (m == ids.size() || ids[m] != h.id ||
        members.incarnations[m] != h.incarnation || !Holds(r.bits, m)) {
      return false;
    }
    AddOverride(h, m);
  }
  return true;
}

std::shared_ptr<const SentHistory::Record> SentHistory::Build(
    const SubscriberStream& stream, const Entry* previous) {
  const uint64_t serial = world_.back().members->serial;
  const EncodeStats& last = stream.last();
  const bool continues = previous != nullptr &&
                         previous->record->members_serial == serial &&
                         !last.baseline;
  // The same entities as last tick, all at the mirror's positions (nothing
  // deferred): last tick's record, if it had no deferred positions either,
  // says the same over this tick's world record.
  if (continues && previous->record->overrides.empty() && last.spawns == 0 &&
      last.despawns == 0 && last.deferred == 0 &&
      previous->record->count == stream.held().size()) {
    return previous->record;
  }
  auto r = std::make_shared<Record>();
  r->members_serial = serial;
  overrides_.clear();
  explicit_q_.clear();
  source_cursors_.assign(world_.size(), 0);
  if (!continues || !BuildFrom(*previous->record, stream, *r)) {
    overrides_.clear();
    explicit_q_.clear();
    source_cursors_.assign(world_.size(), 0);
    BuildAll(stream, *r);
  }
  r->overrides.assign(overrides_.begin(), overrides_.end());
  r->explicit_q.assign(explicit_q_.begin(), explicit_q_.end());
  return r;
}

void SentHistory::Push(std::string_view subscriber,
                       const SubscriberStream& stream, uint64_t tick,
                       const std::shared_ptr<const Record>& record) {
  auto it = subscribers_.find(subscriber);
  if (it == subscribers_.end()) {
    it = subscribers_.emplace(std::string(subscriber), Subscriber{}).first;
    it->second.ring.resize(static_cast<size_t>(history_ticks_) + 1);
  }
  Subscriber& s = it->second;
  // A BASELINE starts the client again; a tick that is not after the last
  // one restarts its timeline (EntityTimeline.push).
  if (s.count > 0 && (stream.last().baseline || s.back().tick >= tick)) {
    for (Entry& e : s.ring) e = Entry{};
    s.head = 0;
    s.count = 0;
  }
  if (s.count == s.ring.size()) {  // (pruning keeps a slot free)
    s.ring[s.head] = Entry{};
    s.head = (s.head + 1) % s.ring.size();
    --s.count;
  }
  s.ring[(s.head + s.count) % s.ring.size()] = Entry{tick, &stream, record};
  ++s.count;
}

void SentHistory::RecordSent(std::string_view subscriber,
                             const SubscriberStream& stream, uint64_t tick) {
  if (world_.empty() || tick != world_.back().tick) return;
  std::shared_ptr<const Record> record =
      Build(stream, Previous(subscriber, stream));
  Push(subscriber, stream, tick, record);
}

void SentHistory::RecordShared(std::span<const std::string> subscribers,
                               const SubscriberStream& stream, uint64_t tick) {
  if (world_.empty() || tick != world_.back().tick || subscribers.empty()) {
    return;
  }
  const Entry* previous = nullptr;
  for (const std::string& name : subscribers) {
    previous = Previous(name, stream);
    if (previous != nullptr) break;
  }
  std::shared_ptr<const Record> record = Build(stream, previous);
  for (const std::string& name : subscribers) {
    Push(name, stream, tick, record);
  }
}

void SentHistory::Forget(std::string_view subscriber) {
  auto it = subscribers_.find(subscriber);
  if (it != subscribers_.end()) subscribers_.erase(it);
}

const SentHistory::WorldRecord* SentHistory::FindWorld(uint64_t tick) const {
  auto it = std::lower_bound(
      world_.begin(), world_.end(), tick,
      [](const WorldRecord& x, uint64_t t) { return x.tick < t; });
  return it == world_.end() || it->tick != tick ? nullptr : &*it;
}

const int64_t* SentHistory::HeldQ(const Entry& e, const WorldRecord& w,
                                  size_t index, size_t* cursor) const {
  const std::vector<Override>& o = e.record->overrides;
  while (*cursor < o.size() && o[*cursor].index < index) ++*cursor;
  if (*cursor == o.size() || o[*cursor].index != index) return &w.q[3 * index];
  const uint32_t source = o[*cursor].source;
  if (source & kExplicit) {
    return &e.record->explicit_q[3 * size_t{source & ~kExplicit}];
  }
  // Kept alive by its keep_until (Build), and holding the entity there.
  const WorldRecord* s = FindWorld(e.tick - source);
  const uint64_t id = w.members->ids[index];
  const std::vector<uint64_t>& ids = s->members->ids;
  const size_t j = static_cast<size_t>(
      std::lower_bound(ids.begin(), ids.end(), id) - ids.begin());
  return &s->q[3 * j];
}

std::optional<DrawnPicture> SentHistory::Draw(
    std::string_view subscriber, double view_tick,
    std::optional<double> max_back_ticks) const {
  auto it = subscribers_.find(subscriber);
  if (it == subscribers_.end() || it->second.count == 0) return std::nullopt;
  const Subscriber& s = it->second;
  const double newest = static_cast<double>(s.back().tick);
  double lo =
      std::max(newest - history_ticks_, static_cast<double>(s.at(0).tick));
  if (max_back_ticks && !std::isnan(*max_back_ticks)) {
    lo = std::max(lo, newest - std::max(0.0, *max_back_ticks));
  }
  const double view = std::isfinite(view_tick)
                          ? std::min(std::max(view_tick, lo), newest)
                          : newest;

  // A: the last tick at or before the view; B: the one after (EntityTimeline
  // .render).
  size_t a = s.count - 1;
  while (a > 0 && static_cast<double>(s.at(a).tick) > view) --a;
  const Entry& ea = s.at(a);
  const Entry* eb = a + 1 < s.count ? &s.at(a + 1) : nullptr;
  const double ta = static_cast<double>(ea.tick);
  const double t =
      DrawFraction(view, ta, eb != nullptr,
                   eb == nullptr ? ta : static_cast<double>(eb->tick));
  const WorldRecord& wa = *FindWorld(ea.tick);
  const WorldRecord* wb = eb == nullptr ? nullptr : FindWorld(eb->tick);

  DrawnPicture out;
  out.view_tick = view;
  out.now_tick = s.back().tick;
  const std::vector<uint64_t>& bits = ea.record->bits;
  size_t cursor_a = 0;
  size_t cursor_b = 0;
  size_t jb = 0;
  for (size_t k = 0; k < bits.size(); ++k) {
    for (uint64_t word = bits[k]; word != 0; word &= word - 1) {
      const size_t i = k * 64 + static_cast<size_t>(std::countr_zero(word));
      const uint64_t id = wa.members->ids[i];
      const int64_t* from = HeldQ(ea, wa, i, &cursor_a);
      const int64_t* to = from;
      double to_precision = wa.precision;
      if (wb != nullptr) {
        const Membership& mb = *wb->members;
        jb = LowerBoundFrom(mb.ids, id, jb);
        if (jb < mb.ids.size() && mb.ids[jb] == id &&
            mb.incarnations[jb] == wa.members->incarnations[i] &&
            Holds(eb->record->bits, jb)) {
          to = HeldQ(*eb, *wb, jb, &cursor_b);
          to_precision = wb->precision;
        }
      }
      double p[3];
      for (int axis = 0; axis < 3; ++axis) {
        const double f = static_cast<double>(from[axis]) * wa.precision;
        const double g = static_cast<double>(to[axis]) * to_precision;
        p[axis] = DrawBetween(f, g, t);
      }
      out.entities.push_back(DrawnEntity{id, p[0], p[1], p[2]});
    }
  }
  return out;
}

size_t SentHistory::memory_bytes() const {
  size_t bytes = sizeof(*this);
  const Membership* last = nullptr;
  for (const WorldRecord& w : world_) {
    bytes += sizeof(WorldRecord) + w.q.capacity() * sizeof(int64_t);
    if (w.members.get() != last) {  // shared only by consecutive records
      last = w.members.get();
      bytes += sizeof(Membership) + 2 * sizeof(void*) +
               (last->ids.capacity() + last->incarnations.capacity()) *
                   sizeof(uint64_t);
    }
  }
  for (const std::vector<int64_t>& q : spare_q_) {
    bytes += sizeof(q) + q.capacity() * sizeof(int64_t);
  }
  constexpr size_t kSmallString = 15;  // held inside the std::string
  constexpr size_t kMapNode = 4 * sizeof(void*);
  std::unordered_set<const Record*> records;
  for (const auto& [name, s] : subscribers_) {
    bytes += kMapNode + sizeof(std::pair<const std::string, Subscriber>) +
             s.ring.capacity() * sizeof(Entry);
    if (name.capacity() > kSmallString) bytes += name.capacity() + 1;
    for (size_t i = 0; i < s.count; ++i) {
      const Record* r = s.at(i).record.get();
      if (!records.insert(r).second) continue;
      bytes += sizeof(Record) + 2 * sizeof(void*) +
               r->bits.capacity() * sizeof(uint64_t) +
               r->overrides.capacity() * sizeof(Override) +
               r->explicit_q.capacity() * sizeof(int64_t);
    }
  }
  bytes += overrides_.capacity() * sizeof(Override) +
           explicit_q_.capacity() * sizeof(int64_t) +
           source_cursors_.capacity() * sizeof(size_t);
  return bytes;
}

}  // namespace tessera::replication
