// PgStore: Open, saved states and the shard directory (the transfer
// journal is in pg_store_journal.cc).
#include "store/postgres/pg_store.h"

#include <utility>

#include "store/postgres/pg_machine_store.h"
#include "store/postgres/pg_store_schema.h"

namespace tessera::store {

using pg::PgParam;
using pg::PgResult;

namespace {

std::string Quoted(std::string_view id) { return "'" + std::string(id) + "'"; }

std::string What(std::string_view action, std::string_view id) {
  return "postgres store: " + std::string(action) + " " + Quoted(id);
}

// Longer than any statement of the directory, saves and journal takes on a
// healthy database (a journal step may wait for another's table lock).
constexpr int64_t kStatementBoundMs = 10'000;

}  // namespace

Result<std::unique_ptr<PgStore>> PgStore::Open(const std::string& url,
                                               Options options) {
  if (options.wall_clock == nullptr) options.wall_clock = RealWallClock::Get();
  // Bounded (connect and each statement's answer), so that a database that
  // hangs cannot hold a shard's worker in a save for ever: after a fence
  // (docs/cluster.md) the worker comes back and stops the shard.
  Result<std::unique_ptr<pg::PgConn>> conn =
      pg::PgConn::Connect(pg::WithConnectTimeout(url));
  if (!conn.ok()) return conn.status();
  TESSERA_RETURN_IF_ERROR(pg::EnsureStoreSchema(**conn));
  (*conn)->set_call_timeout_ms(kStatementBoundMs);
  return std::unique_ptr<PgStore>(
      new PgStore(std::move(conn).value(), options));
}

Result<std::unique_ptr<Store>> OpenPgStore(const std::string& url,
                                           PgStore::Options options) {
  Result<std::unique_ptr<PgStore>> store = PgStore::Open(url, options);
  if (!store.ok()) return store.status();
  return std::unique_ptr<Store>(std::move(store).value());
}

PgStore::PgStore(std::unique_ptr<pg::PgConn> conn, Options options)
    : options_(options), conn_(std::move(conn)) {}

PgStore::~PgStore() = default;

Status PgStore::Save(std::string_view shard_id, std::string_view bytes) {
  const int64_t now = NowMs();
  std::lock_guard<std::mutex> lock(mu_);
  return SaveLocked(shard_id, bytes, now);
}

void PgStore::GuardSaves(const cluster::EpochSource* source,
                         int64_t dead_after_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  guard_ = source;
  dead_after_ms_ = dead_after_ms;
}

Status PgStore::SaveLocked(std::string_view shard_id, std::string_view bytes,
                           int64_t now_ms) {
  if (guard_ != nullptr) {
    const std::string machine(guard_->machine_id());
    const uint64_t epoch = guard_->current_epoch();
    const std::string refused =
        "save of shard refused: machine \"" + machine + "\" does not hold ";
    if (epoch == 0) {
      return Status(StatusCode::kFailedPrecondition,
                    refused + "an epoch (fenced, or not joined)");
    }
    static const std::string kGuardedSave =
        "INSERT INTO saves(shard_id, state, saved_ms) "
        "SELECT $1::bytea, $2::bytea, $3::bigint WHERE " +
        pg::HoldsEpochSql(4) +
        " ON CONFLICT (shard_id) DO UPDATE SET state = EXCLUDED.state, "
        "saved_ms = EXCLUDED.saved_ms";
    Result<PgResult> saved = conn_->Exec(
        kGuardedSave,
        {PgParam::Bytes(shard_id), PgParam::Bytes(bytes), PgParam::Int(now_ms),
         PgParam::Text(machine), PgParam::Int(static_cast<int64_t>(epoch)),
         PgParam::Int(dead_after_ms_)},
        What("save shard", shard_id));
    if (!saved.ok()) return saved.status();
    if (saved->affected() != 1) {
      return Status(StatusCode::kFailedPrecondition,
                    refused + "epoch " + std::to_string(epoch) +
                        " any more (it lapsed or was taken over)");
    }
    return Status::Ok();
  }
  return conn_->Run(
      "INSERT INTO saves(shard_id, state, saved_ms) VALUES($1, $2, $3) "
      "ON CONFLICT (shard_id) DO UPDATE SET state = EXCLUDED.state, "
      "saved_ms = EXCLUDED.saved_ms",
      {PgParam::Bytes(shard_id), PgParam::Bytes(bytes), PgParam::Int(now_ms)},
      What("save shard", shard_id));
}

Result<std::optional<std::string>> PgStore::Load(std::string_view shard_id) {
  std::lock_guard<std::mutex> lock(mu_);
  Result<PgResult> row =
      conn_->Exec("SELECT state FROM saves WHERE shard_id = $1",
                  {PgParam::Bytes(shard_id)}, What("load shard", shard_id));
  if (!row.ok()) return row.status();
  if (row->rows() == 0) return std::optional<std::string>();
  Result<std::string> state = row->Bytes(0, 0);
  if (!state.ok()) return state.status();
  return std::optional<std::string>(std::move(state).value());
}

Status PgStore::Forget(std::string_view shard_id) {
  std::lock_guard<std::mutex> lock(mu_);
  return conn_->Run("DELETE FROM saves WHERE shard_id = $1",
                    {PgParam::Bytes(shard_id)}, What("forget shard", shard_id));
}

Status PgStore::PutShard(const ShardRecord& record) {
  const int64_t now = NowMs();
  std::lock_guard<std::mutex> lock(mu_);
  return conn_->Run(
      "INSERT INTO shards(id, kind, params, status, error, created_ms, "
      "updated_ms) VALUES($1, $2, $3, $4, $5, $6, $7) "
      "ON CONFLICT (id) DO UPDATE SET kind = EXCLUDED.kind, "
      "params = EXCLUDED.params, status = EXCLUDED.status, "
      "error = EXCLUDED.error, created_ms = EXCLUDED.created_ms, "
      "updated_ms = EXCLUDED.updated_ms",
      {PgParam::Bytes(record.id), PgParam::Bytes(record.kind),
       PgParam::Bytes(record.params), PgParam::Bytes(record.status),
       PgParam::Bytes(record.error),
       PgParam::Int(record.created_unix_ms != 0 ? record.created_unix_ms : now),
       PgParam::Int(record.updated_unix_ms != 0 ? record.updated_unix_ms
                                                : now)},
      What("put shard", record.id));
}

Status PgStore::SetShardStatus(std::string_view id, std::string_view status,
                               std::string_view error) {
  const int64_t now = NowMs();
  std::lock_guard<std::mutex> lock(mu_);
  Result<PgResult> done = conn_->Exec(
      "UPDATE shards SET status = $2, error = $3, updated_ms = $4 "
      "WHERE id = $1",
      {PgParam::Bytes(id), PgParam::Bytes(status), PgParam::Bytes(error),
       PgParam::Int(now)},
      What("set status of shard", id));
  if (!done.ok()) return done.status();
  if (done->affected() == 0) {
    return NotFound("no shard " + Quoted(id) + " in the directory");
  }
  return Status::Ok();
}

Status PgStore::DeleteShard(std::string_view id) {
  const std::string what = What("delete shard", id);
  std::lock_guard<std::mutex> lock(mu_);
  return conn_->InTransaction("BEGIN", what, [&]() -> Status {
    TESSERA_RETURN_IF_ERROR(conn_->Run("DELETE FROM shards WHERE id = $1",
                                       {PgParam::Bytes(id)}, what));
    return conn_->Run("DELETE FROM saves WHERE shard_id = $1",
                      {PgParam::Bytes(id)}, what);
  });
}

Result<std::vector<ShardRecord>> PgStore::ListShards() {
  const char* what = "postgres store: list shards";
  std::lock_guard<std::mutex> lock(mu_);
  Result<PgResult> rows = conn_->Exec(
      "SELECT id, kind, params, status, error, created_ms, updated_ms "
      "FROM shards ORDER BY created_ms, id",
      {}, what);
  if (!rows.ok()) return rows.status();
  std::vector<ShardRecord> records;
  records.reserve(static_cast<size_t>(rows->rows()));
  for (int i = 0; i < rows->rows(); ++i) {
    ShardRecord r;
    std::string* bytes[] = {&r.id, &r.kind, &r.params, &r.status, &r.error};
    for (int col = 0; col < 5; ++col) {
      Result<std::string> value = rows->Bytes(i, col);
      if (!value.ok()) return value.status();
      *bytes[col] = std::move(value).value();
    }
    Result<int64_t> created = rows->Int64(i, 5);
    if (!created.ok()) return created.status();
    Result<int64_t> updated = rows->Int64(i, 6);
    if (!updated.ok()) return updated.status();
    r.created_unix_ms = *created;
    r.updated_unix_ms = *updated;
    records.push_back(std::move(r));
  }
  return records;
}

}  // namespace tessera::store
