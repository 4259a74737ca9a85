#include "store/sqlite_data_txn.h"

#include <sqlite3.h>

#include <utility>

#include "common/fault_point.h"
#include "data/schema.h"

namespace tessera::store {

using data::ChangeEvent;
using data::ChangeOp;
using data::EntityType;
using data::Row;
using nlohmann::json;

namespace {

constexpr size_t kMaxCallKeyBytes = 128;  // abi::kMaxCallKeyBytes

Status Ended() {
  return Status(StatusCode::kFailedPrecondition,
                "data store: the transaction has ended");
}

// The field named in SQLite's "UNIQUE constraint failed: data_T.f_name".
std::string UniqueField(const std::string& message) {
  size_t at = message.find("constraint failed: ");
  if (at == std::string::npos) return "";
  size_t dot = message.find('.', at);
  if (dot == std::string::npos || message.compare(dot + 1, 2, "f_") != 0) {
    return "";
  }
  size_t begin = dot + 3;
  size_t end = begin;
  while (end < message.size() &&
         (std::isalnum(static_cast<unsigned char>(message[end])) ||
          message[end] == '_')) {
    ++end;
  }
  return message.substr(begin, end - begin);
}

}  // namespace

SqliteDataTxn::SqliteDataTxn(Parts parts)
    : parts_(std::move(parts)), conn_(*parts_.conn) {}

SqliteDataTxn::~SqliteDataTxn() {
  if (!ended_) Rollback();
}

Status SqliteDataTxn::CheckOpen() const {
  if (ended_) return Ended();
  if (broken_) {
    return IoError(
        "data store: the transaction was rolled back after a storage error");
  }
  return Status::Ok();
}

Status SqliteDataTxn::CheckWrite() const {
  TESSERA_RETURN_IF_ERROR(CheckOpen());
  if (parts_.mode != data::TxnMode::kWrite) {
    return Status(StatusCode::kFailedPrecondition,
                  "data store: a read transaction cannot write");
  }
  return Status::Ok();
}

Result<SqliteDataTxn::Target> SqliteDataTxn::Find(std::string_view type) const {
  const EntityType* t = parts_.schema->Find(type);
  if (t == nullptr) {
    return data::DataError(data::codes::kUnknownType,
                           "no entity type " + QuotedName(type));
  }
  Result<std::string> table = TableName(*t);
  if (!table.ok()) return table.status();
  return Target{t, *table};
}

Status SqliteDataTxn::Failed(const Status& st, const Target* t,
                             std::string_view id) {
  const int code = conn_.ExtendedErrorCode();
  const std::string type = t != nullptr ? t->type->name : "";
  if (code == SQLITE_CONSTRAINT_PRIMARYKEY && t != nullptr) {
    return data::DataError(data::codes::kRowExists,
                           type + " " + QuotedName(id) + " already exists");
  }
  if (code == SQLITE_CONSTRAINT_UNIQUE && t != nullptr) {
    std::string field = UniqueField(st.message());
    return data::DataError(
        data::codes::kUniqueViolation,
        type + "." + (field.empty() ? "?" : field) +
            ": another row has this value (the index is unique)");
  }
  if ((code & 0xff) == SQLITE_BUSY || (code & 0xff) == SQLITE_LOCKED) {
    return Status(StatusCode::kUnavailable,
                  "UNAVAILABLE: the data store is busy: " + st.message());
  }
  // SQLite rolls the whole transaction back on some errors (disk full, I/O).
  if (conn_.autocommit()) broken_ = true;
  return st;
}

Result<std::optional<RowValues>> SqliteDataTxn::Read(const Target& t,
                                                     std::string_view id) {
  Result<StatementRef> stmt = conn_.Statement(
      "SELECT " + SelectList(*t.type) + " FROM " + t.table + " WHERE id = ?1");
  if (!stmt.ok()) return Failed(stmt.status(), &t, id);
  TESSERA_RETURN_IF_ERROR((*stmt)->BindText(1, id));
  Result<bool> row = (*stmt)->Step("read a row of " + t.type->name);
  if (!row.ok()) return Failed(row.status(), &t, id);
  if (!*row) return std::optional<RowValues>();
  return std::optional<RowValues>(ReadRow(*t.type, **stmt));
}

Result<std::optional<Row>> SqliteDataTxn::Get(std::string_view type,
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

Result<std::optional<Row>> SqliteDataTxn::Lookup(std::string_view type,
                                                 std::string_view field,
                                                 std::string_view value_json) {
  TESSERA_RETURN_IF_ERROR(CheckOpen());
  ++reads_;
  Result<Target> t = Find(type);
  if (!t.ok()) return t.status();
  Result<std::optional<SqlValue>> v = LookupValue(*t->type, field, value_json);
  if (!v.ok()) return v.status();
  if (!v->has_value()) return std::optional<Row>();  // null equals no row
  Result<StatementRef> stmt = conn_.Statement(
      "SELECT " + SelectList(*t->type) + " FROM " + t->table + " WHERE " +
      ColumnName(field) + " = ?1 ORDER BY id LIMIT 1");
  if (!stmt.ok()) return Failed(stmt.status(), &*t, "");
  TESSERA_RETURN_IF_ERROR(Bind(**stmt, 1, **v));
  Result<bool> row = (*stmt)->Step("look up a row of " + t->type->name);
  if (!row.ok()) return Failed(row.status(), &*t, "");
  if (!*row) return std::optional<Row>();
  return std::optional<Row>(ReadRow(*t->type, **stmt).row);
}

Result<data::Page> SqliteDataTxn::List(std::string_view type,
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
      CompileFilter(kSqliteDialect, *t->type, filter, 3);
  if (!where.ok()) return where.status();
  Result<StatementRef> stmt =
      conn_.Statement("SELECT " + SelectList(*t->type) + " FROM " + t->table +
                      " WHERE id > ?1" + where->sql + " ORDER BY id LIMIT ?2");
  if (!stmt.ok()) return Failed(stmt.status(), &*t, "");
  TESSERA_RETURN_IF_ERROR((*stmt)->BindText(1, cursor));
  TESSERA_RETURN_IF_ERROR((*stmt)->BindInt64(2, limit + 1));
  for (size_t i = 0; i < where->params.size(); ++i) {
    TESSERA_RETURN_IF_ERROR(
        Bind(**stmt, static_cast<int>(3 + i), where->params[i]));
  }
  data::Page page;
  while (true) {
    Result<bool> row = (*stmt)->Step("list rows of " + t->type->name);
    if (!row.ok()) return Failed(row.status(), &*t, "");
    if (!*row) break;
    page.rows.push_back(ReadRow(*t->type, **stmt).row);
  }
  if (static_cast<int64_t>(page.rows.size()) > limit) {
    page.rows.pop_back();
    page.next_cursor = page.rows.back().id;
  }
  return page;
}

Result<int64_t> SqliteDataTxn::Count(std::string_view type,
                                     const data::Filter& filter) {
  TESSERA_RETURN_IF_ERROR(CheckOpen());
  ++reads_;
  Result<Target> t = Find(type);
  if (!t.ok()) return t.status();
  Result<CompiledFilter> where =
      CompileFilter(kSqliteDialect, *t->type, filter, 1);
  if (!where.ok()) return where.status();
  Result<StatementRef> stmt = conn_.Statement(
      "SELECT count(*) FROM " + t->table + " WHERE 1" + where->sql);
  if (!stmt.ok()) return Failed(stmt.status(), &*t, "");
  for (size_t i = 0; i < where->params.size(); ++i) {
    TESSERA_RETURN_IF_ERROR(
        Bind(**stmt, static_cast<int>(1 + i), where->params[i]));
  }
  Result<bool> row = (*stmt)->Step("count rows of " + t->type->name);
  if (!row.ok()) return Failed(row.status(), &*t, "");
  return *row ? (*stmt)->ColumnInt64(0) : 0;
}

Result<Row> SqliteDataTxn::Insert(std::string_view type, std::string_view id,
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
  std::string params = "?1, ?2, ?2, 1";
  for (size_t i = 0; i < t->type->fields.size(); ++i) {
    columns += ", " + ColumnName(t->type->fields[i].name);
    params += ", ?" + std::to_string(3 + i);
  }
  Result<StatementRef> stmt = conn_.Statement(
      "INSERT INTO " + t->table + "(" + columns + ") VALUES(" + params + ")");
  if (!stmt.ok()) return Failed(stmt.status(), &*t, row_id);
  TESSERA_RETURN_IF_ERROR((*stmt)->BindText(1, row_id));
  TESSERA_RETURN_IF_ERROR((*stmt)->BindInt64(2, now));
  for (size_t i = 0; i < values->size(); ++i) {
    TESSERA_RETURN_IF_ERROR(
        Bind(**stmt, static_cast<int>(3 + i), (*values)[i]));
  }
  Status run = (*stmt)->Run("insert a row of " + t->type->name);
  if (!run.ok()) return Failed(run, &*t, row_id);

  Row row;
  row.type = t->type->name;
  row.id = row_id;
  row.created_ms = row.updated_ms = now;
  row.version = 1;
  row.fields_json = FieldsJson(*t->type, *values);
  changes_.push_back(CreatedEvent(*t->type, row, origin));
  return row;
}

Result<Row> SqliteDataTxn::Update(std::string_view type, std::string_view id,
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
  std::string assignments;
  for (size_t k = 0; k < plan->fields.size(); ++k) {
    assignments += ColumnName(t->type->fields[plan->fields[k]].name) + " = ?" +
                   std::to_string(3 + k) + ", ";
  }
  if (plan->changed.empty()) return std::move(row.row);  // nothing to record

  const int64_t now = parts_.clock->UnixNowMs();
  Result<StatementRef> stmt =
      conn_.Statement("UPDATE " + t->table + " SET " + assignments +
                      "updated_ms = ?2, version = version + 1 WHERE id = ?1");
  if (!stmt.ok()) return Failed(stmt.status(), &*t, id);
  TESSERA_RETURN_IF_ERROR((*stmt)->BindText(1, id));
  TESSERA_RETURN_IF_ERROR((*stmt)->BindInt64(2, now));
  for (size_t k = 0; k < plan->fields.size(); ++k) {
    TESSERA_RETURN_IF_ERROR(
        Bind(**stmt, static_cast<int>(3 + k), plan->after[plan->fields[k]]));
  }
  Status run = (*stmt)->Run("update a row of " + t->type->name);
  if (!run.ok()) return Failed(run, &*t, id);

  row.row.updated_ms = now;
  row.row.version += 1;
  row.row.fields_json = FieldsJson(*t->type, plan->after);
  changes_.push_back(
      UpdatedEvent(row.row, std::move(plan).value().changed, origin));
  return std::move(row.row);
}

Result<bool> SqliteDataTxn::Delete(std::string_view type, std::string_view id,
                                   std::string_view origin) {
  TESSERA_RETURN_IF_ERROR(CheckWrite());
  ++writes_;
  Result<Target> t = Find(type);
  if (!t.ok()) return t.status();
  Result<std::optional<RowValues>> current = Read(*t, id);
  if (!current.ok()) return current.status();
  if (!current->has_value()) return false;
  Result<StatementRef> stmt =
      conn_.Statement("DELETE FROM " + t->table + " WHERE id = ?1");
  if (!stmt.ok()) return Failed(stmt.status(), &*t, id);
  TESSERA_RETURN_IF_ERROR((*stmt)->BindText(1, id));
  Status run = (*stmt)->Run("delete a row of " + t->type->name);
  if (!run.ok()) return Failed(run, &*t, id);

  changes_.push_back(DeletedEvent(*t->type, (*current)->row,
                                  parts_.clock->UnixNowMs(), origin));
  return true;
}

Result<std::optional<data::StoredCall>> SqliteDataTxn::GetCall(
    std::string_view key) {
  TESSERA_RETURN_IF_ERROR(CheckOpen());
  ++reads_;
  Result<StatementRef> stmt = conn_.Statement(
      "SELECT function, args_hash, ok, result_json, error, created_ms "
      "FROM data_calls WHERE key = ?1");
  if (!stmt.ok()) return Failed(stmt.status(), nullptr, "");
  TESSERA_RETURN_IF_ERROR((*stmt)->BindText(1, key));
  Result<bool> row = (*stmt)->Step("read a keyed call");
  if (!row.ok()) return Failed(row.status(), nullptr, "");
  if (!*row) return std::optional<data::StoredCall>();
  data::StoredCall call;
  call.key = std::string(key);
  call.function = (*stmt)->ColumnBytes(0);
  call.args_hash = (*stmt)->ColumnBytes(1);
  call.ok = (*stmt)->ColumnInt64(2) != 0;
  call.result_json = (*stmt)->ColumnBytes(3);
  call.error = (*stmt)->ColumnBytes(4);
  call.created_ms = (*stmt)->ColumnInt64(5);
  return std::optional<data::StoredCall>(std::move(call));
}

Status SqliteDataTxn::PutCall(const data::StoredCall& call) {
  TESSERA_RETURN_IF_ERROR(CheckWrite());
  ++writes_;
  if (call.key.empty() || call.key.size() > kMaxCallKeyBytes) {
    return InvalidArgument("data store: a call key is 1.." +
                           std::to_string(kMaxCallKeyBytes) + " bytes");
  }
  Result<StatementRef> stmt = conn_.Statement(
      "INSERT INTO data_calls(key, function, args_hash, ok, result_json, "
      "error, created_ms) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)");
  if (!stmt.ok()) return Failed(stmt.status(), nullptr, "");
  SqliteStatement& st = **stmt;
  TESSERA_RETURN_IF_ERROR(st.BindText(1, call.key));
  TESSERA_RETURN_IF_ERROR(st.BindText(2, call.function));
  TESSERA_RETURN_IF_ERROR(st.BindText(3, call.args_hash));
  TESSERA_RETURN_IF_ERROR(st.BindInt64(4, call.ok ? 1 : 0));
  TESSERA_RETURN_IF_ERROR(st.BindText(5, call.result_json));
  TESSERA_RETURN_IF_ERROR(st.BindText(6, call.error));
  TESSERA_RETURN_IF_ERROR(st.BindInt64(
      7, call.created_ms != 0 ? call.created_ms : parts_.clock->UnixNowMs()));
  Status run = st.Run("store a keyed call");
  if (run.ok()) return run;
  if (conn_.ExtendedErrorCode() == SQLITE_CONSTRAINT_PRIMARYKEY) {
    return Status(StatusCode::kAlreadyExists, "data store: keyed call " +
                                                  QuotedName(call.key) +
                                                  " is already stored");
  }
  return Failed(run, nullptr, "");
}

Status SqliteDataTxn::Savepoint() {
  TESSERA_RETURN_IF_ERROR(CheckWrite());
  Status st = conn_.Run("SAVEPOINT s" + std::to_string(scopes_.size() + 1),
                        "open a scope");
  if (!st.ok()) return Failed(st, nullptr, "");
  scopes_.push_back(changes_.size());
  return Status::Ok();
}

Status SqliteDataTxn::Release() {
  TESSERA_RETURN_IF_ERROR(CheckWrite());
  if (scopes_.empty()) {
    return Status(StatusCode::kFailedPrecondition,
                  "data store: Release without an open scope");
  }
  Status st = conn_.Run("RELEASE s" + std::to_string(scopes_.size()),
                        "release a scope");
  if (!st.ok()) return Failed(st, nullptr, "");
  scopes_.pop_back();
  return Status::Ok();
}

Status SqliteDataTxn::RollbackTo() {
  TESSERA_RETURN_IF_ERROR(CheckWrite());
  if (scopes_.empty()) {
    return Status(StatusCode::kFailedPrecondition,
                  "data store: RollbackTo without an open scope");
  }
  const std::string name = "s" + std::to_string(scopes_.size());
  Status st = conn_.Run("ROLLBACK TO " + name, "roll back a scope");
  if (st.ok()) st = conn_.Run("RELEASE " + name, "end a rolled-back scope");
  if (!st.ok()) {
    broken_ = true;  // the scope's work may be half undone: trust nothing
    return Failed(st, nullptr, "");
  }
  changes_.resize(scopes_.back());
  scopes_.pop_back();
  return Status::Ok();
}

Result<std::vector<ChangeEvent>> SqliteDataTxn::Commit() {
  TESSERA_RETURN_IF_ERROR(CheckOpen());
  if (parts_.mode == data::TxnMode::kRead) {
    Finish(/*commit=*/true);
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
  auto record = [&]() -> Status {
    for (ChangeEvent& e : events) {
      Result<StatementRef> stmt = conn_.Statement(
          "INSERT INTO data_changes(ts_ms, op, type, row_id, row_json, "
          "fields_json, origin) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7) "
          "RETURNING seq");
      if (!stmt.ok()) return stmt.status();
      const std::string fields_text = ChangedFieldsJson(e.fields);
      SqliteStatement& s = **stmt;
      TESSERA_RETURN_IF_ERROR(s.BindInt64(1, e.ts_ms));
      TESSERA_RETURN_IF_ERROR(s.BindText(2, data::ChangeOpName(e.op)));
      TESSERA_RETURN_IF_ERROR(s.BindText(3, e.type));
      TESSERA_RETURN_IF_ERROR(s.BindText(4, e.id));
      TESSERA_RETURN_IF_ERROR(s.BindText(5, e.row_json));
      TESSERA_RETURN_IF_ERROR(s.BindText(6, fields_text));
      TESSERA_RETURN_IF_ERROR(s.BindText(7, e.origin));
      Result<bool> row = s.Step("record a data change");
      if (!row.ok()) return row.status();
      if (!*row) return Internal("data store: no seq for a data change");
      e.seq = s.ColumnInt64(0);
    }
    return Status::Ok();
  };
  Status st = record();
  // The changes are written; the commit is not (a kill here loses both).
  if (st.ok()) FaultPoint("data_store_before_commit");
  if (st.ok()) st = conn_.Run("COMMIT", "commit data");
  if (!st.ok()) {
    Rollback();
    return st;
  }
  Finish(/*commit=*/true);
  // Committed, not yet reported (a kill here keeps everything).
  FaultPoint("data_store_after_commit");
  return events;
}

void SqliteDataTxn::Rollback() {
  if (ended_) return;
  if (!conn_.autocommit()) (void)conn_.Run("ROLLBACK", "roll back data");
  Finish(/*commit=*/false);
}

void SqliteDataTxn::Finish(bool commit) {
  if (ended_) return;
  if (commit && !conn_.autocommit()) {
    (void)conn_.Run("COMMIT", "end a read");  // a read transaction's end
  }
  ended_ = true;
  changes_.clear();
  scopes_.clear();
  if (parts_.mode == data::TxnMode::kRead) {
    // A connection still in a transaction is not reused.
    if (parts_.reader->autocommit() && parts_.return_reader) {
      parts_.return_reader(std::move(parts_.reader));
    }
    parts_.reader.reset();
  } else if (parts_.release_writer) {
    parts_.release_writer();
    parts_.release_writer = nullptr;
  }
}

}  // namespace tessera::store
