// What a store asks before each write it guards (docs/cluster.md): the
// machine this process is and the epoch it holds right now, 0 when it holds
// none (not joined yet, or fenced). A write is refused unless the database
// still has that epoch on that machine's row, not left and heard from
// within the dead time; so a machine that was cut off can never overwrite
// what the machine that replaced it wrote. Membership implements it.
//
// Thread-safety: both methods from any thread, without blocking.
#ifndef TESSERA_CLUSTER_EPOCH_SOURCE_H_
#define TESSERA_CLUSTER_EPOCH_SOURCE_H_

#include <cstdint>
#include <string_view>

namespace tessera::cluster {

class EpochSource {
 public:
  virtual ~EpochSource() = default;
  virtual std::string_view machine_id() const = 0;
  virtual uint64_t current_epoch() const = 0;
};

}  // namespace tessera::cluster

#endif  // TESSERA_CLUSTER_EPOCH_SOURCE_H_
