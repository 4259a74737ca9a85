// A hash map keyed by std::string that is looked up by std::string_view
// without building a std::string (C++20 heterogeneous lookup): for hot
// lookups of keys that arrive as views.
#ifndef TESSERA_COMMON_STRING_MAP_H_
#define TESSERA_COMMON_STRING_MAP_H_

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace tessera {

struct StringViewHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const {
    return std::hash<std::string_view>()(s);
  }
};

template <typename V>
using StringMap =
    std::unordered_map<std::string, V, StringViewHash, std::equal_to<>>;

}  // namespace tessera

#endif  // TESSERA_COMMON_STRING_MAP_H_
