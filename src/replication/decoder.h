// The reference client decoder of `entities` payloads (docs/protocol.md,
// "Interest and replication"): every byte is checked; used by tests, the
// fuzzers and the bench, and the model for other clients' decoders.
#ifndef TESSERA_REPLICATION_DECODER_H_
#define TESSERA_REPLICATION_DECODER_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace tessera::replication {

struct DecodedComponent {
  uint8_t id = 0;
  std::string bytes;
};

struct DecodedEntity {
  uint64_t id = 0;
  int64_t q[3] = {0, 0, 0};
  std::vector<DecodedComponent> components;  // ascending id
};

class Decoder {
 public:
  // Applies one payload. Returns
  //  - OK: applied; entered() and left() list what it spawned and removed;
  //  - kFailedPrecondition ("waiting for a baseline: ..."): ignored, as
  //    every payload before the first BASELINE is; nothing changed;
  //  - kInvalidArgument ("malformed entities payload: ..."): refused; the
  //    decoder drops everything and waits for a baseline again (a client
  //    should close and reconnect).
  Status Apply(std::string_view payload);
  // True when `s` is Apply's "ignored before the first baseline".
  static bool Ignored(const Status& s) {
    return s.code() == StatusCode::kFailedPrecondition;
  }

  // Drops everything; the next payload applied must be a BASELINE.
  void Reset();

  bool has_baseline() const { return has_baseline_; }
  double precision() const { return precision_; }
  bool y_up() const { return y_up_; }
  // Held entities, ascending ids.
  std::span<const DecodedEntity> entities() const { return entities_; }
  const DecodedEntity* Find(uint64_t id) const;
  // World coordinate `axis` (0 x, 1 y, 2 z): q * precision.
  double Coordinate(const DecodedEntity& e, int axis) const {
    return static_cast<double>(e.q[axis]) * precision_;
  }
  // Of the last Apply, ascending.
  const std::vector<uint64_t>& entered() const { return entered_; }
  const std::vector<uint64_t>& left() const { return left_; }

 private:
  Status ApplyValid(std::string_view payload);

  bool has_baseline_ = false;
  double precision_ = 0;
  bool y_up_ = false;
  std::vector<DecodedEntity> entities_;
  std::vector<uint64_t> entered_;
  std::vector<uint64_t> left_;
  // Scratch.
  std::vector<DecodedEntity> spawned_;
  std::vector<DecodedEntity> merged_;
  std::vector<uint8_t> despawned_;
  std::vector<uint32_t> comp_targets_;
};

}  // namespace tessera::replication

#endif  // TESSERA_REPLICATION_DECODER_H_
