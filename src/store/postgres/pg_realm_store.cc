// PgRealmStore: Open and the writes, each one transaction that locks the
// realm's row first (the reads are in pg_realm_store_read.cc).
#include "store/postgres/pg_realm_store.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "realm/realm_store_rules.h"
#include "store/postgres/pg_realm_schema.h"

namespace tessera::store {

using pg::PgParam;
using pg::PgResult;
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

// Log rows per INSERT statement (two parameters each, well under the
// protocol's 65535).
constexpr size_t kLogRowsPerInsert = 500;

}  // namespace

std::string PgRealmStore::RealmNameOf(std::string_view key) {
  return "realm " + Quoted(key);
}

Result<std::unique_ptr<PgRealmStore>> PgRealmStore::Open(const std::string& url,
                                                         Options options) {
  if (options.wall_clock == nullptr) options.wall_clock = RealWallClock::Get();
  Result<std::unique_ptr<pg::PgConn>> conn = pg::PgConn::Connect(url);
  if (!conn.ok()) return conn.status();
  TESSERA_RETURN_IF_ERROR(pg::EnsureRealmSchema(**conn));
  return std::unique_ptr<PgRealmStore>(
      new PgRealmStore(std::move(conn).value(), options));
}

PgRealmStore::PgRealmStore(std::unique_ptr<pg::PgConn> conn, Options options)
    : options_(options), conn_(std::move(conn)) {}

PgRealmStore::~PgRealmStore() = default;

Result<std::optional<PgRealmStore::Head>> PgRealmStore::ReadHead(
    std::string_view key, bool for_update) {
  Result<PgResult> row =
      conn_->Exec(for_update ? "SELECT kind, epoch, head_version FROM realms "
                               "WHERE key = $1 FOR UPDATE"
                             : "SELECT kind, epoch, head_version FROM realms "
                               "WHERE key = $1",
                  {PgParam::Text(key)}, "read realm " + Quoted(key));
  if (!row.ok()) return row.status();
  if (row->rows() == 0) return std::optional<Head>();
  Result<int64_t> epoch = row->Int64(0, 1);
  if (!epoch.ok()) return epoch.status();
  Result<int64_t> version = row->Int64(0, 2);
  if (!version.ok()) return version.status();
  return std::optional<Head>(
      Head{std::string(row->Text(0, 0)), *epoch, *version});
}

Result<PgRealmStore::Head> PgRealmStore::LockHead(std::string_view key,
                                                  std::string_view what) {
  Result<std::optional<Head>> head = ReadHead(key, /*for_update=*/true);
  if (!head.ok()) return head.status();
  if (!head->has_value()) {
    return NotFound(std::string(what) + ": no realm " + Quoted(key));
  }
  return std::move(**head);
}

Result<std::optional<int64_t>> PgRealmStore::NewestSnapshotVersion(
    std::string_view key, int64_t epoch) {
  Result<PgResult> row = conn_->Exec(
      "SELECT max(version) FROM realm_snapshots WHERE key = $1 AND epoch = $2",
      {PgParam::Text(key), PgParam::Int(epoch)},
      "read the snapshots of realm " + Quoted(key));
  if (!row.ok()) return row.status();
  if (row->rows() == 0 || row->IsNull(0, 0)) return std::optional<int64_t>();
  Result<int64_t> version = row->Int64(0, 0);
  if (!version.ok()) return version.status();
  return std::optional<int64_t>(*version);
}

Status PgRealmStore::InsertSnapshot(std::string_view key,
                                    const RealmSnapshot& snapshot) {
  return conn_->Run(
      "INSERT INTO realm_snapshots(key, epoch, version, schema_hash, state) "
      "VALUES($1, $2, $3, $4, $5)",
      {PgParam::Text(key), PgParam::Int(snapshot.epoch),
       PgParam::Int(snapshot.version), PgParam::Text(snapshot.schema_hash),
       PgParam::Text(snapshot.state)},
      "store a snapshot of realm " + Quoted(key));
}

