#include "store/postgres/pg_machine_store.h"

#include <utility>

#include "store/postgres/pg_realm_schema.h"

namespace tessera::store::pg {
namespace {

constexpr int64_t kMachineSchemaVersion = 1;

constexpr const char* kCreateTables = R"sql(
  CREATE TABLE IF NOT EXISTS tessera_schema(
    component TEXT PRIMARY KEY NOT NULL,
    version BIGINT NOT NULL);
  CREATE TABLE IF NOT EXISTS cluster_machines(
    id TEXT PRIMARY KEY NOT NULL,
    epoch BIGINT NOT NULL,
    address TEXT NOT NULL,
    capacity BIGINT NOT NULL,
    started_ms BIGINT NOT NULL,
    heartbeat_ms BIGINT NOT NULL,
    left_ms BIGINT);
  CREATE TABLE IF NOT EXISTS shard_placements(
    shard_id BYTEA PRIMARY KEY NOT NULL,
    machine_id TEXT NOT NULL,
    epoch BIGINT NOT NULL,
    placed_ms BIGINT NOT NULL);
  CREATE INDEX IF NOT EXISTS shard_placements_by_machine
    ON shard_placements(machine_id);
)sql";

// The database's clock in unix ms.
#define TESSERA_DB_NOW_MS \
  "(floor(extract(epoch from clock_timestamp()) * 1000))::bigint"

constexpr const char* kJoin =
    "INSERT INTO cluster_machines AS m (id, epoch, address, capacity, "
    "started_ms, heartbeat_ms, left_ms) VALUES ($1, $2, $3, "
    "$4, " TESSERA_DB_NOW_MS ", " TESSERA_DB_NOW_MS
    ", NULL) ON CONFLICT (id) DO UPDATE SET epoch = excluded.epoch, "
    "address = excluded.address, capacity = excluded.capacity, "
    "started_ms = excluded.started_ms, heartbeat_ms = excluded.heartbeat_ms, "
    "left_ms = NULL WHERE m.left_ms IS NOT NULL OR m.heartbeat_ms <= "
    "excluded.heartbeat_ms - $5 OR m.epoch = $6 OR m.epoch = $2 "
    "RETURNING m.epoch";

constexpr const char* kHolder =
    "SELECT epoch, GREATEST(0, heartbeat_ms + $2 - " TESSERA_DB_NOW_MS
    ") FROM cluster_machines WHERE id = $1";

constexpr const char* kHeartbeat =
    "UPDATE cluster_machines SET heartbeat_ms = " TESSERA_DB_NOW_MS
    " WHERE id = $1 AND epoch = $2 AND left_ms IS NULL AND heartbeat_ms "
    "> " TESSERA_DB_NOW_MS " - $3";

constexpr const char* kLeave =
    "UPDATE cluster_machines SET left_ms = " TESSERA_DB_NOW_MS
    " WHERE id = $1 AND epoch = $2 AND left_ms IS NULL";

constexpr const char* kList =
    "SELECT id, epoch, address, capacity, started_ms, heartbeat_ms, "
    "COALESCE(left_ms, 0), " TESSERA_DB_NOW_MS
    " - heartbeat_ms, left_ms IS NULL FROM cluster_machines ORDER BY id";

// A live row of the placement's machine `p` (any epoch), silent for less
// than the dead time $N: TESSERA_LIVE_HOLDER("$4").
#define TESSERA_LIVE_HOLDER(dead)                                            \
  "EXISTS (SELECT 1 FROM cluster_machines m WHERE m.id = p.machine_id "      \
  "AND m.left_ms IS NULL AND m.heartbeat_ms > " TESSERA_DB_NOW_MS " - " dead \
  ")"

constexpr const char* kPlacementOf =
    "SELECT machine_id, epoch FROM shard_placements WHERE shard_id = $1";

constexpr const char* kUnplace =
    "DELETE FROM shard_placements WHERE shard_id = $1 AND machine_id = $2 "
    "AND epoch = $3";

constexpr const char* kPlacements =
    "SELECT shard_id, machine_id, epoch FROM shard_placements ORDER BY "
    "shard_id";

constexpr const char* kOrphanedPlacements =
    "SELECT shard_id, machine_id, epoch FROM shard_placements p WHERE "
    "NOT " TESSERA_LIVE_HOLDER("$1") " ORDER BY shard_id";

// Takes the placement for (machine $2, epoch $3) when that epoch holds the
// machine's live row (HoldsEpochSql, read FOR SHARE: a takeover of the row
// waits), and the shard is unplaced, on this machine, or on a machine whose
// row is not live (left, silent for the dead time $4, or gone): a live
// machine's placements under an older epoch of its own (a restart, a fence)
// are only taken back by itself.
const std::string& PlaceSql() {
  static const std::string sql =
      "INSERT INTO shard_placements AS p (shard_id, machine_id, epoch, "
      "placed_ms) SELECT $1::bytea, $2::text, $3::bigint, " TESSERA_DB_NOW_MS
      " WHERE " +
      HoldsEpochSql(2) +
      " ON CONFLICT (shard_id) DO UPDATE SET machine_id = "
      "excluded.machine_id, epoch = excluded.epoch, placed_ms = "
      "excluded.placed_ms WHERE p.machine_id = excluded.machine_id OR "
      "NOT " TESSERA_LIVE_HOLDER("$4") " RETURNING machine_id, epoch";
  return sql;
}

#undef TESSERA_LIVE_HOLDER

int64_t AsBigint(uint64_t epoch) { return static_cast<int64_t>(epoch); }

// A placement row (shard_id, machine_id, epoch) of `rows` from column `col`
// on (the shard id when `with_shard`, else machine_id first).
Result<cluster::Placement> PlacementAt(const PgResult& rows, int row,
                                       bool with_shard) {
  cluster::Placement placement;
  int col = 0;
  if (with_shard) {
    Result<std::string> id = rows.Bytes(row, col++);
    if (!id.ok()) return id.status();
    placement.shard_id = std::move(*id);
  }
  placement.machine_id = std::string(rows.Text(row, col++));
  Result<int64_t> epoch = rows.Int64(row, col);
  if (!epoch.ok()) return epoch.status();
  placement.epoch = static_cast<uint64_t>(*epoch);
  return placement;
}

Result<std::vector<cluster::Placement>> Placements(const PgResult& rows) {
  std::vector<cluster::Placement> out;
  out.reserve(static_cast<size_t>(rows.rows()));
  for (int r = 0; r < rows.rows(); ++r) {
    Result<cluster::Placement> placement = PlacementAt(rows, r, true);
    if (!placement.ok()) return placement.status();
    out.push_back(std::move(*placement));
  }
  return out;
}

Status CheckEpoch(uint64_t epoch) {
  if (epoch == 0 || epoch > static_cast<uint64_t>(INT64_MAX)) {
    return InvalidArgument("cluster: an epoch must be in 1..2^63-1");
  }
  return Status::Ok();
}

}  // namespace

