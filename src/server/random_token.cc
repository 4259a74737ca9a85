#include "server/random_token.h"

#include <sys/random.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

namespace tessera::server {

Result<std::string> RandomHex(size_t bytes) {
  std::vector<uint8_t> raw(bytes);
  size_t filled = 0;
  while (filled < bytes) {
    ssize_t n = getrandom(raw.data() + filled, bytes - filled, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return IoError(std::string("getrandom: ") + std::strerror(errno));
    }
    filled += static_cast<size_t>(n);
  }
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes * 2);
  for (uint8_t b : raw) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 15]);
  }
  return out;
}

}  // namespace tessera::server
