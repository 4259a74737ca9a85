// PgRealmStore's reads: Load, ReadLog, List and ListAlarms (the writes are
// in pg_realm_store.cc). Load and ReadLog each run in one REPEATABLE READ,
// READ ONLY transaction, so the realm's row, its snapshot and its log are
// of one moment while other connections write.
#include <limits>
#include <utility>

#include "store/postgres/pg_realm_store.h"

namespace tessera::store {

using pg::PgParam;
using pg::PgResult;
using realm::LoadedRealm;
using realm::LoggedCommit;

namespace {

constexpr std::string_view kReadTransaction =
    "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY";

Status OutOfRange(std::string message) {
  return Status(StatusCode::kOutOfRange, std::move(message));
}

// The (version, patch) rows of `result` appended to `out`.
Status AppendCommits(const PgResult& result, std::vector<LoggedCommit>& out) {
  for (int r = 0; r < result.rows(); ++r) {
    Result<int64_t> version = result.Int64(r, 0);
    if (!version.ok()) return version.status();
    Result<std::string> patch = result.Bytes(r, 1);
    if (!patch.ok()) return patch.status();
    out.push_back({*version, std::move(patch).value()});
  }
  return Status::Ok();
}

}  // namespace

Result<std::optional<LoadedRealm>> PgRealmStore::Load(std::string_view key) {
  const std::string realm = RealmNameOf(key);
  std::lock_guard<std::mutex> lock(mu_);
  std::optional<LoadedRealm> out;
  Status status =
      conn_->InTransaction(kReadTransaction, "load " + realm, [&]() -> Status {
        Result<std::optional<Head>> head = ReadHead(key, /*for_update=*/false);
        if (!head.ok()) return head.status();
        if (!head->has_value()) return Status::Ok();
        LoadedRealm loaded;
        loaded.kind = (*head)->kind;
        loaded.epoch = (*head)->epoch;
        {
          Result<PgResult> row = conn_->Exec(
              "SELECT version, schema_hash, state FROM realm_snapshots "
              "WHERE key = $1 AND epoch = $2 ORDER BY version DESC LIMIT 1",
              {PgParam::Text(key), PgParam::Int(loaded.epoch)},
              "load the snapshot of " + realm);
          if (!row.ok()) return row.status();
          if (row->rows() == 0) {
            return IoError("postgres realm store: " + realm +
                           " has no snapshot of its epoch " +
                           std::to_string(loaded.epoch));
          }
          Result<int64_t> version = row->Int64(0, 0);
          if (!version.ok()) return version.status();
          loaded.snapshot.epoch = loaded.epoch;
          loaded.snapshot.version = *version;
          loaded.snapshot.schema_hash = std::string(row->Text(0, 1));
          loaded.snapshot.state = std::string(row->Text(0, 2));
        }
        Result<PgResult> log = conn_->Exec(
            "SELECT version, patch FROM realm_log WHERE key = $1 AND "
            "epoch = $2 AND version > $3 ORDER BY version",
            {PgParam::Text(key), PgParam::Int(loaded.epoch),
             PgParam::Int(loaded.snapshot.version)},
            "load the log of " + realm);
        if (!log.ok()) return log.status();
        TESSERA_RETURN_IF_ERROR(AppendCommits(*log, loaded.tail));
        int64_t want = loaded.snapshot.version;
        for (const LoggedCommit& commit : loaded.tail) {
          if (commit.version != ++want) {
            return IoError("postgres realm store: the log of " + realm +
                           " skips from version " + std::to_string(want - 1) +
                           " to " + std::to_string(commit.version));
          }
        }
        if (loaded.head_version() != (*head)->version) {
          return IoError("postgres realm store: the log of " + realm +
                         " ends at version " +
                         std::to_string(loaded.head_version()) +
                         ", its head is " + std::to_string((*head)->version));
        }
        out = std::move(loaded);
        return Status::Ok();
      });
  if (!status.ok()) return status;
  return out;
}

Result<std::vector<LoggedCommit>> PgRealmStore::ReadLog(std::string_view key,
                                                        int64_t epoch,
                                                        int64_t after,
                                                        size_t limit) {
  const std::string realm = RealmNameOf(key);
  const std::string what = "read the log of " + realm;
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<LoggedCommit> out;
  Status status = conn_->InTransaction(kReadTransaction, what, [&]() -> Status {
    Result<std::optional<Head>> head = ReadHead(key, /*for_update=*/false);
    if (!head.ok()) return head.status();
    if (!head->has_value()) {
      return NotFound("read the log: no realm '" + std::string(key) + "'");
    }
    const Head& h = **head;
    if (epoch != h.epoch) {
      return OutOfRange(what + ": epoch " + std::to_string(epoch) +
                        " is not the current epoch " + std::to_string(h.epoch) +
                        " (hydrate instead)");
    }
    if (after > h.version) {
      return OutOfRange(what + ": version " + std::to_string(after) +
                        " is beyond the head " + std::to_string(h.version) +
                        " (hydrate instead)");
    }
    if (after == h.version) return Status::Ok();
    {
      Result<PgResult> row = conn_->Exec(
          "SELECT min(version) FROM realm_log WHERE key = $1 AND epoch = $2",
          {PgParam::Text(key), PgParam::Int(epoch)}, what);
      if (!row.ok()) return row.status();
      // The log holds a consecutive run ending at the head, so after + 1 is
      // held exactly when the run starts at or before it.
      int64_t first = h.version + 1;
      if (row->rows() > 0 && !row->IsNull(0, 0)) {
        Result<int64_t> min = row->Int64(0, 0);
        if (!min.ok()) return min.status();
        first = *min;
      }
      if (after + 1 < first) {
        return OutOfRange(what + ": version " + std::to_string(after + 1) +
                          " is no longer in the log (it starts at " +
                          std::to_string(first) + "; hydrate instead)");
      }
    }
    if (limit == 0) return Status::Ok();
    const int64_t capped =
        limit > static_cast<size_t>(std::numeric_limits<int64_t>::max())
            ? std::numeric_limits<int64_t>::max()
            : static_cast<int64_t>(limit);
    Result<PgResult> log = conn_->Exec(
        "SELECT version, patch FROM realm_log WHERE key = $1 AND epoch = $2 "
        "AND version > $3 ORDER BY version LIMIT $4",
        {PgParam::Text(key), PgParam::Int(epoch), PgParam::Int(after),
         PgParam::Int(capped)},
        what);
    if (!log.ok()) return log.status();
    return AppendCommits(*log, out);
  });
  if (!status.ok()) return status;
  return out;
}

Result<std::vector<std::string>> PgRealmStore::List(std::string_view kind) {
  std::lock_guard<std::mutex> lock(mu_);
  Result<PgResult> rows =
      kind.empty()
          ? conn_->Exec("SELECT key FROM realms ORDER BY key COLLATE \"C\"", {},
                        "list realms")
          : conn_->Exec(
                "SELECT key FROM realms WHERE kind = $1 "
                "ORDER BY key COLLATE \"C\"",
                {PgParam::Text(kind)}, "list realms");
  if (!rows.ok()) return rows.status();
  std::vector<std::string> keys;
  keys.reserve(static_cast<size_t>(rows->rows()));
  for (int r = 0; r < rows->rows(); ++r) {
    keys.emplace_back(rows->Text(r, 0));
  }
  return keys;
}

Result<std::vector<realm::StoredAlarm>> PgRealmStore::ListAlarms() {
  std::lock_guard<std::mutex> lock(mu_);
  Result<PgResult> rows = conn_->Exec(
      "SELECT key, name, due_ms, failures FROM realm_alarms "
      "ORDER BY key COLLATE \"C\", name COLLATE \"C\"",
      {}, "list realm alarms");
  if (!rows.ok()) return rows.status();
  std::vector<realm::StoredAlarm> alarms;
  alarms.reserve(static_cast<size_t>(rows->rows()));
  for (int r = 0; r < rows->rows(); ++r) {
    realm::StoredAlarm stored;
    stored.key = std::string(rows->Text(r, 0));
    stored.alarm.name = std::string(rows->Text(r, 1));
    Result<int64_t> due = rows->Int64(r, 2);
    if (!due.ok()) return due.status();
    Result<int64_t> failures = rows->Int64(r, 3);
    if (!failures.ok()) return failures.status();
    stored.alarm.due_unix_ms = *due;
    stored.alarm.failures = static_cast<int32_t>(*failures);
    alarms.push_back(std::move(stored));
  }
  return alarms;
}

}  // namespace tessera::store
