#include "replication/testing/guest_store.h"

#include <algorithm>
#include <cmath>

#include "replication/change_list.h"

namespace tessera::replication::testing {

void GuestStore::Spawn(uint64_t id) {
  entities_[id] = Entity{};
  Pending& p = pending_[id];
  p = Pending{};
  p.is_new = true;
}

void GuestStore::Remove(uint64_t id) {
  entities_.erase(id);
  pending_.erase(id);
  if (host_holds_.contains(id)) removed_.insert(id);
}

void GuestStore::Move(uint64_t id, double x, double y, double z) {
  Entity& e = entities_.at(id);
  e.position[0] = x;
  e.position[1] = y;
  e.position[2] = z;
  pending_[id].position = true;
}

void GuestStore::SetComponent(uint64_t id, uint8_t component,
                              std::string bytes) {
  entities_.at(id).components[component] = std::move(bytes);
  pending_[id].components.insert(component);
}

void GuestStore::RemoveComponent(uint64_t id, uint8_t component) {
  entities_.at(id).components.erase(component);
  pending_[id].components.insert(component);
}

std::string GuestStore::TakeChanges() {
  ChangeListWriter w(first_);
  auto list_all = [&](uint64_t id, const Entity& e) {
    w.Change(id, true);
    w.Position(e.position[0], e.position[1], e.position[2]);
    for (const auto& [c, bytes] : e.components) w.SetComponent(c, bytes);
  };
  if (first_) {
    for (const auto& [id, e] : entities_) list_all(id, e);
  } else {
    for (uint64_t id : removed_) w.Remove(id);
    for (const auto& [id, p] : pending_) {
      const Entity& e = entities_.at(id);
      if (p.is_new) {
        list_all(id, e);
        continue;
      }
      w.Change(id, false);
      if (p.position) w.Position(e.position[0], e.position[1], e.position[2]);
      for (uint8_t c : p.components) {
        auto it = e.components.find(c);
        if (it == e.components.end()) {
          w.RemoveComponent(c);
        } else {
          w.SetComponent(c, it->second);
        }
      }
    }
  }
  host_holds_.clear();
  for (const auto& [id, e] : entities_) host_holds_.insert(id);
  removed_.clear();
  pending_.clear();
  first_ = false;
  return w.Finish();
}

namespace {

double Clamp(double v, double extent) {
  return std::max(-extent, std::min(extent, v));
}

std::string RandomBytes(Rng& rng) {
  std::string s(rng.Below(6), '\0');
  for (char& c : s) c = static_cast<char>(rng.Next());
  return s;
}

uint64_t RandomHeld(const GuestStore& store, Rng& rng) {
  auto it = store.entities().begin();
  std::advance(it, static_cast<long>(rng.Below(store.entities().size())));
  return it->first;
}

}  // namespace

void RandomTick(GuestStore& store, Rng& rng, const RandomOptions& o) {
  for (int i = 0; i < o.events; ++i) {
    if (rng.Chance(o.spawn)) {
      const uint64_t id = rng.Below(o.max_id);
      if (!store.Holds(id)) {
        store.Spawn(id);
        if (rng.Chance(0.7)) {
          store.Move(id, (rng.Uniform() * 2 - 1) * o.extent,
                     (rng.Uniform() * 2 - 1) * o.extent,
                     (rng.Uniform() * 2 - 1) * o.extent);
        }
        if (rng.Chance(0.5)) {
          store.SetComponent(id, static_cast<uint8_t>(rng.Below(4)),
                             RandomBytes(rng));
        }
      }
    }
    if (!store.entities().empty() && rng.Chance(o.remove)) {
      store.Remove(RandomHeld(store, rng));
    }
    if (!store.entities().empty() && rng.Chance(o.reuse)) {
      const uint64_t id = RandomHeld(store, rng);
      store.Remove(id);
      store.Spawn(id);
      store.Move(id, rng.Uniform() * o.extent, 0, 0);
    }
  }
  std::vector<uint64_t> ids;
  for (const auto& [id, e] : store.entities()) ids.push_back(id);
  for (uint64_t id : ids) {
    const GuestStore::Entity& e = store.entities().at(id);
    if (rng.Chance(o.move)) {
      double p[3];
      for (int a = 0; a < 3; ++a) {
        p[a] = rng.Chance(0.3)
                   ? e.position[a]
                   : Clamp(e.position[a] + (rng.Uniform() * 2 - 1) * o.step,
                           o.extent);
      }
      store.Move(id, p[0], p[1], p[2]);
    }
    if (rng.Chance(o.component)) {
      const uint8_t c = static_cast<uint8_t>(rng.Below(4));
      if (rng.Chance(0.3)) {
        store.RemoveComponent(id, c);
      } else {
        store.SetComponent(id, c, RandomBytes(rng));
      }
    }
  }
}

std::vector<uint64_t> RandomVisible(const Mirror& mirror, Rng& rng,
                                    double keep) {
  std::vector<uint64_t> out;
  for (uint64_t id : mirror.ids()) {
    if (rng.Chance(keep)) out.push_back(id);
  }
  return out;
}

namespace {

std::string Describe(uint64_t id, const std::string& what) {
  return "entity " + std::to_string(id) + ": " + what;
}

std::string CompareEntity(const DecodedEntity& d, const int64_t q[3],
                          const MirrorEntity& m,
                          const std::vector<HeldComponent>* held_components) {
  for (int a = 0; a < 3; ++a) {
    if (d.q[a] != q[a]) {
      return Describe(d.id, "q[" + std::to_string(a) + "] is " +
                                std::to_string(d.q[a]) + ", expected " +
                                std::to_string(q[a]));
    }
  }
  // The component ids (and bytes, where the version is the mirror's).
  std::vector<std::pair<uint8_t, const std::string*>> want;
  if (held_components == nullptr) {
    for (const MirrorComponent& c : m.components)
      want.emplace_back(c.id, &c.bytes);
  } else {
    for (const HeldComponent& h : *held_components) {
      const std::string* bytes = nullptr;
      for (const MirrorComponent& c : m.components) {
        if (c.id == h.id && c.version == h.version) bytes = &c.bytes;
      }
      want.emplace_back(h.id, bytes);
    }
  }
  if (want.size() != d.components.size()) {
    return Describe(d.id, std::to_string(d.components.size()) +
                              " components, expected " +
                              std::to_string(want.size()));
  }
  for (size_t i = 0; i < want.size(); ++i) {
    if (d.components[i].id != want[i].first) {
      return Describe(d.id, "component ids differ");
    }
    if (want[i].second != nullptr && d.components[i].bytes != *want[i].second) {
      return Describe(
          d.id, "component " + std::to_string(want[i].first) + " bytes differ");
    }
  }
  return "";
}

}  // namespace

std::string CompareWithHeld(const Decoder& decoder,
                            std::span<const HeldEntity> held,
                            const Mirror& mirror) {
  std::span<const DecodedEntity> got = decoder.entities();
  if (got.size() != held.size()) {
    return "decoder holds " + std::to_string(got.size()) +
           " entities, the stream " + std::to_string(held.size());
  }
  for (size_t i = 0; i < held.size(); ++i) {
    if (got[i].id != held[i].id) {
      return "id " + std::to_string(got[i].id) + " where the stream holds " +
             std::to_string(held[i].id);
    }
    const MirrorEntity* m = mirror.Find(held[i].id);
    if (m == nullptr) return Describe(held[i].id, "not in the mirror");
    std::string diff =
        CompareEntity(got[i], held[i].q, *m, &held[i].components);
    if (!diff.empty()) return diff;
  }
  return "";
}

std::string CompareWithMirror(const Decoder& decoder, const Mirror& mirror,
                              std::span<const uint64_t> visible) {
  std::vector<const MirrorEntity*> want;
  for (uint64_t id : visible) {
    if (const MirrorEntity* m = mirror.Find(id)) want.push_back(m);
  }
  std::span<const DecodedEntity> got = decoder.entities();
  if (got.size() != want.size()) {
    return "decoder holds " + std::to_string(got.size()) +
           " entities, expected " + std::to_string(want.size());
  }
  for (size_t i = 0; i < want.size(); ++i) {
    if (got[i].id != want[i]->id) {
      return "id " + std::to_string(got[i].id) + " where " +
             std::to_string(want[i]->id) + " was expected";
    }
    std::string diff = CompareEntity(got[i], want[i]->q, *want[i], nullptr);
    if (!diff.empty()) return diff;
  }
  return "";
}

}  // namespace tessera::replication::testing
