#include "store/sqlite_store.h"

#include <utility>

#include "store/schema.h"

namespace tessera::store {
namespace {

std::string Quoted(std::string_view id) { return "'" + std::string(id) + "'"; }

}  // namespace

struct SqliteStore::Statements {
  std::unique_ptr<SqliteStatement> put_shard, set_status, delete_shard,
      list_shards;
  std::unique_ptr<SqliteStatement> save, load, forget;
  std::unique_ptr<SqliteStatement> insert_transfer, transfer_step, out_transfer,
      advance_transfer, list_transfers, delete_transfer;
};

Result<std::unique_ptr<SqliteStore>> SqliteStore::Open(const std::string& path,
                                                       Options options) {
  if (path.empty()) {
    return InvalidArgument("sqlite store: the database path is empty");
  }
  if (options.wall_clock == nullptr) options.wall_clock = RealWallClock::Get();
  Result<std::unique_ptr<SqliteDb>> opened = OpenStoreDatabase(
      path, options.busy_timeout_ms, options.wall_clock->UnixNowMs());
  if (!opened.ok()) return opened.status();
  std::unique_ptr<SqliteDb> db = std::move(opened).value();

  auto s = std::make_unique<Statements>();
  SqliteDb& d = *db;
  TESSERA_RETURN_IF_ERROR(
      Prepare(d, s->put_shard,
              "INSERT INTO shards(id, kind, params, status, error, created_ms, "
              "updated_ms) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7) "
              "ON CONFLICT(id) DO UPDATE SET kind = excluded.kind, "
              "params = excluded.params, status = excluded.status, "
              "error = excluded.error, created_ms = excluded.created_ms, "
              "updated_ms = excluded.updated_ms"));
  TESSERA_RETURN_IF_ERROR(Prepare(d, s->set_status,
                                  "UPDATE shards SET status = ?2, error = ?3, "
                                  "updated_ms = ?4 WHERE id = ?1"));
  TESSERA_RETURN_IF_ERROR(
      Prepare(d, s->delete_shard, "DELETE FROM shards WHERE id = ?1"));
  TESSERA_RETURN_IF_ERROR(
      Prepare(d, s->list_shards,
              "SELECT id, kind, params, status, error, created_ms, updated_ms "
              "FROM shards ORDER BY created_ms, id"));
  TESSERA_RETURN_IF_ERROR(
      Prepare(d, s->save,
              "INSERT INTO saves(shard_id, state, saved_ms) VALUES(?1, ?2, ?3) "
              "ON CONFLICT(shard_id) DO UPDATE SET state = excluded.state, "
              "saved_ms = excluded.saved_ms"));
  TESSERA_RETURN_IF_ERROR(
      Prepare(d, s->load, "SELECT state FROM saves WHERE shard_id = ?1"));
  TESSERA_RETURN_IF_ERROR(
      Prepare(d, s->forget, "DELETE FROM saves WHERE shard_id = ?1"));
  TESSERA_RETURN_IF_ERROR(
      Prepare(d, s->insert_transfer,
              "INSERT INTO transfers(id, from_shard, to_shard, subscriber, "
              "claims, state, step, created_ms, updated_ms) "
              "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"));
  TESSERA_RETURN_IF_ERROR(
      Prepare(d, s->transfer_step, "SELECT step FROM transfers WHERE id = ?1"));
  TESSERA_RETURN_IF_ERROR(
      Prepare(d, s->out_transfer,
              "SELECT id FROM transfers WHERE from_shard = ?1 AND "
              "subscriber = ?2 AND step = ?3 LIMIT 1"));
  TESSERA_RETURN_IF_ERROR(
      Prepare(d, s->advance_transfer,
              "UPDATE transfers SET step = ?3, updated_ms = ?4 "
              "WHERE id = ?1 AND step = ?2"));
  TESSERA_RETURN_IF_ERROR(
      Prepare(d, s->list_transfers,
              "SELECT id, from_shard, to_shard, subscriber, claims, state, "
              "step, created_ms, updated_ms FROM transfers "
              "ORDER BY created_ms, rowid"));
  TESSERA_RETURN_IF_ERROR(
      Prepare(d, s->delete_transfer, "DELETE FROM transfers WHERE id = ?1"));

  return std::unique_ptr<SqliteStore>(
      new SqliteStore(std::move(db), std::move(s), std::move(options)));
}

SqliteStore::SqliteStore(std::unique_ptr<SqliteDb> db,
                         std::unique_ptr<Statements> statements,
                         Options options)
    : options_(std::move(options)),
      path_(db->path()),
      db_(std::move(db)),
      stmts_(std::move(statements)) {}

SqliteStore::~SqliteStore() = default;

int64_t SqliteStore::NowUnixMs() const {
  return options_.wall_clock->UnixNowMs();
}

Status SqliteStore::InTransaction(std::string_view what,
                                  const std::function<Status()>& body) {
  return db_->InTransaction(what, body);
}

Status SqliteStore::Save(std::string_view shard_id, std::string_view bytes) {
  const int64_t now = NowUnixMs();
  std::lock_guard<std::mutex> lock(mu_);
  return SaveLocked(shard_id, bytes, now);
}

Status SqliteStore::SaveLocked(std::string_view shard_id,
                               std::string_view bytes, int64_t now_ms) {
  SqliteStatement& st = *stmts_->save;
  ScopedReset reset(st);
  TESSERA_RETURN_IF_ERROR(st.BindText(1, shard_id));
  TESSERA_RETURN_IF_ERROR(st.BindBlob(2, bytes));
  TESSERA_RETURN_IF_ERROR(st.BindInt64(3, now_ms));
  return st.Run("save shard " + Quoted(shard_id));
}

Result<std::optional<std::string>> SqliteStore::Load(
    std::string_view shard_id) {
  std::lock_guard<std::mutex> lock(mu_);
  SqliteStatement& st = *stmts_->load;
  ScopedReset reset(st);
  TESSERA_RETURN_IF_ERROR(st.BindText(1, shard_id));
  Result<bool> row = st.Step("load shard " + Quoted(shard_id));
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<std::string>();
  return std::optional<std::string>(st.ColumnBytes(0));
}

Status SqliteStore::Forget(std::string_view shard_id) {
  std::lock_guard<std::mutex> lock(mu_);
  SqliteStatement& st = *stmts_->forget;
  ScopedReset reset(st);
  TESSERA_RETURN_IF_ERROR(st.BindText(1, shard_id));
  return st.Run("forget shard " + Quoted(shard_id));
}

Status SqliteStore::PutShard(const ShardRecord& record) {
  const int64_t now = NowUnixMs();
  std::lock_guard<std::mutex> lock(mu_);
  SqliteStatement& st = *stmts_->put_shard;
  ScopedReset reset(st);
  TESSERA_RETURN_IF_ERROR(st.BindText(1, record.id));
  TESSERA_RETURN_IF_ERROR(st.BindText(2, record.kind));
  TESSERA_RETURN_IF_ERROR(st.BindBlob(3, record.params));
  TESSERA_RETURN_IF_ERROR(st.BindText(4, record.status));
  TESSERA_RETURN_IF_ERROR(st.BindText(5, record.error));
  TESSERA_RETURN_IF_ERROR(st.BindInt64(
      6, record.created_unix_ms != 0 ? record.created_unix_ms : now));
  TESSERA_RETURN_IF_ERROR(st.BindInt64(
      7, record.updated_unix_ms != 0 ? record.updated_unix_ms : now));
  return st.Run("put shard " + Quoted(record.id));
}

Status SqliteStore::SetShardStatus(std::string_view id, std::string_view status,
                                   std::string_view error) {
  const int64_t now = NowUnixMs();
  std::lock_guard<std::mutex> lock(mu_);
  SqliteStatement& st = *stmts_->set_status;
  ScopedReset reset(st);
  TESSERA_RETURN_IF_ERROR(st.BindText(1, id));
  TESSERA_RETURN_IF_ERROR(st.BindText(2, status));
  TESSERA_RETURN_IF_ERROR(st.BindText(3, error));
  TESSERA_RETURN_IF_ERROR(st.BindInt64(4, now));
  TESSERA_RETURN_IF_ERROR(st.Run("set status of shard " + Quoted(id)));
  if (db_->changes() == 0) {
    return NotFound("no shard " + Quoted(id) + " in the directory");
  }
  return Status::Ok();
}

Status SqliteStore::DeleteShard(std::string_view id) {
  std::lock_guard<std::mutex> lock(mu_);
  return InTransaction("delete shard " + Quoted(id),
                       [&] { return DeleteShardLocked(id); });
}

Status SqliteStore::DeleteShardLocked(std::string_view id) {
  for (SqliteStatement* st :
       {stmts_->delete_shard.get(), stmts_->forget.get()}) {
    ScopedReset reset(*st);
    TESSERA_RETURN_IF_ERROR(st->BindText(1, id));
    TESSERA_RETURN_IF_ERROR(st->Run("delete shard " + Quoted(id)));
  }
  return Status::Ok();
}

Result<std::vector<ShardRecord>> SqliteStore::ListShards() {
  std::lock_guard<std::mutex> lock(mu_);
  SqliteStatement& st = *stmts_->list_shards;
  ScopedReset reset(st);
  std::vector<ShardRecord> records;
  while (true) {
    Result<bool> row = st.Step("list shards");
    if (!row.ok()) return row.status();
    if (!*row) break;
    ShardRecord r;
    r.id = st.ColumnBytes(0);
    r.kind = st.ColumnBytes(1);
    r.params = st.ColumnBytes(2);
    r.status = st.ColumnBytes(3);
    r.error = st.ColumnBytes(4);
    r.created_unix_ms = st.ColumnInt64(5);
    r.updated_unix_ms = st.ColumnInt64(6);
    records.push_back(std::move(r));
  }
  return records;
}

Status SqliteStore::BeginTransfers(
    std::span<const shard::TransferRecord> records,
    std::string_view source_shard,
    std::optional<std::string_view> source_state) {
  const int64_t now = NowUnixMs();
  std::lock_guard<std::mutex> lock(mu_);
  return InTransaction("begin transfers from shard " + Quoted(source_shard),
                       [&]() -> Status {
                         for (const shard::TransferRecord& r : records) {
                           TESSERA_RETURN_IF_ERROR(BeginTransferLocked(r, now));
                         }
                         if (!source_state.has_value()) return Status::Ok();
                         return SaveLocked(source_shard, *source_state, now);
                       });
}

// Checks then inserts one row; the rows inserted before it in the same
// transaction take part in the checks (a duplicate within the batch).
Status SqliteStore::BeginTransferLocked(const shard::TransferRecord& record,
                                        int64_t now_ms) {
  const std::string what = "begin transfer " + Quoted(record.id);
  {
    SqliteStatement& st = *stmts_->transfer_step;
    ScopedReset reset(st);
    TESSERA_RETURN_IF_ERROR(st.BindText(1, record.id));
    Result<bool> row = st.Step(what);
    if (!row.ok()) return row.status();
    if (*row) return shard::TransferIdExists(record.id);
  }
  {
    SqliteStatement& st = *stmts_->out_transfer;
    ScopedReset reset(st);
    TESSERA_RETURN_IF_ERROR(st.BindText(1, record.from_shard));
    TESSERA_RETURN_IF_ERROR(st.BindText(2, record.subscriber));
    TESSERA_RETURN_IF_ERROR(
        st.BindInt64(3, static_cast<int64_t>(shard::TransferStep::kOut)));
    Result<bool> row = st.Step(what);
    if (!row.ok()) return row.status();
    if (*row) return shard::AlreadyMovingOut(record, st.ColumnBytes(0));
  }
  SqliteStatement& st = *stmts_->insert_transfer;
  ScopedReset reset(st);
  TESSERA_RETURN_IF_ERROR(st.BindText(1, record.id));
  TESSERA_RETURN_IF_ERROR(st.BindText(2, record.from_shard));
  TESSERA_RETURN_IF_ERROR(st.BindText(3, record.to_shard));
  TESSERA_RETURN_IF_ERROR(st.BindText(4, record.subscriber));
  TESSERA_RETURN_IF_ERROR(st.BindText(5, record.claims_json));
  TESSERA_RETURN_IF_ERROR(st.BindBlob(6, record.state));
  TESSERA_RETURN_IF_ERROR(
      st.BindInt64(7, static_cast<int64_t>(shard::TransferStep::kOut)));
  TESSERA_RETURN_IF_ERROR(st.BindInt64(
      8, record.created_unix_ms != 0 ? record.created_unix_ms : now_ms));
  TESSERA_RETURN_IF_ERROR(st.BindInt64(
      9, record.updated_unix_ms != 0 ? record.updated_unix_ms : now_ms));
  return st.Run(what);
}

Status SqliteStore::AdvanceTransfers(
    std::span<const shard::TransferAdvance> steps, std::string_view shard_id,
    std::optional<std::string_view> state) {
  for (const shard::TransferAdvance& a : steps) {
    TESSERA_RETURN_IF_ERROR(shard::CheckTransferAdvance(a));
  }
  const int64_t now = NowUnixMs();
  std::lock_guard<std::mutex> lock(mu_);
  return InTransaction(
      "advance transfers of shard " + Quoted(shard_id), [&]() -> Status {
        for (const shard::TransferAdvance& a : steps) {
          TESSERA_RETURN_IF_ERROR(AdvanceTransferLocked(a, now));
        }
        if (!state.has_value()) return Status::Ok();
        return SaveLocked(shard_id, *state, now);
      });
}

Status SqliteStore::AdvanceTransferLocked(const shard::TransferAdvance& advance,
                                          int64_t now_ms) {
  const std::string what = "advance transfer " + Quoted(advance.id);
  {
    SqliteStatement& st = *stmts_->advance_transfer;
    ScopedReset reset(st);
    TESSERA_RETURN_IF_ERROR(st.BindText(1, advance.id));
    TESSERA_RETURN_IF_ERROR(
        st.BindInt64(2, static_cast<int64_t>(advance.from)));
    TESSERA_RETURN_IF_ERROR(st.BindInt64(3, static_cast<int64_t>(advance.to)));
    TESSERA_RETURN_IF_ERROR(st.BindInt64(4, now_ms));
    TESSERA_RETURN_IF_ERROR(st.Run(what));
    if (db_->changes() == 1) return Status::Ok();
  }
  // Not at `from`: say why.
  SqliteStatement& st = *stmts_->transfer_step;
  ScopedReset reset(st);
  TESSERA_RETURN_IF_ERROR(st.BindText(1, advance.id));
  Result<bool> row = st.Step(what);
  if (!row.ok()) return row.status();
  if (!*row) return shard::NoTransfer(advance.id);
  std::optional<shard::TransferStep> actual =
      shard::TransferStepFromInt(st.ColumnInt64(0));
  if (!actual.has_value()) {
    return IoError("sqlite store " + path_ + ": transfer " +
                   Quoted(advance.id) + " has an unknown step " +
                   std::to_string(st.ColumnInt64(0)));
  }
  return shard::TransferNotAt(advance, *actual);
}

Result<std::vector<shard::TransferRecord>> SqliteStore::ListTransfers() {
  std::lock_guard<std::mutex> lock(mu_);
  SqliteStatement& st = *stmts_->list_transfers;
  ScopedReset reset(st);
  std::vector<shard::TransferRecord> records;
  while (true) {
    Result<bool> row = st.Step("list transfers");
    if (!row.ok()) return row.status();
    if (!*row) break;
    shard::TransferRecord r;
    r.id = st.ColumnBytes(0);
    r.from_shard = st.ColumnBytes(1);
    r.to_shard = st.ColumnBytes(2);
    r.subscriber = st.ColumnBytes(3);
    r.claims_json = st.ColumnBytes(4);
    r.state = st.ColumnBytes(5);
    std::optional<shard::TransferStep> step =
        shard::TransferStepFromInt(st.ColumnInt64(6));
    if (!step.has_value()) {
      return IoError("sqlite store " + path_ + ": list transfers: transfer " +
                     Quoted(r.id) + " has an unknown step " +
                     std::to_string(st.ColumnInt64(6)));
    }
    r.step = *step;
    r.created_unix_ms = st.ColumnInt64(7);
    r.updated_unix_ms = st.ColumnInt64(8);
    records.push_back(std::move(r));
  }
  return records;
}

Status SqliteStore::DeleteTransfers(std::span<const std::string> ids) {
  std::lock_guard<std::mutex> lock(mu_);
  return InTransaction("delete transfers", [&]() -> Status {
    for (const std::string& id : ids) {
      SqliteStatement& st = *stmts_->delete_transfer;
      ScopedReset reset(st);
      TESSERA_RETURN_IF_ERROR(st.BindText(1, id));
      TESSERA_RETURN_IF_ERROR(st.Run("delete transfer " + Quoted(id)));
    }
    return Status::Ok();
  });
}

}  // namespace tessera::store
