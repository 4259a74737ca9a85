#include "compute/flow_id.h"

#include <cstdint>
#include <mutex>
#include <random>

namespace tessera::compute {

std::string NewFlowId() {
  static std::mutex mu;
  static std::mt19937_64 gen([] {
    std::random_device rd;
    return (static_cast<uint64_t>(rd()) << 32) ^ rd();
  }());
  uint64_t v;
  {
    std::lock_guard<std::mutex> lock(mu);
    v = gen();
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i) {
    out[static_cast<size_t>(i)] = kHex[v & 15];
    v >>= 4;
  }
  return out;
}

bool IsValidFlowId(std::string_view id) {
  if (id.empty() || id.size() > 64) return false;
  for (char c : id) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

}  // namespace tessera::compute
