// FNV-1a, 64 bits: a fast non-cryptographic hash for identifying content
// (a module build's version, a directory's fingerprint). Not for anything
// an attacker chooses to collide. Header-only, pure.
#ifndef TESSERA_COMMON_FNV_H_
#define TESSERA_COMMON_FNV_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace tessera {

class Fnv1a64 {
 public:
  void Add(std::string_view bytes) {
    for (unsigned char c : bytes) AddByte(c);
  }
  // The 8 bytes of `value`, least significant first.
  void AddU64(uint64_t value) {
    for (int i = 0; i < 8; ++i) AddByte((value >> (8 * i)) & 0xff);
  }
  uint64_t value() const { return hash_; }
  // The low `digits` hex digits of the value (at most 16).
  std::string Hex(int digits = 16) const {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out(digits, '0');
    uint64_t h = hash_;
    for (int i = digits - 1; i >= 0; --i) {
      out[i] = kHex[h & 15];
      h >>= 4;
    }
    return out;
  }

 private:
  void AddByte(unsigned char b) {
    hash_ ^= b;
    hash_ *= 1099511628211ull;
  }
  uint64_t hash_ = 14695981039346656037ull;
};

}  // namespace tessera

#endif  // TESSERA_COMMON_FNV_H_