Status PgRealmStore::SetHead(std::string_view key, int64_t epoch,
                             int64_t version, int64_t now_ms) {
  return conn_->Run(
      "UPDATE realms SET epoch = $2, head_version = $3, updated_ms = $4 "
      "WHERE key = $1",
      {PgParam::Text(key), PgParam::Int(epoch), PgParam::Int(version),
       PgParam::Int(now_ms)},
      "update realm " + Quoted(key));
}

Status PgRealmStore::DeleteHistory(std::string_view key) {
  const std::string what = "drop the history of realm " + Quoted(key);
  TESSERA_RETURN_IF_ERROR(conn_->Run("DELETE FROM realm_log WHERE key = $1",
                                     {PgParam::Text(key)}, what));
  return conn_->Run("DELETE FROM realm_snapshots WHERE key = $1",
                    {PgParam::Text(key)}, what);
}

Status PgRealmStore::Create(std::string_view key, std::string_view kind,
                            const RealmSnapshot& genesis) {
  const int64_t now = NowMs();
  const std::string what = "create realm " + Quoted(key);
  std::lock_guard<std::mutex> lock(mu_);
  return conn_->InTransaction("BEGIN", what, [&]() -> Status {
    Result<PgResult> inserted = conn_->Exec(
        "INSERT INTO realms(key, kind, epoch, head_version, created_ms, "
        "updated_ms) VALUES($1, $2, $3, $4, $5, $5) "
        "ON CONFLICT (key) DO NOTHING",
        {PgParam::Text(key), PgParam::Text(kind), PgParam::Int(genesis.epoch),
         PgParam::Int(genesis.version), PgParam::Int(now)},
        what);
    if (!inserted.ok()) return inserted.status();
    if (inserted->affected() == 0) {
      Result<std::optional<Head>> head = ReadHead(key, /*for_update=*/false);
      if (!head.ok()) return head.status();
      return Status(StatusCode::kAlreadyExists,
                    what + ": it exists (kind " +
                        Quoted(head->has_value() ? (*head)->kind : "?") + ")");
    }
    return InsertSnapshot(key, genesis);
  });
}

Status PgRealmStore::InsertLog(const RealmAppend& entry) {
  const std::string what = "append to " + RealmNameOf(entry.key);
  std::span<const LoggedCommit> commits(entry.commits);
  while (!commits.empty()) {
    const size_t n = std::min(commits.size(), kLogRowsPerInsert);
    std::string sql =
        "INSERT INTO realm_log(key, epoch, version, patch) VALUES";
    std::vector<PgParam> params = {PgParam::Text(entry.key),
                                   PgParam::Int(entry.epoch)};
    params.reserve(2 + 2 * n);
    for (size_t i = 0; i < n; ++i) {
      const size_t p = params.size() + 1;
      sql += (i == 0 ? "($1, $2, $" : ", ($1, $2, $") + std::to_string(p) +
             ", $" + std::to_string(p + 1) + ")";
      params.push_back(PgParam::Int(commits[i].version));
      params.push_back(PgParam::Bytes(commits[i].patch));
    }
    Result<PgResult> done = conn_->Exec(sql, params, what);
    if (!done.ok()) return done.status();
    commits = commits.subspan(n);
  }
  return Status::Ok();
}

Status PgRealmStore::AppendLocked(const RealmAppend& entry, int64_t now_ms) {
  Result<Head> head = LockHead(entry.key, "append");
  if (!head.ok()) return head.status();
  const std::string realm = RealmNameOf(entry.key);
  TESSERA_RETURN_IF_ERROR(
      realm::CheckAppendFits(entry, realm, head->epoch, head->version));
  TESSERA_RETURN_IF_ERROR(WriteAlarms(entry));
  if (entry.commits.empty()) return Status::Ok();
  TESSERA_RETURN_IF_ERROR(InsertLog(entry));
  return SetHead(entry.key, head->epoch, entry.commits.back().version, now_ms);
}

