#include "store/postgres/pg_data_txn.h"

#include <utility>

#include "common/fault_point.h"
#include "data/schema.h"
#include "store/postgres/pg_data_sql.h"

namespace tessera::store {

using data::ChangeEvent;
using data::EntityType;
using data::Row;
using pg::PgParam;
using pg::PgResult;

namespace {

constexpr size_t kMaxCallKeyBytes = 128;  // abi::kMaxCallKeyBytes

Status Ended() {
  return Status(StatusCode::kFailedPrecondition,
                "data store: the transaction has ended");
}

// An id no row can have (Insert stores CheckId's ids only), and that
// PostgreSQL's text might refuse.
bool NoRowHas(std::string_view id) { return !data::CheckId(id).ok(); }

}  // namespace

PgDataTxn::PgDataTxn(Parts parts)
    : parts_(std::move(parts)), conn_(*parts_.conn) {}

PgDataTxn::~PgDataTxn() { Rollback(); }

Status PgDataTxn::CheckOpen() const {
  if (ended_) return Ended();
  if (broken_) {
    return IoError(
        "data store: the transaction was rolled back after a storage error");
  }
  if (scope_failed_) {
    return IoError(
        "data store: a statement of this scope failed; roll the scope back");
  }
  return Status::Ok();
}

Status PgDataTxn::CheckWrite() const {
  TESSERA_RETURN_IF_ERROR(CheckOpen());
  if (parts_.mode != data::TxnMode::kWrite) {
    return Status(StatusCode::kFailedPrecondition,
                  "data store: a read transaction cannot write");
  }
  return Status::Ok();
}

Result<PgDataTxn::Target> PgDataTxn::Find(std::string_view type) const {
  const EntityType* t = parts_.schema->Find(type);
  if (t == nullptr) {
    return data::DataError(data::codes::kUnknownType,
                           "no entity type " + QuotedName(type));
  }
  Result<std::string> table = pg::TableName(*t);
  if (!table.ok()) return table.status();
  return Target{t, *table};
}

Result<PgResult> PgDataTxn::Exec(const std::string& sql,
                                 std::span<const PgParam> params,
                                 std::string_view what) {
  Result<PgResult> result = conn_.Exec(sql, params, what);
  // kInvalidArgument: refused before anything was sent.
  if (!result.ok() && result.status().code() != StatusCode::kInvalidArgument) {
    if (scopes_.empty() || conn_.broken()) {
      broken_ = true;
    } else {
      scope_failed_ = true;
    }
  }
  return result;
}

Result<std::optional<RowValues>> PgDataTxn::Read(const Target& t,
                                                 std::string_view id) {
  if (NoRowHas(id)) return std::optional<RowValues>();
  const PgParam params[] = {PgParam::Text(id)};
  Result<PgResult> rows = Exec("SELECT " + SelectList(pg::kPgDialect, *t.type) +
                                   " FROM " + t.table + " WHERE id = $1",
                               params, "read a row of " + t.type->name);
  if (!rows.ok()) return rows.status();
  if (rows->rows() == 0) return std::optional<RowValues>();
  Result<RowValues> row = pg::ReadRow(*t.type, *rows, 0);
  if (!row.ok()) return row.status();
  return std::optional<RowValues>(std::move(row).value());
}

Result<std::optional<Row>> PgDataTxn::Get(std::string_view type,
                                          std::string_view id) {
  TESSERA_RETURN_IF_ERROR(CheckOpen());
  ++reads_;
  Result<Target> t = Find(type);
  if (!t.ok()) return t.status();
  Result<std::optional<RowValues>> row = Read(*t, id);
  if (!row.ok()) return row.status();
  if (!row->has_value()) return std::optional<Row>();
  return std::optional<Row>(std::move((*row)->row));
}

Result<std::optional<Row>> PgDataTxn::Lookup(std::string_view type,
                                             std::string_view field,
                                             std::string_view value_json) {
  TESSERA_RETURN_IF_ERROR(CheckOpen());
  ++reads_;
  Result<Target> t = Find(type);
  if (!t.ok()) return t.status();
  Result<std::optional<SqlValue>> v = LookupValue(*t->type, field, value_json);
  if (!v.ok()) return v.status();
  if (!v->has_value()) return std::optional<Row>();  // null equals no row
  if (field == "id" && NoRowHas((*v)->text)) return std::optional<Row>();
  const PgParam params[] = {pg::ParamOf(**v)};
  Result<PgResult> rows = Exec(
      "SELECT " + SelectList(pg::kPgDialect, *t->type) + " FROM " + t->table +
          " WHERE " + pg::ColumnName(field) + " = $1 ORDER BY id LIMIT 1",
      params, "look up a row of " + t->type->name);
  if (!rows.ok()) return rows.status();
  if (rows->rows() == 0) return std::optional<Row>();
  Result<RowValues> row = pg::ReadRow(*t->type, *rows, 0);
  if (!row.ok()) return row.status();
  return std::optional<Row>(std::move(row->row));
}

Result<data::Page> PgDataTxn::List(std::string_view type,
                                   const data::Filter& filter,
                                   std::string_view cursor, int64_t limit) {
  TESSERA_RETURN_IF_ERROR(CheckOpen());
  ++reads_;
  Result<Target> t = Find(type);
  if (!t.ok()) return t.status();
  if (limit < 1 || limit > data::kMaxPageLimit) {
    return data::DataError(data::codes::kBadFilter,
                           "limit " + std::to_string(limit) + " is not in 1.." +
                               std::to_string(data::kMaxPageLimit));
  }
  Result<CompiledFilter> where =
      CompileFilter(pg::kPgDialect, *t->type, filter, 3);
  if (!where.ok()) return where.status();
  const std::string after = pg::CursorText(cursor);
  std::vector<PgParam> params = {PgParam::Text(after), PgParam::Int(limit + 1)};
  for (const SqlValue& v : where->params) params.push_back(pg::ParamOf(v));
  Result<PgResult> rows = Exec(
      "SELECT " + SelectList(pg::kPgDialect, *t->type) + " FROM " + t->table +
          " WHERE id > $1" + where->sql + " ORDER BY id LIMIT $2",
      params, "list rows of " + t->type->name);
  if (!rows.ok()) return rows.status();
  data::Page page;
  for (int i = 0; i < rows->rows(); ++i) {
    Result<RowValues> row = pg::ReadRow(*t->type, *rows, i);
    if (!row.ok()) return row.status();
    page.rows.push_back(std::move(row->row));
  }
  if (static_cast<int64_t>(page.rows.size()) > limit) {
    page.rows.pop_back();
    page.next_cursor = page.rows.back().id;
  }
  return page;
}

Result<int64_t> PgDataTxn::Count(std::string_view type,
                                 const data::Filter& filter) {
  TESSERA_RETURN_IF_ERROR(CheckOpen());
  ++reads_;
  Result<Target> t = Find(type);
  if (!t.ok()) return t.status();
  Result<CompiledFilter> where =
      CompileFilter(pg::kPgDialect, *t->type, filter, 1);
  if (!where.ok()) return where.status();
  std::vector<PgParam> params;
  for (const SqlValue& v : where->params) params.push_back(pg::ParamOf(v));
  Result<PgResult> rows =
      Exec("SELECT count(*) FROM " + t->table + " WHERE true" + where->sql,
           params, "count rows of " + t->type->name);
  if (!rows.ok()) return rows.status();
  return rows->rows() > 0 ? rows->Int64(0, 0) : Result<int64_t>(0);
}

Result<std::string> PgDataTxn::TakenUniqueField(
    const Target& t, const std::vector<SqlValue>& values,
    std::span<const size_t> fields, std::string_view id) {
  for (size_t i : fields) {
    const data::FieldSpec& f = t.type->fields[i];
    const data::IndexSpec* index = t.type->FindIndex(f.name);
    if (index == nullptr || !index->unique ||
        values[i].kind == SqlValue::Kind::kNull) {
      continue;
    }
    const PgParam params[] = {pg::ParamOf(values[i]), PgParam::Text(id)};
    Result<PgResult> rows =
        Exec("SELECT 1 FROM " + t.table + " WHERE " + pg::ColumnName(f.name) +
                 " = $1 AND id <> $2 LIMIT 1",
             params, "check a unique value of " + t.type->name);
    if (!rows.ok()) return rows.status();
    if (rows->rows() > 0) return f.name;
  }
  return std::string();
}

Result<Row> PgDataTxn::Insert(std::string_view type, std::string_view id,
                              std::string_view fields_json,
                              std::string_view origin) {
  TESSERA_RETURN_IF_ERROR(CheckWrite());
  ++writes_;
  Result<Target> t = Find(type);
  if (!t.ok()) return t.status();
  const int64_t now = parts_.clock->UnixNowMs();
  std::string row_id(id);
  if (row_id.empty()) {
    row_id = data::NewRowId(now);
  } else {
    TESSERA_RETURN_IF_ERROR(data::CheckId(row_id));
  }
  Result<std::vector<SqlValue>> values = InsertValues(*t->type, fields_json);
  if (!values.ok()) return values.status();
  std::string columns = "id, created_ms, updated_ms, version";
  std::string placeholders = "$1, $2, $2, 1";
  std::vector<PgParam> params = {PgParam::Text(row_id), PgParam::Int(now)};
  for (size_t i = 0; i < t->type->fields.size(); ++i) {
    columns += ", " + pg::ColumnName(t->type->fields[i].name);
    placeholders += ", $" + std::to_string(3 + i);
    params.push_back(pg::ParamOf((*values)[i]));
  }
  // ON CONFLICT DO NOTHING: a taken id or unique value inserts nothing
  // instead of aborting the transaction (see pg_data_store.h).
  Result<PgResult> done =
      Exec("INSERT INTO " + t->table + "(" + columns + ") VALUES(" +
               placeholders + ") ON CONFLICT DO NOTHING",
           params, "insert a row of " + t->type->name);
  if (!done.ok()) return done.status();
  if (done->affected() == 0) {
    Result<std::optional<RowValues>> existing = Read(*t, row_id);
    if (!existing.ok()) return existing.status();
    if (existing->has_value()) {
      return data::DataError(
          data::codes::kRowExists,
          t->type->name + " " + QuotedName(row_id) + " already exists");
    }
    std::vector<size_t> all(t->type->fields.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = i;
    Result<std::string> field = TakenUniqueField(*t, *values, all, row_id);
    if (!field.ok()) return field.status();
    return data::DataError(
        data::codes::kUniqueViolation,
        t->type->name + "." + (field->empty() ? "?" : *field) +
            ": another row has this value (the index is unique)");
  }
  Row row;
  row.type = t->type->name;
  row.id = row_id;
  row.created_ms = row.updated_ms = now;
  row.version = 1;
  row.fields_json = FieldsJson(*t->type, *values);
  changes_.push_back(CreatedEvent(*t->type, row, origin));
  return row;
}

Result<Row> PgDataTxn::Update(std::string_view type, std::string_view id,
                              std::string_view set_json,
                              std::string_view origin) {
  TESSERA_RETURN_IF_ERROR(CheckWrite());
  ++writes_;
  Result<Target> t = Find(type);
  if (!t.ok()) return t.status();
  // Checked before the read, as the store checks every write's input.
  TESSERA_RETURN_IF_ERROR(
      data::CheckFields(*t->type, set_json, /*insert=*/false).status());
  Result<std::optional<RowValues>> current = Read(*t, id);
  if (!current.ok()) return current.status();
  if (!current->has_value()) {
    return data::DataError(data::codes::kRowNotFound,
                           t->type->name + " " + QuotedName(id) + " not found");
  }
  RowValues& row = **current;
  Result<UpdatePlan> plan = PlanUpdate(*t->type, row.values, set_json);
  if (!plan.ok()) return plan.status();
  if (plan->changed.empty()) return std::move(row.row);  // nothing to record
  Result<std::string> taken =
      TakenUniqueField(*t, plan->after, plan->fields, id);
  if (!taken.ok()) return taken.status();
  if (!taken->empty()) {
    return data::DataError(
        data::codes::kUniqueViolation,
        t->type->name + "." + *taken +
            ": another row has this value (the index is unique)");
  }

  const int64_t now = parts_.clock->UnixNowMs();
  std::string assignments;
  std::vector<PgParam> params = {PgParam::Text(id), PgParam::Int(now)};
  for (size_t k = 0; k < plan->fields.size(); ++k) {
    assignments += pg::ColumnName(t->type->fields[plan->fields[k]].name) +
                   " = $" + std::to_string(3 + k) + ", ";
    params.push_back(pg::ParamOf(plan->after[plan->fields[k]]));
  }
  Result<PgResult> done =
      Exec("UPDATE " + t->table + " SET " + assignments +
               "updated_ms = $2, version = version + 1 WHERE id = $1",
           params, "update a row of " + t->type->name);
  if (!done.ok()) return done.status();

  row.row.updated_ms = now;
  row.row.version += 1;
  row.row.fields_json = FieldsJson(*t->type, plan->after);
  changes_.push_back(
      UpdatedEvent(row.row, std::move(plan).value().changed, origin));
  return std::move(row.row);
}

Result<bool> PgDataTxn::Delete(std::string_view type, std::string_view id,
                               std::string_view origin) {
  TESSERA_RETURN_IF_ERROR(CheckWrite());
  ++writes_;
  Result<Target> t = Find(type);
  if (!t.ok()) return t.status();
  Result<std::optional<RowValues>> current = Read(*t, id);
  if (!current.ok()) return current.status();
  if (!current->has_value()) return false;
  const PgParam params[] = {PgParam::Text(id)};
  Result<PgResult> done = Exec("DELETE FROM " + t->table + " WHERE id = $1",
                               params, "delete a row of " + t->type->name);
  if (!done.ok()) return done.status();
  changes_.push_back(DeletedEvent(*t->type, (*current)->row,
                                  parts_.clock->UnixNowMs(), origin));
  return true;
}

Result<std::optional<data::StoredCall>> PgDataTxn::GetCall(
    std::string_view key) {
  TESSERA_RETURN_IF_ERROR(CheckOpen());
  ++reads_;
  const PgParam params[] = {PgParam::Bytes(key)};
  Result<PgResult> rows = Exec(
      "SELECT function, args_hash, ok, result_json, error, created_ms "
      "FROM data_calls WHERE key = $1",
      params, "read a keyed call");
  if (!rows.ok()) return rows.status();
  if (rows->rows() == 0) return std::optional<data::StoredCall>();
  data::StoredCall call;
  call.key = std::string(key);
  std::string* texts[] = {&call.function, &call.args_hash, nullptr,
                          &call.result_json, &call.error};
  for (int col = 0; col < 5; ++col) {
    if (texts[col] == nullptr) continue;
    Result<std::string> bytes = rows->Bytes(0, col);
    if (!bytes.ok()) return bytes.status();
    *texts[col] = std::move(bytes).value();
  }
  call.ok = rows->Text(0, 2) == "t";
  Result<int64_t> created = rows->Int64(0, 5);
  if (!created.ok()) return created.status();
  call.created_ms = *created;
  return std::optional<data::StoredCall>(std::move(call));
}

Status PgDataTxn::PutCall(const data::StoredCall& call) {
  TESSERA_RETURN_IF_ERROR(CheckWrite());
  ++writes_;
  if (call.key.empty() || call.key.size() > kMaxCallKeyBytes) {
    return InvalidArgument("data store: a call key is 1.." +
                           std::to_string(kMaxCallKeyBytes) + " bytes");
  }
  const PgParam params[] = {
      PgParam::Bytes(call.key),
      PgParam::Bytes(call.function),
      PgParam::Bytes(call.args_hash),
      PgParam::Text(call.ok ? "true" : "false"),
      PgParam::Bytes(call.result_json),
      PgParam::Bytes(call.error),
      PgParam::Int(call.created_ms != 0 ? call.created_ms
                                        : parts_.clock->UnixNowMs())};
  Result<PgResult> done = Exec(
      "INSERT INTO data_calls(key, function, args_hash, ok, result_json, "
      "error, created_ms) VALUES($1, $2, $3, $4, $5, $6, $7) "
      "ON CONFLICT (key) DO NOTHING",
      params, "store a keyed call");
  if (!done.ok()) return done.status();
  if (done->affected() == 0) {
    return Status(StatusCode::kAlreadyExists, "data store: keyed call " +
                                                  QuotedName(call.key) +
                                                  " is already stored");
  }
  return Status::Ok();
}

Status PgDataTxn::Savepoint() {
  TESSERA_RETURN_IF_ERROR(CheckWrite());
  Result<PgResult> done = Exec(
      "SAVEPOINT s" + std::to_string(scopes_.size() + 1), {}, "open a scope");
  if (!done.ok()) return done.status();
  scopes_.push_back(changes_.size());
  return Status::Ok();
}

Status PgDataTxn::Release() {
  TESSERA_RETURN_IF_ERROR(CheckWrite());
  if (scopes_.empty()) {
    return Status(StatusCode::kFailedPrecondition,
                  "data store: Release without an open scope");
  }
  Result<PgResult> done =
      Exec("RELEASE SAVEPOINT s" + std::to_string(scopes_.size()), {},
           "release a scope");
  if (!done.ok()) return done.status();
  scopes_.pop_back();
  return Status::Ok();
}

Status PgDataTxn::RollbackTo() {
  // A failed statement of the scope is what this recovers from.
  if (ended_) return Ended();
  if (broken_) return CheckOpen();
  if (parts_.mode != data::TxnMode::kWrite) return CheckWrite();
  if (scopes_.empty()) {
    return Status(StatusCode::kFailedPrecondition,
                  "data store: RollbackTo without an open scope");
  }
  const std::string name = "s" + std::to_string(scopes_.size());
  Status st = conn_.RunScript(
      "ROLLBACK TO SAVEPOINT " + name + "; RELEASE SAVEPOINT " + name,
      "roll back a scope");
  if (!st.ok()) {
    broken_ = true;  // the scope's work may be half undone: trust nothing
    return st;
  }
  scope_failed_ = false;
  changes_.resize(scopes_.back());
  scopes_.pop_back();
  return Status::Ok();
}

Status PgDataTxn::RecordChanges(std::vector<ChangeEvent>& events) {
  for (ChangeEvent& e : events) {
    const std::string fields_text = ChangedFieldsJson(e.fields);
    const PgParam params[] = {
        PgParam::Int(e.ts_ms),      PgParam::Text(data::ChangeOpName(e.op)),
        PgParam::Text(e.type),      PgParam::Text(e.id),
        PgParam::Bytes(e.row_json), PgParam::Bytes(fields_text),
        PgParam::Bytes(e.origin)};
    Result<PgResult> row = Exec(
        "INSERT INTO data_changes(ts_ms, op, type, row_id, row_json, "
        "fields_json, origin) VALUES($1, $2, $3, $4, $5, $6, $7) "
        "RETURNING seq",
        params, "record a data change");
    if (!row.ok()) return row.status();
    if (row->rows() != 1) return Internal("data store: no seq for a change");
    Result<int64_t> seq = row->Int64(0, 0);
    if (!seq.ok()) return seq.status();
    e.seq = *seq;
  }
  return Status::Ok();
}

Result<std::vector<ChangeEvent>> PgDataTxn::Commit() {
  TESSERA_RETURN_IF_ERROR(CheckOpen());
  if (parts_.mode == data::TxnMode::kRead) {
    Status st = conn_.CommitTransaction("end a data read");
    Finish(st.ok());
    return std::vector<ChangeEvent>();
  }
  if (!scopes_.empty()) {
    Rollback();
    return Status(StatusCode::kFailedPrecondition,
                  "data store: Commit with " + std::to_string(scopes_.size()) +
                      " open scope(s); the transaction was rolled back");
  }
  std::vector<ChangeEvent> events = std::move(changes_);
  changes_.clear();
  Status st = RecordChanges(events);
  // The changes are written; the commit is not (a kill here loses both).
  if (st.ok()) FaultPoint("data_store_before_commit");
  if (!st.ok()) {
    Rollback();
    return st;
  }
  st = conn_.CommitTransaction("commit data");  // rolled back on an error
  Finish(st.ok());
  if (!st.ok()) return st;
  // Committed, not yet reported (a kill here keeps everything).
  FaultPoint("data_store_after_commit");
  return events;
}

void PgDataTxn::Rollback() {
  if (ended_) return;
  conn_.RollbackTransaction("roll back data");
  Finish(/*clean=*/true);  // a lost connection is not reused either
}

void PgDataTxn::Finish(bool clean) {
  if (ended_) return;
  ended_ = true;
  changes_.clear();
  scopes_.clear();
  if (parts_.mode == data::TxnMode::kRead) {
    // A connection that is lost, or still in a transaction, is not reused.
    if (clean && !parts_.reader->broken() && !conn_.in_transaction() &&
        parts_.return_reader) {
      parts_.return_reader(std::move(parts_.reader));
    }
    parts_.reader.reset();
  } else if (parts_.release_writer) {
    parts_.release_writer();
    parts_.release_writer = nullptr;
  }
}

}  // namespace tessera::store
