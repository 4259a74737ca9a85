// Compiled with -ffp-contract=off, like sent_history.cc (the client's
// arithmetic: a multiply and an add).
#include "replication/testing/sent_model.h"

#include <cmath>
#include <cstdio>

namespace tessera::replication::testing {

void SentModel::World(uint64_t tick) {
  for (auto& [name, sent] : subscribers_) {
    while (!sent.empty() && sent.front().tick + history_ < tick) {
      sent.pop_front();
    }
  }
}

void SentModel::Sent(const std::string& subscriber,
                     const SubscriberStream& stream, uint64_t tick) {
  std::deque<SentTick>& sent = subscribers_[subscriber];
  if (stream.last().baseline) sent.clear();
  SentTick one{tick, {}};
  for (const HeldEntity& h : stream.held()) {
    one.held[h.id] = Held{h.incarnation, {h.q[0], h.q[1], h.q[2]}};
  }
  sent.push_back(std::move(one));
}

std::optional<DrawnPicture> SentModel::Draw(
    const std::string& subscriber, double view,
    std::optional<double> max_back) const {
  auto it = subscribers_.find(subscriber);
  if (it == subscribers_.end() || it->second.empty()) return std::nullopt;
  const std::deque<SentTick>& sent = it->second;
  const double newest = static_cast<double>(sent.back().tick);
  double lo = newest - history_;
  if (lo < static_cast<double>(sent.front().tick)) {
    lo = static_cast<double>(sent.front().tick);
  }
  if (max_back && !std::isnan(*max_back)) {
    const double back = *max_back < 0 ? 0 : *max_back;
    if (lo < newest - back) lo = newest - back;
  }
  double r = view;
  if (!std::isfinite(r)) {
    r = newest;
  } else if (r < lo) {
    r = lo;
  } else if (r > newest) {
    r = newest;
  }
  size_t a = 0;
  for (size_t i = 0; i < sent.size(); ++i) {
    if (static_cast<double>(sent[i].tick) <= r) a = i;
  }
  const SentTick* b = a + 1 < sent.size() ? &sent[a + 1] : nullptr;
  double t = 0;
  if (b != nullptr) {
    t = (r - static_cast<double>(sent[a].tick)) /
        static_cast<double>(b->tick - sent[a].tick);
    t = t < 0 ? 0 : (t > 1 ? 1 : t);
  }
  DrawnPicture p;
  p.view_tick = r;
  p.now_tick = sent.back().tick;
  for (const auto& [id, from] : sent[a].held) {
    Held to = from;
    if (b != nullptr) {
      auto next = b->held.find(id);
      if (next != b->held.end() &&
          next->second.incarnation == from.incarnation) {
        to = next->second;
      }
    }
    double xyz[3];
    for (int i = 0; i < 3; ++i) {
      const double f = static_cast<double>(from.q[i]) * precision_;
      const double g = static_cast<double>(to.q[i]) * precision_;
      xyz[i] = f + (g - f) * t;
    }
    p.entities.push_back(DrawnEntity{id, xyz[0], xyz[1], xyz[2]});
  }
  return p;
}

std::string PictureText(const std::optional<DrawnPicture>& p) {
  if (!p) return "(nothing)";
  std::string out;
  char buf[128];
  for (const DrawnEntity& e : p->entities) {
    std::snprintf(buf, sizeof(buf), "%s%llu:(%.17g,%.17g,%.17g)",
                  out.empty() ? "" : " ", static_cast<unsigned long long>(e.id),
                  e.x, e.y, e.z);
    out += buf;
  }
  return out;
}

}  // namespace tessera::replication::testing