std::string HoldsEpochSql(int first_param) {
  const auto param = [&](int i) {
    return "$" + std::to_string(first_param + i);
  };
  return "EXISTS (SELECT 1 FROM cluster_machines WHERE id = " + param(0) +
         "::text AND epoch = " + param(1) +
         "::bigint AND left_ms IS NULL AND heartbeat_ms > " TESSERA_DB_NOW_MS
         " - " +
         param(2) + "::bigint FOR SHARE)";
}

Result<std::unique_ptr<PgMachineStore>> PgMachineStore::Open(
    const std::string& url, PgMachineStoreOptions options) {
  Result<std::unique_ptr<PgConn>> conn =
      PgConn::Connect(WithConnectTimeout(url));
  if (!conn.ok()) return conn.status();
  TESSERA_RETURN_IF_ERROR(EnsureComponentSchema(
      **conn, "cluster", "cluster", kMachineSchemaVersion, kCreateTables));
  (*conn)->set_call_timeout_ms(options.call_timeout_ms);
  return std::unique_ptr<PgMachineStore>(
      new PgMachineStore(std::move(conn).value(), options));
}

Result<cluster::JoinAnswer> PgMachineStore::Join(
    const cluster::MachineInfo& self, uint64_t epoch, uint64_t replaces) {
  if (self.id.empty()) return InvalidArgument("cluster: an empty machine id");
  TESSERA_RETURN_IF_ERROR(CheckEpoch(epoch));
  std::lock_guard<std::mutex> lock(mu_);
  Result<PgResult> joined =
      conn_->Exec(kJoin,
                  {PgParam::Text(self.id), PgParam::Int(AsBigint(epoch)),
                   PgParam::Text(self.address), PgParam::Int(self.capacity),
                   PgParam::Int(options_.dead_after_ms),
                   PgParam::Int(AsBigint(replaces == 0 ? epoch : replaces))},
                  "postgres: join the cluster");
  if (!joined.ok()) return joined.status();
  cluster::JoinAnswer answer;
  if (joined->rows() == 1) {
    answer.joined = true;
    return answer;
  }
  Result<PgResult> holder = conn_->Exec(
      kHolder, {PgParam::Text(self.id), PgParam::Int(options_.dead_after_ms)},
      "postgres: read the machine's holder");
  if (!holder.ok()) return holder.status();
  if (holder->rows() == 1) {
    Result<int64_t> held_by = holder->Int64(0, 0);
    Result<int64_t> wait = holder->Int64(0, 1);
    if (!held_by.ok()) return held_by.status();
    if (!wait.ok()) return wait.status();
    answer.held_by = static_cast<uint64_t>(*held_by);
    answer.wait_ms = *wait;
  }
  return answer;
}

