#include "interest/engine.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace tessera::interest::internal {
namespace {

// v = values, growing v geometrically (assign alone would allocate exactly,
// again at each new high-water mark).
void AssignWithRoom(std::vector<uint64_t>& v,
                    std::span<const uint64_t> values) {
  if (v.capacity() < values.size()) v.reserve(2 * values.size());
  v.assign(values.begin(), values.end());
}

}  // namespace

void Engine::Reset() {
  entities_.Clear();
  slots_.Clear();
  states_[0].Clear();
  states_[1].Clear();
}

Status Engine::Update(std::span<const EntityPos> entities,
                      std::span<const Subscriber> subscribers,
                      const Filter* filter, std::vector<View>& views) {
  for (const Subscriber& s : subscribers) {
    if (!s.area) continue;
    const Area& a = *s.area;
    if (!std::isfinite(a.x) || !std::isfinite(a.y) ||
        !std::isfinite(a.radius) || !(a.radius >= 0)) {
      return InvalidArgument("interest: subscriber '" + std::string(s.id) +
                             "' has a non-finite area or a negative radius");
    }
  }
  TESSERA_RETURN_IF_ERROR(entities_.Load(entities));
  TESSERA_RETURN_IF_ERROR(slots_.Resolve(subscribers, sub_slots_));

  const size_t n = entities_.size();
  grid_.Build(entities_.xs(), entities_.ys(), config_.cell_size);
  if (hits_.size() < n) hits_.resize(n);
  const size_t words = (n + 63) / 64;
  if (was_bits_.size() < words) {
    was_bits_.resize(words, 0);
    cand_bits_.resize(words, 0);
    was_words_.resize(words);
  }

  // Candidates of every subscriber, in range with hysteresis.
  views.resize(subscribers.size());
  entered_.Clear();
  dropped_.Clear();
  new_states().Clear();
  const std::span<const uint64_t> states = states_[committed_].all();
  for (size_t i = 0; i < subscribers.size(); ++i) {
    const SubscriberSlots::Extent& e = slots_.visible(sub_slots_[i]);
    Collect(subscribers[i], states.subspan(e.offset, e.size), views[i].visible);
  }

  const bool filtered = filter != nullptr && *filter;
  if (filtered) {
    batch_.Reset(views);
    TESSERA_RETURN_IF_ERROR((*filter)(subscribers, batch_));
  }

  // Nothing can fail from here on.
  for (size_t i = 0; i < subscribers.size(); ++i) {
    const size_t state_size =
        MakeView(i, filtered && !batch_.KeepsAll(i), views[i]);
    slots_.visible(sub_slots_[i]) = {new_states().offsets()[i], state_size};
  }
  committed_ = 1 - committed_;
  slots_.Commit(sub_slots_);
  entities_.Commit();
  return Status::Ok();
}

size_t Engine::MakeView(size_t i, bool some_hidden, View& view) {
  const std::span<const uint64_t> entered = entered_[i];
  const std::span<const uint64_t> dropped = dropped_[i];
  const std::span<uint64_t> state = new_states().mutable_segment(i);
  AssignWithRoom(view.entered, entered);
  AssignWithRoom(view.left, dropped);
  size_t state_size = state.size();
  if (some_hidden) {
    // The filter hid some candidates: remove them from visible. A hidden
    // one it had not seen does not enter; one it saw leaves.
    const std::span<const uint64_t> ids = entities_.ids();
    const std::span<const uint8_t> keep = batch_.keep_bits(i);
    std::vector<uint64_t>& visible = view.visible;
    const size_t n = visible.size();
    size_t out = 0, kept_from = 0;  // visible[kept_from, j) moves to out
    for (size_t j = 0; j < n; ++j) {
      if (keep[j / 8] == 0xff) {
        j |= 7;  // the whole byte is kept
        continue;
      }
      if ((keep[j / 8] >> (j % 8)) & 1) continue;
      const uint64_t id = visible[j];
      std::copy(visible.begin() + kept_from, visible.begin() + j,
                visible.begin() + out);
      out += j - kept_from;
      kept_from = j + 1;
      auto e = std::lower_bound(view.entered.begin(), view.entered.end(), id);
      if (e != view.entered.end() && *e == id) {
        view.entered.erase(e);
      } else {
        view.left.push_back(id);
      }
      const size_t rank = static_cast<size_t>(
          std::lower_bound(ids.begin(), ids.end(), id) - ids.begin());
      for (size_t k = 0; k < state.size(); k += 2) {
        if (state[k] == rank / 64)
          state[k + 1] &= ~(uint64_t{1} << (rank % 64));
      }
    }
    std::copy(visible.begin() + kept_from, visible.end(),
              visible.begin() + out);
    visible.resize(out + (n - kept_from));
    // Drop the words that became empty.
    state_size = 0;
    for (size_t k = 0; k < state.size(); k += 2) {
      if (state[k + 1] == 0) continue;
      state[state_size++] = state[k];
      state[state_size++] = state[k + 1];
    }
  }
  if (!std::is_sorted(view.left.begin(), view.left.end())) {
    std::sort(view.left.begin(), view.left.end());
  }
  return state_size;
}

}  // namespace tessera::interest::internal
