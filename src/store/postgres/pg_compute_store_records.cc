// PgComputeStore's monitoring records: runs, usage, logs and their
// retention (the rest is in pg_compute_store.cc and
// pg_compute_store_state.cc).
#include <string>
#include <utility>
#include <vector>

#include "compute/compute_store_rules.h"
#include "store/postgres/pg_compute_rows.h"
#include "store/postgres/pg_compute_store.h"

namespace tessera::store {

using compute::LogFilter;
using compute::LogRecord;
using compute::RunFilter;
using compute::RunRecord;
using compute::UsageRow;
using pg::PgParam;
using pg::PgResult;

namespace {

std::string What(std::string_view action) {
  return "postgres compute store: " + std::string(action);
}

// Every row of `rows` through `read`.
template <typename T>
Result<std::vector<T>> ReadAll(const PgResult& rows,
                               Result<T> (*read)(const PgResult&, int)) {
  std::vector<T> out;
  out.reserve(static_cast<size_t>(rows.rows()));
  for (int i = 0; i < rows.rows(); ++i) {
    Result<T> row = read(rows, i);
    if (!row.ok()) return row.status();
    out.push_back(std::move(row).value());
  }
  return out;
}

}  // namespace

Status PgComputeStore::AddRuns(std::span<const RunRecord> runs) {
  if (runs.empty()) return Status::Ok();
  const std::string what = What("add compute runs");
  std::lock_guard<std::mutex> lock(mu_);
  return conn_->InTransaction("BEGIN", what, [&]() -> Status {
    for (const RunRecord& r : runs) {
      TESSERA_RETURN_IF_ERROR(conn_->Run(
          "INSERT INTO compute_runs(module_id, module_name, version_no, "
          "started_ms, source, entry, success, duration_us, fuel_used, "
          "data_reads, data_writes, egress_msgs, egress_bytes, "
          "error_message, circuit_action, flow_id) VALUES($1, $2, $3, $4, "
          "$5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)",
          {PgParam::Int(r.module_id), PgParam::Bytes(r.module_name),
           PgParam::Int(r.version_no), PgParam::Int(r.started_ms),
           PgParam::Bytes(compute::TriggerSourceName(r.source)),
           PgParam::Bytes(r.entry), PgParam::Int(r.success ? 1 : 0),
           PgParam::Int(r.duration_us), PgParam::Int(r.fuel_used),
           PgParam::Int(r.data_reads), PgParam::Int(r.data_writes),
           PgParam::Int(r.egress_msgs), PgParam::Int(r.egress_bytes),
           PgParam::Bytes(r.error_message), PgParam::Bytes(r.circuit_action),
           PgParam::Bytes(r.flow_id)},
          what));
    }
    return Status::Ok();
  });
}

Result<std::vector<RunRecord>> PgComputeStore::ListRuns(
    const RunFilter& filter) {
  // Only the parameters the statement names are sent (the server cannot
  // type one it does not see).
  std::vector<PgParam> params = {
      PgParam::Int(filter.since_ms),
      PgParam::Int(compute::ClampListLimit(filter.limit))};
  std::string sql = "SELECT " + std::string(pg::kRunColumns) +
                    " FROM compute_runs WHERE started_ms >= $1";
  if (filter.module_id.has_value()) {
    params.push_back(PgParam::Int(*filter.module_id));
    sql += " AND module_id = $" + std::to_string(params.size());
  }
  if (filter.success.has_value()) {
    params.push_back(PgParam::Int(*filter.success ? 1 : 0));
    sql += " AND success = $" + std::to_string(params.size());
  }
  if (filter.flow_id.has_value()) {
    params.push_back(PgParam::Bytes(*filter.flow_id));
    sql += " AND flow_id = $" + std::to_string(params.size());
  }
  sql += " ORDER BY started_ms DESC, id DESC LIMIT $2";
  std::lock_guard<std::mutex> lock(mu_);
  Result<PgResult> rows = conn_->Exec(sql, params, What("list compute runs"));
  if (!rows.ok()) return rows.status();
  return ReadAll(*rows, &pg::ReadRunRow);
}

Status PgComputeStore::AddUsage(std::span<const UsageRow> rows) {
  if (rows.empty()) return Status::Ok();
  const std::string what = What("add compute usage");
  std::lock_guard<std::mutex> lock(mu_);
  return conn_->InTransaction("BEGIN", what, [&]() -> Status {
    for (const UsageRow& u : rows) {
      TESSERA_RETURN_IF_ERROR(conn_->Run(
          "INSERT INTO compute_usage AS u(module_id, minute_ms, ticks, runs, "
          "failures, fuel_used, duration_us, cpu_us, compute_units, "
          "egress_msgs, egress_bytes) VALUES($1, $2, $3, $4, $5, $6, $7, $8, "
          "$9, $10, $11) ON CONFLICT (module_id, minute_ms) DO UPDATE SET "
          "ticks = u.ticks + EXCLUDED.ticks, runs = u.runs + EXCLUDED.runs, "
          "failures = u.failures + EXCLUDED.failures, "
          "fuel_used = u.fuel_used + EXCLUDED.fuel_used, "
          "duration_us = u.duration_us + EXCLUDED.duration_us, "
          "cpu_us = u.cpu_us + EXCLUDED.cpu_us, "
          "compute_units = u.compute_units + EXCLUDED.compute_units, "
          "egress_msgs = u.egress_msgs + EXCLUDED.egress_msgs, "
          "egress_bytes = u.egress_bytes + EXCLUDED.egress_bytes",
          {PgParam::Int(u.module_id),
           PgParam::Int(compute::UsageMinute(u.minute_ms)),
           PgParam::Int(u.ticks), PgParam::Int(u.runs),
           PgParam::Int(u.failures), PgParam::Int(u.fuel_used),
           PgParam::Int(u.duration_us), PgParam::Int(u.cpu_us),
           PgParam::Double(u.compute_units), PgParam::Int(u.egress_msgs),
           PgParam::Int(u.egress_bytes)},
          what));
    }
    return Status::Ok();
  });
}

Result<std::vector<UsageRow>> PgComputeStore::ListUsage(int64_t module_id,
                                                        int64_t since_ms) {
  const std::string what = What("list compute usage");
  const std::string select = "SELECT " + std::string(pg::kUsageColumns) +
                             " FROM compute_usage WHERE minute_ms >= $1";
  const std::string order = " ORDER BY minute_ms, module_id";
  std::lock_guard<std::mutex> lock(mu_);
  Result<PgResult> rows =
      module_id > 0
          ? conn_->Exec(select + " AND module_id = $2" + order,
                        {PgParam::Int(since_ms), PgParam::Int(module_id)}, what)
          : conn_->Exec(select + order, {PgParam::Int(since_ms)}, what);
  if (!rows.ok()) return rows.status();
  return ReadAll(*rows, &pg::ReadUsageRow);
}

Status PgComputeStore::AddLogs(std::span<const LogRecord> logs) {
  if (logs.empty()) return Status::Ok();
  const std::string what = What("add compute logs");
  std::lock_guard<std::mutex> lock(mu_);
  return conn_->InTransaction("BEGIN", what, [&]() -> Status {
    for (const LogRecord& l : logs) {
      TESSERA_RETURN_IF_ERROR(conn_->Run(
          "INSERT INTO compute_logs(module_id, ts_ms, level, message, "
          "source, flow_id) VALUES($1, $2, $3, $4, $5, $6)",
          {PgParam::Int(l.module_id), PgParam::Int(l.ts_ms),
           PgParam::Int(l.level), PgParam::Bytes(l.message),
           PgParam::Bytes(compute::TriggerSourceName(l.source)),
           PgParam::Bytes(l.flow_id)},
          what));
    }
    return Status::Ok();
  });
}

Result<std::vector<LogRecord>> PgComputeStore::ListLogs(
    const LogFilter& filter) {
  const std::string what = What("list compute logs");
  const std::string select = "SELECT " + std::string(pg::kLogColumns) +
                             " FROM compute_logs WHERE ts_ms >= $1";
  const std::string order = " ORDER BY ts_ms DESC, id DESC LIMIT $2";
  const int64_t limit = compute::ClampListLimit(filter.limit);
  std::lock_guard<std::mutex> lock(mu_);
  Result<PgResult> rows =
      filter.module_id.has_value()
          ? conn_->Exec(select + " AND module_id = $3" + order,
                        {PgParam::Int(filter.since_ms), PgParam::Int(limit),
                         PgParam::Int(*filter.module_id)},
                        what)
          : conn_->Exec(select + order,
                        {PgParam::Int(filter.since_ms), PgParam::Int(limit)},
                        what);
  if (!rows.ok()) return rows.status();
  return ReadAll(*rows, &pg::ReadLogRow);
}

Result<int64_t> PgComputeStore::Prune(int64_t before_ms,
                                      int64_t usage_before_ms) {
  const std::string what = What("prune compute records");
  std::lock_guard<std::mutex> lock(mu_);
  int64_t removed = 0;
  Status status = conn_->InTransaction("BEGIN", what, [&]() -> Status {
    removed = 0;
    const std::pair<const char*, int64_t> prunes[] = {
        {"DELETE FROM compute_runs WHERE started_ms < $1", before_ms},
        {"DELETE FROM compute_logs WHERE ts_ms < $1", before_ms},
        {"DELETE FROM compute_usage WHERE minute_ms < $1", usage_before_ms}};
    for (const auto& [sql, cutoff] : prunes) {
      Result<PgResult> done = conn_->Exec(sql, {PgParam::Int(cutoff)}, what);
      if (!done.ok()) return done.status();
      removed += done->affected();
    }
    return Status::Ok();
  });
  if (!status.ok()) return status;
  return removed;
}

}  // namespace tessera::store
