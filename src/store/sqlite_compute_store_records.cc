// SqliteComputeStore's monitoring records: runs, usage, logs and their
// retention (the rest is in sqlite_compute_store.cc).
#include <utility>

#include "compute/compute_store_rules.h"
#include "store/sqlite_compute_sql.h"
#include "store/sqlite_compute_store.h"

namespace tessera::store {

using compute::LogFilter;
using compute::LogRecord;
using compute::RunFilter;
using compute::RunRecord;
using compute::UsageRow;

Status SqliteComputeStore::AddRuns(std::span<const RunRecord> runs) {
  if (runs.empty()) return Status::Ok();
  std::lock_guard<std::mutex> lock(mu_);
  return db_->InTransaction("add compute runs", [&]() -> Status {
    SqliteStatement& st = *stmts_->insert_run;
    for (const RunRecord& r : runs) {
      ScopedReset reset(st);
      TESSERA_RETURN_IF_ERROR(st.BindInt64(1, r.module_id));
      TESSERA_RETURN_IF_ERROR(st.BindText(2, r.module_name));
      TESSERA_RETURN_IF_ERROR(st.BindInt64(3, r.version_no));
      TESSERA_RETURN_IF_ERROR(st.BindInt64(4, r.started_ms));
      TESSERA_RETURN_IF_ERROR(
          st.BindText(5, compute::TriggerSourceName(r.source)));
      TESSERA_RETURN_IF_ERROR(st.BindText(6, r.entry));
      TESSERA_RETURN_IF_ERROR(st.BindInt64(7, r.success ? 1 : 0));
      TESSERA_RETURN_IF_ERROR(st.BindInt64(8, r.duration_us));
      TESSERA_RETURN_IF_ERROR(st.BindInt64(9, r.fuel_used));
      TESSERA_RETURN_IF_ERROR(st.BindInt64(10, r.data_reads));
      TESSERA_RETURN_IF_ERROR(st.BindInt64(11, r.data_writes));
      TESSERA_RETURN_IF_ERROR(st.BindInt64(12, r.egress_msgs));
      TESSERA_RETURN_IF_ERROR(st.BindInt64(13, r.egress_bytes));
      TESSERA_RETURN_IF_ERROR(st.BindBlob(14, r.error_message));
      TESSERA_RETURN_IF_ERROR(st.BindText(15, r.circuit_action));
      TESSERA_RETURN_IF_ERROR(st.BindText(16, r.flow_id));
      TESSERA_RETURN_IF_ERROR(st.Run("add compute run"));
    }
    return Status::Ok();
  });
}

Result<std::vector<RunRecord>> SqliteComputeStore::ListRuns(
    const RunFilter& filter) {
  const int mask = (filter.module_id.has_value() ? 1 : 0) |
                   (filter.success.has_value() ? 2 : 0) |
                   (filter.flow_id.has_value() ? 4 : 0);
  std::lock_guard<std::mutex> lock(mu_);
  Result<SqliteStatement*> stmt = ListRunsStatement(*db_, *stmts_, mask);
  if (!stmt.ok()) return stmt.status();
  SqliteStatement& st = **stmt;
  ScopedReset reset(st);
  if (filter.module_id.has_value()) {
    TESSERA_RETURN_IF_ERROR(st.BindInt64(1, *filter.module_id));
  }
  if (filter.success.has_value()) {
    TESSERA_RETURN_IF_ERROR(st.BindInt64(2, *filter.success ? 1 : 0));
  }
  if (filter.flow_id.has_value()) {
    TESSERA_RETURN_IF_ERROR(st.BindText(3, *filter.flow_id));
  }
  TESSERA_RETURN_IF_ERROR(st.BindInt64(4, filter.since_ms));
  TESSERA_RETURN_IF_ERROR(
      st.BindInt64(5, compute::ClampListLimit(filter.limit)));
  std::vector<RunRecord> out;
  while (true) {
    Result<bool> row = st.Step("list compute runs");
    if (!row.ok()) return row.status();
    if (!*row) return out;
    Result<RunRecord> r = ReadRun(st, path_);
    if (!r.ok()) return r.status();
    out.push_back(std::move(r).value());
  }
}

Status SqliteComputeStore::AddUsage(std::span<const UsageRow> rows) {
  if (rows.empty()) return Status::Ok();
  std::lock_guard<std::mutex> lock(mu_);
  return db_->InTransaction("add compute usage", [&]() -> Status {
    SqliteStatement& st = *stmts_->add_usage;
    for (const UsageRow& u : rows) {
      ScopedReset reset(st);
      TESSERA_RETURN_IF_ERROR(st.BindInt64(1, u.module_id));
      TESSERA_RETURN_IF_ERROR(
          st.BindInt64(2, compute::UsageMinute(u.minute_ms)));
      TESSERA_RETURN_IF_ERROR(st.BindInt64(3, u.ticks));
      TESSERA_RETURN_IF_ERROR(st.BindInt64(4, u.runs));
      TESSERA_RETURN_IF_ERROR(st.BindInt64(5, u.failures));
      TESSERA_RETURN_IF_ERROR(st.BindInt64(6, u.fuel_used));
      TESSERA_RETURN_IF_ERROR(st.BindInt64(7, u.duration_us));
      TESSERA_RETURN_IF_ERROR(st.BindInt64(8, u.cpu_us));
      TESSERA_RETURN_IF_ERROR(st.BindDouble(9, u.compute_units));
      TESSERA_RETURN_IF_ERROR(st.BindInt64(10, u.egress_msgs));
      TESSERA_RETURN_IF_ERROR(st.BindInt64(11, u.egress_bytes));
      TESSERA_RETURN_IF_ERROR(st.Run("add compute usage"));
    }
    return Status::Ok();
  });
}

Result<std::vector<UsageRow>> SqliteComputeStore::ListUsage(int64_t module_id,
                                                            int64_t since_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  const bool one = module_id > 0;
  SqliteStatement& st = one ? *stmts_->list_usage : *stmts_->list_all_usage;
  ScopedReset reset(st);
  if (one) {
    TESSERA_RETURN_IF_ERROR(st.BindInt64(1, module_id));
    TESSERA_RETURN_IF_ERROR(st.BindInt64(2, since_ms));
  } else {
    TESSERA_RETURN_IF_ERROR(st.BindInt64(1, since_ms));
  }
  std::vector<UsageRow> out;
  while (true) {
    Result<bool> row = st.Step("list compute usage");
    if (!row.ok()) return row.status();
    if (!*row) return out;
    out.push_back(ReadUsage(st));
  }
}

Status SqliteComputeStore::AddLogs(std::span<const LogRecord> logs) {
  if (logs.empty()) return Status::Ok();
  std::lock_guard<std::mutex> lock(mu_);
  return db_->InTransaction("add compute logs", [&]() -> Status {
    SqliteStatement& st = *stmts_->insert_log;
    for (const LogRecord& l : logs) {
      ScopedReset reset(st);
      TESSERA_RETURN_IF_ERROR(st.BindInt64(1, l.module_id));
      TESSERA_RETURN_IF_ERROR(st.BindInt64(2, l.ts_ms));
      TESSERA_RETURN_IF_ERROR(st.BindInt64(3, l.level));
      TESSERA_RETURN_IF_ERROR(st.BindBlob(4, l.message));
      TESSERA_RETURN_IF_ERROR(
          st.BindText(5, compute::TriggerSourceName(l.source)));
      TESSERA_RETURN_IF_ERROR(st.BindText(6, l.flow_id));
      TESSERA_RETURN_IF_ERROR(st.Run("add compute log"));
    }
    return Status::Ok();
  });
}

Result<std::vector<LogRecord>> SqliteComputeStore::ListLogs(
    const LogFilter& filter) {
  std::lock_guard<std::mutex> lock(mu_);
  const bool one = filter.module_id.has_value();
  SqliteStatement& st = one ? *stmts_->list_logs : *stmts_->list_all_logs;
  ScopedReset reset(st);
  const int64_t limit = compute::ClampListLimit(filter.limit);
  if (one) {
    TESSERA_RETURN_IF_ERROR(st.BindInt64(1, *filter.module_id));
    TESSERA_RETURN_IF_ERROR(st.BindInt64(2, filter.since_ms));
    TESSERA_RETURN_IF_ERROR(st.BindInt64(3, limit));
  } else {
    TESSERA_RETURN_IF_ERROR(st.BindInt64(1, filter.since_ms));
    TESSERA_RETURN_IF_ERROR(st.BindInt64(2, limit));
  }
  std::vector<LogRecord> out;
  while (true) {
    Result<bool> row = st.Step("list compute logs");
    if (!row.ok()) return row.status();
    if (!*row) return out;
    Result<LogRecord> l = ReadLog(st, path_);
    if (!l.ok()) return l.status();
    out.push_back(std::move(l).value());
  }
}

Result<int64_t> SqliteComputeStore::Prune(int64_t before_ms,
                                          int64_t usage_before_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  int64_t removed = 0;
  Status status = db_->InTransaction("prune compute records", [&]() -> Status {
    removed = 0;
    const std::pair<SqliteStatement*, int64_t> prunes[] = {
        {stmts_->prune_runs.get(), before_ms},
        {stmts_->prune_logs.get(), before_ms},
        {stmts_->prune_usage.get(), usage_before_ms}};
    for (const auto& [st, cutoff] : prunes) {
      ScopedReset reset(*st);
      TESSERA_RETURN_IF_ERROR(st->BindInt64(1, cutoff));
      TESSERA_RETURN_IF_ERROR(st->Run("prune compute records"));
      removed += db_->changes();
    }
    return Status::Ok();
  });
  if (!status.ok()) return status;
  return removed;
}

}  // namespace tessera::store