Result<bool> PgMachineStore::Heartbeat(std::string_view id, uint64_t epoch) {
  TESSERA_RETURN_IF_ERROR(CheckEpoch(epoch));
  std::lock_guard<std::mutex> lock(mu_);
  Result<PgResult> beat =
      conn_->Exec(kHeartbeat,
                  {PgParam::Text(id), PgParam::Int(AsBigint(epoch)),
                   PgParam::Int(options_.dead_after_ms)},
                  "postgres: heartbeat");
  if (!beat.ok()) return beat.status();
  return beat->affected() == 1;
}

Status PgMachineStore::Leave(std::string_view id, uint64_t epoch) {
  TESSERA_RETURN_IF_ERROR(CheckEpoch(epoch));
  std::lock_guard<std::mutex> lock(mu_);
  return conn_->Run(kLeave, {PgParam::Text(id), PgParam::Int(AsBigint(epoch))},
                    "postgres: leave the cluster");
}

Result<std::vector<cluster::MachineRecord>> PgMachineStore::List() {
  std::lock_guard<std::mutex> lock(mu_);
  Result<PgResult> rows = conn_->Exec(kList, {}, "postgres: list machines");
  if (!rows.ok()) return rows.status();
  std::vector<cluster::MachineRecord> machines;
  machines.reserve(static_cast<size_t>(rows->rows()));
  for (int r = 0; r < rows->rows(); ++r) {
    cluster::MachineRecord m;
    m.info.id = std::string(rows->Text(r, 0));
    m.info.address = std::string(rows->Text(r, 2));
    int64_t epoch = 0;
    const std::pair<int, int64_t*> ints[] = {{1, &epoch},
                                             {3, &m.info.capacity},
                                             {4, &m.started_unix_ms},
                                             {5, &m.heartbeat_unix_ms},
                                             {6, &m.left_unix_ms},
                                             {7, &m.silent_ms}};
    for (const auto& [col, into] : ints) {
      Result<int64_t> v = rows->Int64(r, col);
      if (!v.ok()) return v.status();
      *into = *v;
    }
    m.epoch = static_cast<uint64_t>(epoch);
    m.live = rows->Text(r, 8) == "t" && m.silent_ms < options_.dead_after_ms;
    machines.push_back(std::move(m));
  }
  return machines;
}

Result<cluster::Placement> PgMachineStore::Place(std::string_view shard_id,
                                                 std::string_view machine,
                                                 uint64_t epoch) {
  TESSERA_RETURN_IF_ERROR(CheckEpoch(epoch));
  std::lock_guard<std::mutex> lock(mu_);
  Result<PgResult> placed = conn_->Exec(
      PlaceSql(),
      {PgParam::Bytes(shard_id), PgParam::Text(machine),
       PgParam::Int(AsBigint(epoch)), PgParam::Int(options_.dead_after_ms)},
      "postgres: place a shard");
  if (!placed.ok()) return placed.status();
  if (placed->rows() == 0) {
    // Not taken: who holds it (or nobody, when this epoch is not live).
    placed = conn_->Exec(kPlacementOf, {PgParam::Bytes(shard_id)},
                         "postgres: read a shard's placement");
    if (!placed.ok()) return placed.status();
  }
  cluster::Placement out;
  if (placed->rows() == 1) {
    Result<cluster::Placement> held = PlacementAt(*placed, 0, false);
    if (!held.ok()) return held.status();
    out = std::move(*held);
  }
  out.shard_id = std::string(shard_id);
  return out;
}

Status PgMachineStore::Unplace(std::string_view shard_id,
                               std::string_view machine, uint64_t epoch) {
  TESSERA_RETURN_IF_ERROR(CheckEpoch(epoch));
  std::lock_guard<std::mutex> lock(mu_);
  return conn_->Run(kUnplace,
                    {PgParam::Bytes(shard_id), PgParam::Text(machine),
                     PgParam::Int(AsBigint(epoch))},
                    "postgres: unplace a shard");
}

Result<std::vector<cluster::Placement>> PgMachineStore::ListPlacements() {
  std::lock_guard<std::mutex> lock(mu_);
  Result<PgResult> rows =
      conn_->Exec(kPlacements, {}, "postgres: list placements");
  if (!rows.ok()) return rows.status();
  return Placements(*rows);
}

Result<std::vector<cluster::Placement>>
PgMachineStore::ListOrphanedPlacements() {
  std::lock_guard<std::mutex> lock(mu_);
  Result<PgResult> rows =
      conn_->Exec(kOrphanedPlacements, {PgParam::Int(options_.dead_after_ms)},
                  "postgres: list orphaned placements");
  if (!rows.ok()) return rows.status();
  return Placements(*rows);
}

#undef TESSERA_DB_NOW_MS

}  // namespace tessera::store::pg