Status PgRealmStore::WriteAlarms(const RealmAppend& entry) {
  const std::string what = "alarms of " + RealmNameOf(entry.key);
  for (const std::string& name : entry.alarms_cancelled) {
    TESSERA_RETURN_IF_ERROR(
        conn_->Run("DELETE FROM realm_alarms WHERE key = $1 AND name = $2",
                   {PgParam::Text(entry.key), PgParam::Text(name)}, what));
  }
  for (const realm::RealmAlarm& alarm : entry.alarms_set) {
    TESSERA_RETURN_IF_ERROR(conn_->Run(
        "INSERT INTO realm_alarms(key, name, due_ms, failures) "
        "VALUES($1, $2, $3, $4) ON CONFLICT (key, name) DO UPDATE SET "
        "due_ms = EXCLUDED.due_ms, failures = EXCLUDED.failures",
        {PgParam::Text(entry.key), PgParam::Text(alarm.name),
         PgParam::Int(alarm.due_unix_ms), PgParam::Int(alarm.failures)},
        what));
  }
  return Status::Ok();
}

Status PgRealmStore::Append(std::span<const RealmAppend> entries) {
  if (entries.empty()) return Status::Ok();
  const int64_t now = NowMs();
  std::lock_guard<std::mutex> lock(mu_);
  return conn_->InTransaction("BEGIN", "append realm commits", [&]() -> Status {
    for (const RealmAppend& entry : entries) {
      TESSERA_RETURN_IF_ERROR(AppendLocked(entry, now));
    }
    return Status::Ok();
  });
}

Status PgRealmStore::PutSnapshot(std::string_view key,
                                 const RealmSnapshot& snapshot,
                                 int64_t log_window) {
  const std::string realm = RealmNameOf(key);
  if (log_window < 0) {
    return InvalidArgument("snapshot of " + realm + ": log window " +
                           std::to_string(log_window) + " is negative");
  }
  const int64_t now = NowMs();
  std::lock_guard<std::mutex> lock(mu_);
  return conn_->InTransaction("BEGIN", "snapshot " + realm, [&]() -> Status {
    Result<Head> head = LockHead(key, "snapshot");
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
    TESSERA_RETURN_IF_ERROR(conn_->Run(
        "DELETE FROM realm_snapshots WHERE key = $1 AND epoch = $2 AND "
        "version < $3",
        {PgParam::Text(key), PgParam::Int(head->epoch),
         PgParam::Int(snapshot.version)},
        "drop older snapshots of " + realm));
    TESSERA_RETURN_IF_ERROR(
        conn_->Run("DELETE FROM realm_log WHERE key = $1 AND epoch = $2 AND "
                   "version <= $3",
                   {PgParam::Text(key), PgParam::Int(head->epoch),
                    PgParam::Int(SaturatingSub(snapshot.version, log_window))},
                   "compact the log of " + realm));
    return SetHead(key, head->epoch, head->version, now);
  });
}

Status PgRealmStore::StartEpoch(std::string_view key,
                                const RealmSnapshot& first) {
  const std::string realm = RealmNameOf(key);
  const int64_t now = NowMs();
  std::lock_guard<std::mutex> lock(mu_);
  return conn_->InTransaction(
      "BEGIN", "start an epoch of " + realm, [&]() -> Status {
        Result<Head> head = LockHead(key, "start an epoch");
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

Status PgRealmStore::Drop(std::string_view key) {
  const std::string what = "drop realm " + Quoted(key);
  std::lock_guard<std::mutex> lock(mu_);
  return conn_->InTransaction("BEGIN", what, [&]() -> Status {
    // Locks the row (if any) so a writer holding it finishes first.
    Result<std::optional<Head>> head = ReadHead(key, /*for_update=*/true);
    if (!head.ok()) return head.status();
    TESSERA_RETURN_IF_ERROR(DeleteHistory(key));
    TESSERA_RETURN_IF_ERROR(
        conn_->Run("DELETE FROM realm_alarms WHERE key = $1",
                   {PgParam::Text(key)}, "drop the alarms of " + Quoted(key)));
    return conn_->Run("DELETE FROM realms WHERE key = $1", {PgParam::Text(key)},
                      what);
  });
}

}  // namespace tessera::store
