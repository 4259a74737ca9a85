#include "interest/group.h"

#include <algorithm>
#include <cstdint>
#include <utility>

namespace tessera::interest {
namespace {

uint64_t HashIds(const std::vector<uint64_t>& ids) {
  uint64_t h = 0x9e3779b97f4a7c15ull ^ ids.size();
  for (uint64_t id : ids) {
    h ^= id + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdull;
  }
  return h ^ (h >> 33);
}

}  // namespace

std::vector<std::vector<size_t>> GroupByVisible(std::span<const View> views) {
  std::vector<std::pair<uint64_t, size_t>> by_hash(views.size());
  for (size_t i = 0; i < views.size(); ++i) {
    by_hash[i] = {HashIds(views[i].visible), i};
  }
  std::sort(by_hash.begin(), by_hash.end());

  std::vector<std::vector<size_t>> groups;
  for (size_t run = 0; run < by_hash.size();) {
    size_t run_end = run + 1;
    while (run_end < by_hash.size() &&
           by_hash[run_end].first == by_hash[run].first) {
      ++run_end;
    }
    // Within equal hashes (almost always one set), split by content; indices
    // come ascending, so each group does too.
    const size_t first_group = groups.size();
    for (size_t k = run; k < run_end; ++k) {
      const size_t i = by_hash[k].second;
      size_t g = first_group;
      while (g < groups.size() &&
             views[groups[g].front()].visible != views[i].visible) {
        ++g;
      }
      if (g == groups.size()) groups.emplace_back();
      groups[g].push_back(i);
    }
    run = run_end;
  }
  std::sort(groups.begin(), groups.end(),
            [](const std::vector<size_t>& a, const std::vector<size_t>& b) {
              return a.front() < b.front();
            });
  return groups;
}

}  // namespace tessera::interest
