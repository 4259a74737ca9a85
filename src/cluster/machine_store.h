// The cluster's record of its machines (issue 16, docs/cluster.md): the
// port that the store implements (store/postgres/pg_machine_store.h) and
// Membership (membership.h) drives.
//
// A machine is one tessera process: an id (TESSERA_MACHINE_ID, else
// host:pid), the address other machines reach it at, a capacity in shards,
// and an epoch, a random number it draws at every start and after every
// lapse. Only the process holding the current epoch of an id is that
// machine; every state-changing statement of the cluster is meant to be
// guarded by (id, epoch). Liveness is judged by the database's clock alone
// (heartbeat times are the database's), so machines whose own clocks
// disagree still agree on who is alive.
//
// Thread-safety: every method may be called from any thread.
#ifndef TESSERA_CLUSTER_MACHINE_STORE_H_
#define TESSERA_CLUSTER_MACHINE_STORE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace tessera::cluster {

struct MachineInfo {
  std::string id;
  std::string address;   // host:port, where other machines reach it
  int64_t capacity = 0;  // shards it takes; 0 = unlimited
};

// A machine as the database sees it. Times are the database's, in unix ms.
struct MachineRecord {
  MachineInfo info;
  uint64_t epoch = 0;
  int64_t started_unix_ms = 0;    // when this epoch joined
  int64_t heartbeat_unix_ms = 0;  // the last heartbeat that landed
  int64_t left_unix_ms = 0;       // when it left cleanly; 0 while it has not
  int64_t silent_ms = 0;          // since that heartbeat, by the same clock
  bool live = false;              // has not left, silent < the dead time
};

struct JoinAnswer {
  bool joined = false;
  // When not joined: the epoch that holds the id (a live process that has
  // neither left nor been silent for the dead time) and how long, by the
  // database's clock, until it would count as dead if it stays silent.
  uint64_t held_by = 0;
  int64_t wait_ms = 0;
};

// Which machine runs a shard (and under which of its epochs).
struct Placement {
  std::string shard_id;
  std::string machine_id;
  uint64_t epoch = 0;
};

class MachineStore {
 public:
  virtual ~MachineStore() = default;

  // Takes the id with `epoch` (and the info's address and capacity) when
  // no live process holds it: the id is new, its holder left, it has been
  // silent for the dead time, or it holds `replaces` (this process's own
  // previous epoch, after a lapse; 0 for none). Otherwise changes nothing
  // and says who holds it. Errors: kIo, kDeadlineExceeded (no answer in
  // time), kInvalidArgument (an empty id, epoch 0).
  virtual Result<JoinAnswer> Join(const MachineInfo& self, uint64_t epoch,
                                  uint64_t replaces) = 0;

  // Records a heartbeat of (id, epoch) at the database's time: true when it
  // landed; false when the epoch has lapsed (another epoch holds the id, it
  // left, or it was silent for the dead time, so other machines may already
  // have taken its work): the process must stop its work and join again
  // with a new epoch. Errors: kIo, kDeadlineExceeded.
  virtual Result<bool> Heartbeat(std::string_view id, uint64_t epoch) = 0;

  // Marks (id, epoch) as left (a clean shutdown): other machines need not
  // wait the dead time. A no-op when that epoch no longer holds the id.
  // Errors: kIo, kDeadlineExceeded.
  virtual Status Leave(std::string_view id, uint64_t epoch) = 0;

  // Every machine ever joined (left and dead ones too), by id. Errors: kIo,
  // kDeadlineExceeded.
  virtual Result<std::vector<MachineRecord>> List() = 0;

  // Places `shard_id` on (machine, epoch) when that epoch holds the
  // machine's row (live) and the shard is unplaced, placed on a machine
  // that is no longer live (dead or left), or placed on this same machine
  // (any epoch: its own shards after a restart or a fence). Returns the
  // placement that holds afterwards: this one, or the live machine's that
  // keeps it. Errors: kIo, kDeadlineExceeded.
  virtual Result<Placement> Place(std::string_view shard_id,
                                  std::string_view machine, uint64_t epoch) = 0;
  // Removes the placement if (machine, epoch) holds it (a shard stopped
  // for good). Errors: kIo, kDeadlineExceeded.
  virtual Status Unplace(std::string_view shard_id, std::string_view machine,
                         uint64_t epoch) = 0;
  // Every placement, by shard id. Errors: kIo, kDeadlineExceeded.
  virtual Result<std::vector<Placement>> ListPlacements() = 0;
  // The placements on machines that are no longer live (left, silent for
  // the dead time, or gone), by shard id: the shards to take over. Errors:
  // kIo, kDeadlineExceeded.
  virtual Result<std::vector<Placement>> ListOrphanedPlacements() = 0;
};

}  // namespace tessera::cluster

#endif  // TESSERA_CLUSTER_MACHINE_STORE_H_
