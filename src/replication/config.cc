#include "replication/config.h"

#include <cmath>

#include "replication/bit_io.h"

namespace tessera::replication {

Result<Config> ParseConfig(std::string_view bytes) {
  constexpr size_t kSize = 8 + 4 + 1;
  if (bytes.size() != kSize) {
    return InvalidArgument(
        "replication config must be 13 bytes (f64 precision, u32 "
        "max_bytes_per_tick, u8 flags), got " +
        std::to_string(bytes.size()));
  }
  ByteReader r(bytes);
  Config c;
  uint8_t flags = 0;
  r.F64(&c.precision);
  r.U32(&c.max_bytes_per_tick);
  r.U8(&flags);
  if (!std::isfinite(c.precision) || !(c.precision > 0)) {
    return InvalidArgument(
        "replication config: precision must be a finite number > 0, got " +
        std::to_string(c.precision));
  }
  if ((flags & ~1u) != 0) {
    return InvalidArgument("replication config: unknown flag bits " +
                           std::to_string(flags & ~1u) +
                           " (only bit 0, y up, is defined)");
  }
  c.y_up = (flags & 1) != 0;
  return c;
}

std::string EncodeConfig(const Config& config) {
  std::string out;
  PutF64(out, config.precision);
  PutU32(out, config.max_bytes_per_tick);
  out.push_back(config.y_up ? 1 : 0);
  return out;
}

}  // namespace tessera::replication
