// SqliteRealmStore's reads: Load, ReadLog and List (the writes are in
// sqlite_realm_store.cc). Load and ReadLog run in one read transaction
// each, so the realm's row, its snapshot and its log agree even while
// another process writes the file.
#include <limits>
#include <utility>

#include "store/sqlite_realm_sql.h"
#include "store/sqlite_realm_store.h"

namespace tessera::store {

using realm::LoadedRealm;
using realm::LoggedCommit;

namespace {

Status OutOfRange(std::string message) {
  return Status(StatusCode::kOutOfRange, std::move(message));
}

// A read transaction on `db` for the scope: BEGIN now, COMMIT (ending the
// read) when destroyed.
class ReadTransaction {
 public:
  explicit ReadTransaction(SqliteDb& db) : db_(db) {}
  ~ReadTransaction() {
    if (begun_) (void)db_.Exec("COMMIT", "end the read");
  }
  ReadTransaction(const ReadTransaction&) = delete;
  ReadTransaction& operator=(const ReadTransaction&) = delete;
  Status Begin(std::string_view what) {
    TESSERA_RETURN_IF_ERROR(db_.Exec("BEGIN", what));
    begun_ = true;
    return Status::Ok();
  }

 private:
  SqliteDb& db_;
  bool begun_ = false;
};

}  // namespace

Result<std::optional<LoadedRealm>> SqliteRealmStore::Load(
    std::string_view key) {
  const std::string realm = RealmName(key);
  std::lock_guard<std::mutex> lock(mu_);
  ReadTransaction txn(*db_);
  TESSERA_RETURN_IF_ERROR(txn.Begin("load " + realm));

  Result<std::optional<Head>> head = ReadHead(key);
  if (!head.ok()) return head.status();
  if (!head->has_value()) return std::optional<LoadedRealm>();
  LoadedRealm loaded;
  loaded.kind = (*head)->kind;
  loaded.epoch = (*head)->epoch;
  {
    SqliteStatement& st = *stmts_->newest_snapshot;
    ScopedReset reset(st);
    TESSERA_RETURN_IF_ERROR(st.BindText(1, key));
    TESSERA_RETURN_IF_ERROR(st.BindInt64(2, loaded.epoch));
    Result<bool> row = st.Step("load the snapshot of " + realm);
    if (!row.ok()) return row.status();
    if (!*row) {
      return IoError("sqlite realm store " + path_ + ": " + realm +
                     " has no snapshot of its epoch " +
                     std::to_string(loaded.epoch));
    }
    loaded.snapshot.epoch = loaded.epoch;
    loaded.snapshot.version = st.ColumnInt64(0);
    loaded.snapshot.schema_hash = st.ColumnBytes(1);
    loaded.snapshot.state = st.ColumnBytes(2);
  }
  {
    SqliteStatement& st = *stmts_->read_log;
    ScopedReset reset(st);
    TESSERA_RETURN_IF_ERROR(st.BindText(1, key));
    TESSERA_RETURN_IF_ERROR(st.BindInt64(2, loaded.epoch));
    TESSERA_RETURN_IF_ERROR(st.BindInt64(3, loaded.snapshot.version));
    TESSERA_RETURN_IF_ERROR(st.BindInt64(4, -1));  // no limit
    while (true) {
      Result<bool> row = st.Step("load the log of " + realm);
      if (!row.ok()) return row.status();
      if (!*row) break;
      loaded.tail.push_back({st.ColumnInt64(0), st.ColumnBytes(1)});
    }
  }
  int64_t want = loaded.snapshot.version;
  for (const LoggedCommit& commit : loaded.tail) {
    if (commit.version != ++want) {
      return IoError("sqlite realm store " + path_ + ": the log of " + realm +
                     " skips from version " + std::to_string(want - 1) +
                     " to " + std::to_string(commit.version));
    }
  }
  if (loaded.head_version() != (*head)->version) {
    return IoError("sqlite realm store " + path_ + ": the log of " + realm +
                   " ends at version " + std::to_string(loaded.head_version()) +
                   ", its head is " + std::to_string((*head)->version));
  }
  return std::optional<LoadedRealm>(std::move(loaded));
}

Result<std::vector<LoggedCommit>> SqliteRealmStore::ReadLog(
    std::string_view key, int64_t epoch, int64_t after, size_t limit) {
  const std::string realm = RealmName(key);
  std::lock_guard<std::mutex> lock(mu_);
  ReadTransaction txn(*db_);
  TESSERA_RETURN_IF_ERROR(txn.Begin("read the log of " + realm));

  Result<Head> head = RequireHead(key, "read the log");
  if (!head.ok()) return head.status();
  if (epoch != head->epoch) {
    return OutOfRange("read the log of " + realm + ": epoch " +
                      std::to_string(epoch) + " is not the current epoch " +
                      std::to_string(head->epoch) + " (hydrate instead)");
  }
  if (after > head->version) {
    return OutOfRange("read the log of " + realm + ": version " +
                      std::to_string(after) + " is beyond the head " +
                      std::to_string(head->version) + " (hydrate instead)");
  }
  std::vector<LoggedCommit> out;
  if (after == head->version) return out;
  {
    SqliteStatement& st = *stmts_->first_log;
    ScopedReset reset(st);
    TESSERA_RETURN_IF_ERROR(st.BindText(1, key));
    TESSERA_RETURN_IF_ERROR(st.BindInt64(2, epoch));
    Result<bool> row = st.Step("read the log of " + realm);
    if (!row.ok()) return row.status();
    // The log holds a consecutive run ending at the head, so after + 1 is
    // held exactly when the run starts at or before it.
    const int64_t first = *row ? st.ColumnInt64(0) : head->version + 1;
    if (after + 1 < first) {
      return OutOfRange("read the log of " + realm + ": version " +
                        std::to_string(after + 1) +
                        " is no longer in the log (it starts at " +
                        std::to_string(first) + "; hydrate instead)");
    }
  }
  if (limit == 0) return out;
  SqliteStatement& st = *stmts_->read_log;
  ScopedReset reset(st);
  TESSERA_RETURN_IF_ERROR(st.BindText(1, key));
  TESSERA_RETURN_IF_ERROR(st.BindInt64(2, epoch));
  TESSERA_RETURN_IF_ERROR(st.BindInt64(3, after));
  const int64_t capped =
      limit > static_cast<size_t>(std::numeric_limits<int64_t>::max())
          ? std::numeric_limits<int64_t>::max()
          : static_cast<int64_t>(limit);
  TESSERA_RETURN_IF_ERROR(st.BindInt64(4, capped));
  while (true) {
    Result<bool> row = st.Step("read the log of " + realm);
    if (!row.ok()) return row.status();
    if (!*row) break;
    out.push_back({st.ColumnInt64(0), st.ColumnBytes(1)});
  }
  return out;
}

Result<std::vector<std::string>> SqliteRealmStore::List(std::string_view kind) {
  std::lock_guard<std::mutex> lock(mu_);
  SqliteStatement& st = kind.empty() ? *stmts_->list_all : *stmts_->list_kind;
  ScopedReset reset(st);
  if (!kind.empty()) TESSERA_RETURN_IF_ERROR(st.BindText(1, kind));
  std::vector<std::string> keys;
  while (true) {
    Result<bool> row = st.Step("list realms");
    if (!row.ok()) return row.status();
    if (!*row) break;
    keys.push_back(st.ColumnBytes(0));
  }
  return keys;
}

Result<std::vector<realm::StoredAlarm>> SqliteRealmStore::ListAlarms() {
  std::lock_guard<std::mutex> lock(mu_);
  SqliteStatement& st = *stmts_->list_alarms;
  ScopedReset reset(st);
  std::vector<realm::StoredAlarm> alarms;
  while (true) {
    Result<bool> row = st.Step("list realm alarms");
    if (!row.ok()) return row.status();
    if (!*row) break;
    realm::StoredAlarm stored;
    stored.key = st.ColumnBytes(0);
    stored.alarm.name = st.ColumnBytes(1);
    stored.alarm.due_unix_ms = st.ColumnInt64(2);
    stored.alarm.failures = static_cast<int32_t>(st.ColumnInt64(3));
    alarms.push_back(std::move(stored));
  }
  return alarms;
}

}  // namespace tessera::store
