// cluster::MachineStore on PostgreSQL (cluster/machine_store.h): the
// cluster_machines table, one row per machine id, created (idempotently,
// under the schema advisory lock) at Open.
//
// Every time is the database's: clock_timestamp() in unix ms, compared in
// SQL, so no machine's own clock enters a liveness decision. Join is one
// upsert whose WHERE takes the row only from a holder that left, has been
// silent for the dead time or is the caller's own previous epoch; a
// heartbeat is one UPDATE guarded by (id, epoch, not left, not yet dead).
//
// The store has a connection of its own (not the shard store's, whose
// saves may be slow), and each statement waits at most call_timeout_ms for
// its answer (a hanging database or proxy fails the call with
// kDeadlineExceeded instead of holding the heartbeat thread); connecting
// is bounded by the URL's connect_timeout, set to 2 s unless given.
//
// Threading: one connection behind `mu_`; any thread.
#ifndef TESSERA_STORE_POSTGRES_PG_MACHINE_STORE_H_
#define TESSERA_STORE_POSTGRES_PG_MACHINE_STORE_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/machine_store.h"
#include "common/status.h"
#include "common/thread_annotations.h"
#include "store/postgres/pg_conn.h"

namespace tessera::store::pg {

struct PgMachineStoreOptions {
  int64_t dead_after_ms = 10'000;
  int64_t call_timeout_ms = 3'000;
};

// The SQL condition "the machine $N (text) holds epoch $N+1 (bigint): its
// row is not left and was heard from within $N+2 ms (bigint) by the
// database's clock", reading the row FOR SHARE so that a takeover of it
// waits for the statement: the guard of every write a machine makes under
// its epoch (placements here, saves in pg_store.cc).
std::string HoldsEpochSql(int first_param);

class PgMachineStore final : public cluster::MachineStore {
 public:
  // Connects to `url` and creates the table if missing. Errors: as
  // PgConn::Connect; kFailedPrecondition for a newer version of the table.
  static Result<std::unique_ptr<PgMachineStore>> Open(
      const std::string& url, PgMachineStoreOptions options = {});

  Result<cluster::JoinAnswer> Join(const cluster::MachineInfo& self,
                                   uint64_t epoch, uint64_t replaces) override;
  Result<bool> Heartbeat(std::string_view id, uint64_t epoch) override;
  Status Leave(std::string_view id, uint64_t epoch) override;
  Result<std::vector<cluster::MachineRecord>> List() override;
  Result<cluster::Placement> Place(std::string_view shard_id,
                                   std::string_view machine,
                                   uint64_t epoch) override;
  Status Unplace(std::string_view shard_id, std::string_view machine,
                 uint64_t epoch) override;
  Result<std::vector<cluster::Placement>> ListPlacements() override;
  Result<std::vector<cluster::Placement>> ListOrphanedPlacements() override;

 private:
  PgMachineStore(std::unique_ptr<PgConn> conn, PgMachineStoreOptions options)
      : options_(options), conn_(std::move(conn)) {}

  const PgMachineStoreOptions options_;
  std::mutex mu_;
  std::unique_ptr<PgConn> conn_ GUARDED_BY(mu_);
};

}  // namespace tessera::store::pg

#endif  // TESSERA_STORE_POSTGRES_PG_MACHINE_STORE_H_
