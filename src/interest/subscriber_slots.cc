#include "interest/subscriber_slots.h"

#include <utility>

namespace tessera::interest::internal {

Status SubscriberSlots::Resolve(std::span<const Subscriber> subscribers,
                                std::vector<uint32_t>& slots) {
  ++epoch_;
  slots.resize(subscribers.size());
  for (size_t i = 0; i < subscribers.size(); ++i) {
    const std::string_view id = subscribers[i].id;
    uint32_t slot;
    if (i < last_order_.size() && slots_[last_order_[i]].live &&
        slots_[last_order_[i]].id == id) {
      slot = last_order_[i];
    } else if (auto it = index_.find(id); it != index_.end()) {
      slot = it->second;
    } else {
      if (free_.empty()) {
        slot = static_cast<uint32_t>(slots_.size());
        slots_.emplace_back();
      } else {
        slot = free_.back();
        free_.pop_back();
      }
      Slot& s = slots_[slot];
      s.id.assign(id);
      s.visible = {};
      s.live = true;
      index_.emplace(s.id, slot);
    }
    if (slots_[slot].epoch == epoch_) {
      return InvalidArgument("interest: subscriber '" + std::string(id) +
                             "' is listed twice");
    }
    slots_[slot].epoch = epoch_;
    slots[i] = slot;
  }
  return Status::Ok();
}

void SubscriberSlots::Commit(std::span<const uint32_t> slots) {
  for (uint32_t slot = 0; slot < slots_.size(); ++slot) {
    Slot& s = slots_[slot];
    if (!s.live || s.epoch == epoch_) continue;
    index_.erase(s.id);
    s.live = false;
    s.visible = {};
    free_.push_back(slot);
  }
  last_order_.assign(slots.begin(), slots.end());
}

void SubscriberSlots::Clear() {
  slots_.clear();
  free_.clear();
  index_.clear();
  last_order_.clear();
}

}  // namespace tessera::interest::internal
