// PgStore: the transfer journal, each write one transaction under the
// journal's table lock (pg_store.h).
#include <utility>

#include "store/postgres/pg_store.h"

namespace tessera::store {

using pg::PgParam;
using pg::PgResult;
using shard::TransferAdvance;
using shard::TransferRecord;
using shard::TransferStep;

namespace {

std::string Quoted(std::string_view id) { return "'" + std::string(id) + "'"; }

constexpr int64_t kOutStep = static_cast<int64_t>(TransferStep::kOut);

Status UnknownStep(std::string_view what, std::string_view id, int64_t step) {
  return IoError("postgres store: " + std::string(what) + ": transfer " +
                 Quoted(id) + " has an unknown step " + std::to_string(step));
}

}  // namespace

Status PgStore::InJournalTransaction(std::string_view what,
                                     const std::function<Status()>& body) {
  return conn_->InTransaction("BEGIN", what, [&]() -> Status {
    TESSERA_RETURN_IF_ERROR(conn_->Run(
        "LOCK TABLE transfers IN SHARE ROW EXCLUSIVE MODE", {}, what));
    return body();
  });
}

Status PgStore::BeginTransfers(std::span<const TransferRecord> records,
                               std::string_view source_shard,
                               std::optional<std::string_view> source_state) {
  const int64_t now = NowMs();
  std::lock_guard<std::mutex> lock(mu_);
  return InJournalTransaction(
      "postgres store: begin transfers from shard " + Quoted(source_shard),
      [&]() -> Status {
        for (const TransferRecord& r : records) {
          TESSERA_RETURN_IF_ERROR(BeginTransferLocked(r, now));
        }
        if (!source_state.has_value()) return Status::Ok();
        return SaveLocked(source_shard, *source_state, now);
      });
}

// The rows inserted before it in the same transaction take part in the
// checks (a duplicate within the batch).
Status PgStore::BeginTransferLocked(const TransferRecord& record,
                                    int64_t now_ms) {
  const std::string what =
      "postgres store: begin transfer " + Quoted(record.id);
  Result<PgResult> found = conn_->Exec(
      "SELECT (SELECT count(*) FROM transfers WHERE id = $1), "
      "(SELECT id FROM transfers WHERE from_shard = $2 AND subscriber = $3 "
      "AND step = $4 LIMIT 1)",
      {PgParam::Bytes(record.id), PgParam::Bytes(record.from_shard),
       PgParam::Bytes(record.subscriber), PgParam::Int(kOutStep)},
      what);
  if (!found.ok()) return found.status();
  if (found->Text(0, 0) != "0") return shard::TransferIdExists(record.id);
  if (!found->IsNull(0, 1)) {
    Result<std::string> out_id = found->Bytes(0, 1);
    if (!out_id.ok()) return out_id.status();
    return shard::AlreadyMovingOut(record, *out_id);
  }
  return conn_->Run(
      "INSERT INTO transfers(id, from_shard, to_shard, subscriber, claims, "
      "state, step, created_ms, updated_ms) "
      "VALUES($1, $2, $3, $4, $5, $6, $7, $8, $9)",
      {PgParam::Bytes(record.id), PgParam::Bytes(record.from_shard),
       PgParam::Bytes(record.to_shard), PgParam::Bytes(record.subscriber),
       PgParam::Bytes(record.claims_json), PgParam::Bytes(record.state),
       PgParam::Int(kOutStep),
       PgParam::Int(record.created_unix_ms != 0 ? record.created_unix_ms
                                                : now_ms),
       PgParam::Int(record.updated_unix_ms != 0 ? record.updated_unix_ms
                                                : now_ms)},
      what);
}

Status PgStore::AdvanceTransfers(std::span<const TransferAdvance> steps,
                                 std::string_view shard_id,
                                 std::optional<std::string_view> state) {
  for (const TransferAdvance& a : steps) {
    TESSERA_RETURN_IF_ERROR(shard::CheckTransferAdvance(a));
  }
  const int64_t now = NowMs();
  std::lock_guard<std::mutex> lock(mu_);
  return InJournalTransaction(
      "postgres store: advance transfers of shard " + Quoted(shard_id),
      [&]() -> Status {
        for (const TransferAdvance& a : steps) {
          TESSERA_RETURN_IF_ERROR(AdvanceTransferLocked(a, now));
        }
        if (!state.has_value()) return Status::Ok();
        return SaveLocked(shard_id, *state, now);
      });
}

Status PgStore::AdvanceTransferLocked(const TransferAdvance& advance,
                                      int64_t now_ms) {
  const std::string what =
      "postgres store: advance transfer " + Quoted(advance.id);
  Result<PgResult> done = conn_->Exec(
      "UPDATE transfers SET step = $3, updated_ms = $4 "
      "WHERE id = $1 AND step = $2",
      {PgParam::Bytes(advance.id),
       PgParam::Int(static_cast<int64_t>(advance.from)),
       PgParam::Int(static_cast<int64_t>(advance.to)), PgParam::Int(now_ms)},
      what);
  if (!done.ok()) return done.status();
  if (done->affected() == 1) return Status::Ok();
  // Not at `from`: say why.
  Result<PgResult> row = conn_->Exec("SELECT step FROM transfers WHERE id = $1",
                                     {PgParam::Bytes(advance.id)}, what);
  if (!row.ok()) return row.status();
  if (row->rows() == 0) return shard::NoTransfer(advance.id);
  Result<int64_t> step = row->Int64(0, 0);
  if (!step.ok()) return step.status();
  std::optional<TransferStep> actual = shard::TransferStepFromInt(*step);
  if (!actual.has_value()) {
    return UnknownStep("advance transfers", advance.id, *step);
  }
  return shard::TransferNotAt(advance, *actual);
}

Result<std::vector<TransferRecord>> PgStore::ListTransfers() {
  const char* what = "postgres store: list transfers";
  std::lock_guard<std::mutex> lock(mu_);
  Result<PgResult> rows = conn_->Exec(
      "SELECT id, from_shard, to_shard, subscriber, claims, state, step, "
      "created_ms, updated_ms FROM transfers ORDER BY created_ms, seq",
      {}, what);
  if (!rows.ok()) return rows.status();
  std::vector<TransferRecord> records;
  records.reserve(static_cast<size_t>(rows->rows()));
  for (int i = 0; i < rows->rows(); ++i) {
    TransferRecord r;
    std::string* bytes[] = {&r.id,         &r.from_shard,  &r.to_shard,
                            &r.subscriber, &r.claims_json, &r.state};
    for (int col = 0; col < 6; ++col) {
      Result<std::string> value = rows->Bytes(i, col);
      if (!value.ok()) return value.status();
      *bytes[col] = std::move(value).value();
    }
    int64_t numbers[3] = {0, 0, 0};
    for (int col = 6; col < 9; ++col) {
      Result<int64_t> value = rows->Int64(i, col);
      if (!value.ok()) return value.status();
      numbers[col - 6] = *value;
    }
    std::optional<TransferStep> step = shard::TransferStepFromInt(numbers[0]);
    if (!step.has_value())
      return UnknownStep("list transfers", r.id, numbers[0]);
    r.step = *step;
    r.created_unix_ms = numbers[1];
    r.updated_unix_ms = numbers[2];
    records.push_back(std::move(r));
  }
  return records;
}

Status PgStore::DeleteTransfers(std::span<const std::string> ids) {
  std::lock_guard<std::mutex> lock(mu_);
  return InJournalTransaction(
      "postgres store: delete transfers", [&]() -> Status {
        for (const std::string& id : ids) {
          TESSERA_RETURN_IF_ERROR(conn_->Run(
              "DELETE FROM transfers WHERE id = $1", {PgParam::Bytes(id)},
              "postgres store: delete transfer " + Quoted(id)));
        }
        return Status::Ok();
      });
}

}  // namespace tessera::store
