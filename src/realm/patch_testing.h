// Test helpers for realm patches: op builders and a seeded generator of
// random patches (realm_patch_test). Header-only; not part of tessera_realm.
#ifndef TESSERA_REALM_PATCH_TESTING_H_
#define TESSERA_REALM_PATCH_TESTING_H_

#include <cstdint>
#include <iterator>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "realm/patch.h"

namespace tessera::realm::patch_testing {

inline Op SetOp(Path path, Json value) {
  return Op{OpKind::kSet, std::move(path), std::move(value)};
}
inline Op DeleteOp(Path path) {
  return Op{OpKind::kDelete, std::move(path), Json()};
}
inline Op AppendOp(Path path, Json value) {
  return Op{OpKind::kAppend, std::move(path), std::move(value)};
}

inline std::span<const uint8_t> Bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

// "93 02 07" -> the bytes 0x93 0x02 0x07 (lower-case hex; spaces ignored).
inline std::string FromHex(std::string_view hex) {
  std::string out;
  int half = -1;
  for (char c : hex) {
    if (c == ' ') continue;
    const int v = c <= '9' ? c - '0' : c - 'a' + 10;
    if (half < 0) {
      half = v;
    } else {
      out.push_back(static_cast<char>(half * 16 + v));
      half = -1;
    }
  }
  return out;
}

// Random patches within the default DecodeLimits. Keys come mostly from a
// small pool (so later patches reuse interned keys) and sometimes are new.
class PatchGenerator {
 public:
  explicit PatchGenerator(uint32_t seed) : rng_(seed) {}

  Patch Next() {
    Patch patch(Below(8));
    for (Op& op : patch) {
      op.kind = static_cast<OpKind>(Below(3));
      const size_t segments = Below(5);
      for (size_t i = 0; i < segments; ++i) {
        if (Below(3) == 0) {
          op.path.emplace_back(static_cast<int64_t>(Index()));
        } else {
          op.path.emplace_back(Key());
        }
      }
      if (op.kind != OpKind::kDelete) {
        size_t leaves = 0;
        op.value = Value(3, &leaves);
      }
    }
    return patch;
  }

 private:
  size_t Below(size_t n) {
    return std::uniform_int_distribution<size_t>(0, n - 1)(rng_);
  }
  uint64_t Index() {
    switch (Below(4)) {
      case 0:
        return Below(32);
      case 1:
        return Below(70000);
      case 2:
        return uint64_t{1} << Below(63);
      default:
        return 0;
    }
  }
  std::string Key() {
    static const char* const kPool[] = {"players", "pos", "x", "y", "hp",
                                        "name",    "~/",  "",  "é", "items"};
    if (Below(5) != 0) return kPool[Below(std::size(kPool))];
    return "k" + std::to_string(rng_() % 100000);
  }
  Json Value(size_t depth, size_t* leaves) {
    const size_t kind = Below(depth == 0 || *leaves > 40 ? 6 : 8);
    switch (kind) {
      case 0:
        ++*leaves;
        return nullptr;
      case 1:
        ++*leaves;
        return Below(2) == 1;
      case 2: {
        ++*leaves;
        const uint64_t bits = uint64_t{rng_()} << 32 | rng_();
        const auto v = static_cast<int64_t>(bits >> (1 + Below(63)));
        return Below(2) == 1 ? v : -v;
      }
      case 3:
        ++*leaves;
        return std::uniform_real_distribution<double>(-1e9, 1e9)(rng_);
      case 4:
        ++*leaves;
        return std::string(Below(40), static_cast<char>('a' + Below(26)));
      case 5:
        ++*leaves;
        return uint64_t{rng_()} << 32 | rng_();
      case 6: {
        Json list = Json::array();
        const size_t n = Below(5);
        if (n == 0) ++*leaves;
        for (size_t i = 0; i < n; ++i) list.push_back(Value(depth - 1, leaves));
        return list;
      }
      default: {
        Json obj = Json::object();
        const size_t n = Below(5);
        if (n == 0) ++*leaves;
        for (size_t i = 0; i < n; ++i) obj[Key()] = Value(depth - 1, leaves);
        return obj;
      }
    }
  }

  std::mt19937 rng_;
};

}  // namespace tessera::realm::patch_testing

#endif  // TESSERA_REALM_PATCH_TESTING_H_
