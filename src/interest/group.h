// Shared snapshots: subscribers whose visible sets are equal can share one
// snapshot.
#ifndef TESSERA_INTEREST_GROUP_H_
#define TESSERA_INTEREST_GROUP_H_

#include <cstddef>
#include <span>
#include <vector>

#include "interest/interest_types.h"

namespace tessera::interest {

// Groups the indices of `views` whose `visible` lists are equal: every index
// is in exactly one group, each group lists its indices ascending and the
// groups are ordered by their first index. O(total ids + n log n): each
// set is hashed once and only sets with equal hashes are compared.
std::vector<std::vector<size_t>> GroupByVisible(std::span<const View> views);

}  // namespace tessera::interest

#endif  // TESSERA_INTEREST_GROUP_H_
