#include "replication/mirror.h"

#include <algorithm>
#include <cmath>

namespace tessera::replication {

const MirrorEntity* Mirror::Find(uint64_t id) const {
  auto it = index_.find(id);
  return it == index_.end() ? nullptr : &slots_[it->second];
}

size_t LowerBoundFrom(std::span<const uint64_t> ids, uint64_t id, size_t from) {
  const size_t n = ids.size();
  if (from >= n || ids[from] >= id) return from;
  size_t lo = from + 1;  // ids[lo - 1] < id
  size_t step = 1;
  size_t hi = lo;
  while (hi < n && ids[hi] < id) {
    lo = hi + 1;
    step *= 2;
    hi = lo + step;
  }
  hi = std::min(hi, n);
  return static_cast<size_t>(
      std::lower_bound(ids.begin() + lo, ids.begin() + hi, id) - ids.begin());
}

void Mirror::Clear() {
  ++generation_;
  changed_ids_.clear();
  slots_.clear();
  free_slots_.clear();
  index_.clear();
  ids_.clear();
  sorted_slots_.clear();
}

Status Mirror::Apply(std::string_view change_list, uint64_t tick) {
  TESSERA_RETURN_IF_ERROR(
      ParseChangeList(change_list, config_.precision, &list_));
  TESSERA_RETURN_IF_ERROR(Check(list_));
  ApplyChecked(list_, tick);
  return Status::Ok();
}

Status Mirror::Check(const ChangeList& list) {
  removed_sorted_.assign(list.removed.begin(), list.removed.end());
  std::sort(removed_sorted_.begin(), removed_sorted_.end());
  for (size_t i = 1; i < removed_sorted_.size(); ++i) {
    if (removed_sorted_[i] == removed_sorted_[i - 1]) {
      return InvalidArgument("duplicate entity id " +
                             std::to_string(removed_sorted_[i]) +
                             " in the removed list");
    }
  }
  if (!list.full) {
    for (uint64_t id : removed_sorted_) {
      if (!index_.contains(id)) {
        return InvalidArgument("removal of unknown entity id " +
                               std::to_string(id) +
                               " (the store does not hold it)");
      }
    }
  }
  changed_sorted_.clear();
  for (const EntityChange& c : list.changed) {
    changed_sorted_.emplace_back(c.id, c.is_new);
  }
  std::sort(changed_sorted_.begin(), changed_sorted_.end());
  for (size_t i = 1; i < changed_sorted_.size(); ++i) {
    if (changed_sorted_[i].first == changed_sorted_[i - 1].first) {
      return InvalidArgument("duplicate entity id " +
                             std::to_string(changed_sorted_[i].first) +
                             " in the changed list");
    }
  }
  if (list.full) return Status::Ok();
  for (const auto& [id, is_new] : changed_sorted_) {
    const bool removed =
        std::binary_search(removed_sorted_.begin(), removed_sorted_.end(), id);
    const bool held = !removed && index_.contains(id);
    if (is_new && held) {
      return InvalidArgument("NEW for entity id " + std::to_string(id) +
                             ", which the store holds (list it in removed "
                             "to reuse the id)");
    }
    if (!is_new && !held) {
      return InvalidArgument(
          "change for unknown entity id " + std::to_string(id) +
          (removed ? " (not NEW, and this list removes it)"
                   : " (not NEW, and the store does not hold it)"));
    }
  }
  return Status::Ok();
}

void Mirror::ApplyComponents(const ChangeList& list, const EntityChange& c,
                             MirrorEntity& e, bool* changed) {
  for (uint32_t j = 0; j < c.component_count; ++j) {
    const ComponentChange& cc = list.components[c.first_component + j];
    auto it = std::lower_bound(
        e.components.begin(), e.components.end(), cc.id,
        [](const MirrorComponent& m, uint8_t id) { return m.id < id; });
    const bool found = it != e.components.end() && it->id == cc.id;
    if (cc.removed) {
      if (!found) continue;
      e.components.erase(it);
    } else if (found) {
      if (it->bytes == cc.bytes) continue;  // unchanged: nothing to send
      it->bytes.assign(cc.bytes);
      it->version = version_ + 1;
    } else {
      e.components.insert(
          it, MirrorComponent{cc.id, version_ + 1, std::string(cc.bytes)});
    }
    e.components_version = ++version_;
    *changed = true;
  }
}

void Mirror::ApplyChecked(const ChangeList& list, uint64_t tick) {
  if (list.full) {
    Clear();
  } else {
    for (uint64_t id : list.removed) {
      auto it = index_.find(id);
      slots_[it->second].components.clear();
      free_slots_.push_back(it->second);
      index_.erase(it);
    }
  }
  added_.clear();
  changed_ids_.clear();
  for (const EntityChange& c : list.changed) {
    MirrorEntity* e = nullptr;
    bool changed = false;
    if (list.full || c.is_new) {
      uint32_t slot = 0;
      if (!free_slots_.empty()) {
        slot = free_slots_.back();
        free_slots_.pop_back();
      } else {
        slot = static_cast<uint32_t>(slots_.size());
        slots_.emplace_back();
      }
      e = &slots_[slot];
      e->id = c.id;
      e->incarnation = ++incarnations_;
      std::fill(std::begin(e->position), std::end(e->position), 0.0);
      std::fill(std::begin(e->q), std::end(e->q), 0);
      e->components.clear();
      e->components_version = version_;
      index_[c.id] = slot;
      added_.push_back(c.id);
      changed = true;
    } else {
      e = &slots_[index_.find(c.id)->second];
    }
    if (c.has_position) {
      for (int axis = 0; axis < 3; ++axis) {
        e->position[axis] = c.position[axis];
        const int64_t q = std::llround(c.position[axis] / config_.precision);
        if (q != e->q[axis]) changed = true;
        e->q[axis] = q;
      }
    }
    ApplyComponents(list, c, *e, &changed);
    if (changed) {
      e->changed_tick = tick;
      changed_ids_.push_back(c.id);
    }
  }
  std::sort(changed_ids_.begin(), changed_ids_.end());
  if (list.full || !list.removed.empty() || !added_.empty()) {
    RebuildOrder(list.full);
  }
  tick_ = tick;
  ++generation_;
}

void Mirror::RebuildOrder(bool full) {
  std::sort(added_.begin(), added_.end());
  merged_ids_.clear();
  merged_slots_.clear();
  size_t a = 0;
  auto take_added_below = [&](uint64_t limit) {
    while (a < added_.size() && added_[a] < limit) {
      merged_ids_.push_back(added_[a]);
      merged_slots_.push_back(index_.find(added_[a])->second);
      ++a;
    }
  };
  if (!full) {
    for (size_t i = 0; i < ids_.size(); ++i) {
      const uint64_t id = ids_[i];
      if (std::binary_search(removed_sorted_.begin(), removed_sorted_.end(),
                             id)) {
        continue;  // removed (and maybe added again: taken from added_)
      }
      take_added_below(id);
      merged_ids_.push_back(id);
      merged_slots_.push_back(sorted_slots_[i]);
    }
  }
  take_added_below(kMaxEntityId + 1);
  ids_.swap(merged_ids_);
  sorted_slots_.swap(merged_slots_);
}

}  // namespace tessera::replication
