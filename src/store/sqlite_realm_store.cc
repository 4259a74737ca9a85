// SqliteRealmStore: Open and the writes, each one BEGIN IMMEDIATE
// transaction that checks the realm's row first (the reads are in
// sqlite_realm_store_read.cc).
#include "store/sqlite_realm_store.h"

#include <limits>
#include <utility>

#include "realm/realm_store_rules.h"
#include "store/schema.h"
#include "store/sqlite_realm_sql.h"

namespace tessera::store {

using realm::LoadedRealm;
using realm::LoggedCommit;
using realm::RealmAppend;
using realm::RealmSnapshot;

namespace {

std::string Quoted(std::string_view text) {
  return "'" + std::string(text) + "'";
}

Status FailedPrecondition(std::string message) {
  return Status(StatusCode::kFailedPrecondition, std::move(message));
}

// a - b without overflow (the compaction bound for huge windows).
int64_t SaturatingSub(int64_t a, int64_t b) {
  if (b > 0 && a < std::numeric_limits<int64_t>::min() + b) {
    return std::numeric_limits<int64_t>::min();
  }
  return a - b;
}

}  // namespace

Result<std::unique_ptr<SqliteRealmStore>> SqliteRealmStore::Open(
    const std::string& path, Options options) {
  if (path.empty()) {
    return InvalidArgument("sqlite realm store: the database path is empty");
  }
  if (options.wall_clock == nullptr) options.wall_clock = RealWallClock::Get();
  Result<std::unique_ptr<SqliteDb>> opened = OpenStoreDatabase(
      path, options.busy_timeout_ms, options.wall_clock->UnixNowMs());
  if (!opened.ok()) return opened.status();
  std::unique_ptr<SqliteDb> db = std::move(opened).value();

  auto statements = std::make_unique<RealmStatements>();
  TESSERA_RETURN_IF_ERROR(PrepareRealmStatements(*db, *statements));
  return std::unique_ptr<SqliteRealmStore>(
      new SqliteRealmStore(std::move(db), std::move(statements), options));
}

SqliteRealmStore::SqliteRealmStore(std::unique_ptr<SqliteDb> db,
                                   std::unique_ptr<RealmStatements> statements,
                                   Options options)
    : options_(options),
      path_(db->path()),
      db_(std::move(db)),
      stmts_(std::move(statements)) {}

SqliteRealmStore::~SqliteRealmStore() = default;

Result<std::optional<SqliteRealmStore::Head>> SqliteRealmStore::ReadHead(
    std::string_view key) {
  SqliteStatement& st = *stmts_->read_head;
  ScopedReset reset(st);
  TESSERA_RETURN_IF_ERROR(st.BindText(1, key));
  Result<bool> row = st.Step("read realm " + Quoted(key));
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<Head>();
  return std::optional<Head>(
      Head{st.ColumnBytes(0), st.ColumnInt64(1), st.ColumnInt64(2)});
}

Result<SqliteRealmStore::Head> SqliteRealmStore::RequireHead(
    std::string_view key, std::string_view what) {
  Result<std::optional<Head>> head = ReadHead(key);
  if (!head.ok()) return head.status();
  if (!head->has_value()) {
    return NotFound(std::string(what) + ": no realm " + Quoted(key));
  }
  return std::move(**head);
}

Result<std::optional<int64_t>> SqliteRealmStore::NewestSnapshotVersion(
    std::string_view key, int64_t epoch) {
  SqliteStatement& st = *stmts_->newest_snapshot_version;
  ScopedReset reset(st);
  TESSERA_RETURN_IF_ERROR(st.BindText(1, key));
  TESSERA_RETURN_IF_ERROR(st.BindInt64(2, epoch));
  Result<bool> row = st.Step("read the snapshots of realm " + Quoted(key));
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<int64_t>();
  return std::optional<int64_t>(st.ColumnInt64(0));
}

Status SqliteRealmStore::InsertSnapshot(std::string_view key,
                                        const RealmSnapshot& snapshot) {
  SqliteStatement& st = *stmts_->insert_snapshot;
  ScopedReset reset(st);
  TESSERA_RETURN_IF_ERROR(st.BindText(1, key));
  TESSERA_RETURN_IF_ERROR(st.BindInt64(2, snapshot.epoch));
  TESSERA_RETURN_IF_ERROR(st.BindInt64(3, snapshot.version));
  TESSERA_RETURN_IF_ERROR(st.BindText(4, snapshot.schema_hash));
  TESSERA_RETURN_IF_ERROR(st.BindText(5, snapshot.state));
  return st.Run("store a snapshot of realm " + Quoted(key));
}

Status SqliteRealmStore::SetHead(std::string_view key, int64_t epoch,
                                 int64_t version, int64_t now_ms) {
  SqliteStatement& st = *stmts_->set_head;
  ScopedReset reset(st);
  TESSERA_RETURN_IF_ERROR(st.BindText(1, key));
  TESSERA_RETURN_IF_ERROR(st.BindInt64(2, epoch));
  TESSERA_RETURN_IF_ERROR(st.BindInt64(3, version));
  TESSERA_RETURN_IF_ERROR(st.BindInt64(4, now_ms));
  return st.Run("update realm " + Quoted(key));
}

Status SqliteRealmStore::DeleteHistory(std::string_view key) {
  for (SqliteStatement* st :
       {stmts_->delete_log.get(), stmts_->delete_snapshots.get()}) {
    ScopedReset reset(*st);
    TESSERA_RETURN_IF_ERROR(st->BindText(1, key));
    TESSERA_RETURN_IF_ERROR(
        st->Run("drop the history of realm " + Quoted(key)));
  }
  return Status::Ok();
}

Status SqliteRealmStore::Create(std::string_view key, std::string_view kind,
                                const RealmSnapshot& genesis) {
  const int64_t now = NowMs();
  std::lock_guard<std::mutex> lock(mu_);
  return db_->InTransaction("create realm " + Quoted(key), [&]() -> Status {
    Result<std::optional<Head>> head = ReadHead(key);
    if (!head.ok()) return head.status();
    if (head->has_value()) {
      return Status(StatusCode::kAlreadyExists,
                    "create realm " + Quoted(key) + ": it exists (kind " +
                        Quoted((*head)->kind) + ")");
    }
    SqliteStatement& st = *stmts_->insert_realm;
    {
      ScopedReset reset(st);
      TESSERA_RETURN_IF_ERROR(st.BindText(1, key));
      TESSERA_RETURN_IF_ERROR(st.BindText(2, kind));
      TESSERA_RETURN_IF_ERROR(st.BindInt64(3, genesis.epoch));
      TESSERA_RETURN_IF_ERROR(st.BindInt64(4, genesis.version));
      TESSERA_RETURN_IF_ERROR(st.BindInt64(5, now));
      TESSERA_RETURN_IF_ERROR(st.Run("create realm " + Quoted(key)));
    }
    return InsertSnapshot(key, genesis);
  });
}

Status SqliteRealmStore::AppendLocked(const RealmAppend& entry,
                                      int64_t now_ms) {
  Result<Head> head = RequireHead(entry.key, "append");
  if (!head.ok()) return head.status();
  const std::string realm = RealmName(entry.key);
  TESSERA_RETURN_IF_ERROR(
      realm::CheckAppendFits(entry, realm, head->epoch, head->version));
  TESSERA_RETURN_IF_ERROR(WriteAlarms(entry));
  if (entry.commits.empty()) return Status::Ok();
  const std::string what = "append to " + realm;
  SqliteStatement& st = *stmts_->insert_log;
  for (const LoggedCommit& commit : entry.commits) {
    ScopedReset reset(st);
    TESSERA_RETURN_IF_ERROR(st.BindText(1, entry.key));
    TESSERA_RETURN_IF_ERROR(st.BindInt64(2, entry.epoch));
    TESSERA_RETURN_IF_ERROR(st.BindInt64(3, commit.version));
    TESSERA_RETURN_IF_ERROR(st.BindBlob(4, commit.patch));
    TESSERA_RETURN_IF_ERROR(st.Run(what));
  }
  return SetHead(entry.key, head->epoch, entry.commits.back().version, now_ms);
}

Status SqliteRealmStore::WriteAlarms(const RealmAppend& entry) {
  const std::string what = "alarms of " + RealmName(entry.key);
  for (const std::string& name : entry.alarms_cancelled) {
    SqliteStatement& st = *stmts_->delete_alarm;
    ScopedReset reset(st);
    TESSERA_RETURN_IF_ERROR(st.BindText(1, entry.key));
    TESSERA_RETURN_IF_ERROR(st.BindText(2, name));
    TESSERA_RETURN_IF_ERROR(st.Run(what));
  }
  for (const realm::RealmAlarm& alarm : entry.alarms_set) {
    SqliteStatement& st = *stmts_->put_alarm;
    ScopedReset reset(st);
    TESSERA_RETURN_IF_ERROR(st.BindText(1, entry.key));
    TESSERA_RETURN_IF_ERROR(st.BindText(2, alarm.name));
    TESSERA_RETURN_IF_ERROR(st.BindInt64(3, alarm.due_unix_ms));
    TESSERA_RETURN_IF_ERROR(st.BindInt64(4, alarm.failures));
    TESSERA_RETURN_IF_ERROR(st.Run(what));
  }
  return Status::Ok();
}

Status SqliteRealmStore::Append(std::span<const RealmAppend> entries) {
  if (entries.empty()) return Status::Ok();
  const int64_t now = NowMs();
  std::lock_guard<std::mutex> lock(mu_);
  return db_->InTransaction("append realm commits", [&]() -> Status {
    for (const RealmAppend& entry : entries) {
      TESSERA_RETURN_IF_ERROR(AppendLocked(entry, now));
    }
    return Status::Ok();
  });
}

Status SqliteRealmStore::PutSnapshot(std::string_view key,
                                     const RealmSnapshot& snapshot,
                                     int64_t log_window) {
  const std::string realm = RealmName(key);
  if (log_window < 0) {
    return InvalidArgument("snapshot of " + realm + ": log window " +
                           std::to_string(log_window) + " is negative");
  }
  const int64_t now = NowMs();
  std::lock_guard<std::mutex> lock(mu_);
  return db_->InTransaction("snapshot " + realm, [&]() -> Status {
    Result<Head> head = RequireHead(key, "snapshot");
    if (!head.ok()) return head.status();
    if (snapshot.epoch != head->epoch) {
      return FailedPrecondition(
          "snapshot of " + realm + ": epoch " + std::to_string(snapshot.epoch) +
          " is not the current epoch " + std::to_string(head->epoch));
    }
    Result<std::optional<int64_t>> newest =
        NewestSnapshotVersion(key, head->epoch);
    if (!newest.ok()) return newest.status();
    const bool newer = !newest->has_value() || snapshot.version > **newest;
    if (!newer || snapshot.version > head->version) {
      return FailedPrecondition(
          "snapshot of " + realm + ": version " +
          std::to_string(snapshot.version) + " is not in (" +
          (newest->has_value() ? std::to_string(**newest) : "none") + ", " +
          std::to_string(head->version) +
          "] (after the newest snapshot, at most the head)");
    }
    TESSERA_RETURN_IF_ERROR(InsertSnapshot(key, snapshot));
    {
      SqliteStatement& st = *stmts_->drop_older_snapshots;
      ScopedReset reset(st);
      TESSERA_RETURN_IF_ERROR(st.BindText(1, key));
      TESSERA_RETURN_IF_ERROR(st.BindInt64(2, head->epoch));
      TESSERA_RETURN_IF_ERROR(st.BindInt64(3, snapshot.version));
      TESSERA_RETURN_IF_ERROR(st.Run("drop older snapshots of " + realm));
    }
    {
      SqliteStatement& st = *stmts_->compact_log;
      ScopedReset reset(st);
      TESSERA_RETURN_IF_ERROR(st.BindText(1, key));
      TESSERA_RETURN_IF_ERROR(st.BindInt64(2, head->epoch));
      TESSERA_RETURN_IF_ERROR(
          st.BindInt64(3, SaturatingSub(snapshot.version, log_window)));
      TESSERA_RETURN_IF_ERROR(st.Run("compact the log of " + realm));
    }
    return SetHead(key, head->epoch, head->version, now);
  });
}
Status SqliteRealmStore::StartEpoch(std::string_view key,
                                    const RealmSnapshot& first) {
  const std::string realm = RealmName(key);
  const int64_t now = NowMs();
  std::lock_guard<std::mutex> lock(mu_);
  return db_->InTransaction("start an epoch of " + realm, [&]() -> Status {
    Result<Head> head = RequireHead(key, "start an epoch");
    if (!head.ok()) return head.status();
    if (first.epoch <= head->epoch) {
      return FailedPrecondition("start an epoch of " + realm + ": epoch " +
                                std::to_string(first.epoch) +
                                " is not after the current epoch " +
                                std::to_string(head->epoch));
    }
    TESSERA_RETURN_IF_ERROR(DeleteHistory(key));
    TESSERA_RETURN_IF_ERROR(InsertSnapshot(key, first));
    return SetHead(key, first.epoch, first.version, now);
  });
}

Status SqliteRealmStore::Drop(std::string_view key) {
  std::lock_guard<std::mutex> lock(mu_);
  return db_->InTransaction("drop realm " + Quoted(key), [&]() -> Status {
    TESSERA_RETURN_IF_ERROR(DeleteHistory(key));
    {
      SqliteStatement& alarms = *stmts_->delete_alarms;
      ScopedReset reset(alarms);
      TESSERA_RETURN_IF_ERROR(alarms.BindText(1, key));
      TESSERA_RETURN_IF_ERROR(alarms.Run("drop the alarms of " + Quoted(key)));
    }
    SqliteStatement& st = *stmts_->delete_realm;
    ScopedReset reset(st);
    TESSERA_RETURN_IF_ERROR(st.BindText(1, key));
    return st.Run("drop realm " + Quoted(key));
  });
}
}  // namespace tessera::store
