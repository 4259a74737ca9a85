#include "store/sqlite_data_store.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <utility>

#include "data/schema.h"
#include "store/sqlite_data_sql.h"
#include "store/sqlite_data_txn.h"

namespace tessera::store {

using data::DataSchema;
using data::EntityType;

namespace {

// A failed BEGIN: another process holding the file's write lock is "busy"
// too.
Status BeginFailed(DataConn& conn, const Status& st) {
  const int code = conn.ExtendedErrorCode() & 0xff;
  if (code == SQLITE_BUSY || code == SQLITE_LOCKED) {
    return Status(StatusCode::kUnavailable,
                  "UNAVAILABLE: the data store is busy: " + st.message());
  }
  return st;
}

// A private file for ":memory:" (see the header). Errors: kIo.
Result<std::string> TemporaryPath() {
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::temp_directory_path(ec);
  if (ec) dir = "/tmp";
  std::string tmpl = (dir / "tessera-data-XXXXXX").string();
  int fd = mkstemp(tmpl.data());
  if (fd < 0) return IoError("sqlite store: cannot create " + tmpl);
  close(fd);
  return tmpl;
}

}  // namespace

Result<std::unique_ptr<SqliteDataStore>> SqliteDataStore::Open(
    const std::string& path, Options options) {
  if (path.empty()) {
    return InvalidArgument("sqlite store: the database path is empty");
  }
  if (options.wall_clock == nullptr) options.wall_clock = RealWallClock::Get();
  const bool temporary = path == ":memory:";
  std::string file = path;
  if (temporary) {
    Result<std::string> tmp = TemporaryPath();
    if (!tmp.ok()) return tmp.status();
    file = *tmp;
  }
  auto fail = [&](Status st) {
    if (temporary) std::filesystem::remove(file);
    return st;
  };
  Result<std::unique_ptr<DataConn>> writer = OpenWriterConn(
      file, options.busy_timeout_ms, options.wall_clock->UnixNowMs());
  if (!writer.ok()) return fail(writer.status());

  auto schema = std::make_shared<DataSchema>();
  {
    Result<StatementRef> stmt = (*writer)->Statement(
        "SELECT schema_json FROM data_schema WHERE id = 1");
    if (!stmt.ok()) return fail(stmt.status());
    Result<bool> row = (*stmt)->Step("read the applied data schema");
    if (!row.ok()) return fail(row.status());
    if (*row) {
      std::string where = "sqlite store " + file + ": data_schema";
      Result<DataSchema> parsed =
          data::ParseDataSchema((*stmt)->ColumnBytes(0), where);
      if (!parsed.ok()) {
        return fail(
            Status(StatusCode::kFailedPrecondition, parsed.status().message()));
      }
      *schema = std::move(parsed).value();
    }
  }
  return std::unique_ptr<SqliteDataStore>(new SqliteDataStore(
      file, temporary, options, std::move(writer).value(), std::move(schema)));
}

SqliteDataStore::SqliteDataStore(std::string path, bool temporary,
                                 Options options,
                                 std::unique_ptr<DataConn> writer,
                                 std::shared_ptr<const DataSchema> schema)
    : options_(options),
      path_(std::move(path)),
      temporary_(temporary),
      writer_(std::move(writer)),
      schema_(std::move(schema)),
      readers_(
          [this] { return OpenReaderConn(path_, options_.busy_timeout_ms); },
          options.idle_readers) {}

SqliteDataStore::~SqliteDataStore() {
  readers_.Clear();
  writer_.reset();
  if (temporary_) {
    std::error_code ec;
    for (const char* suffix : {"", "-wal", "-shm"}) {
      std::filesystem::remove(path_ + suffix, ec);
    }
  }
}

std::shared_ptr<const DataSchema> SqliteDataStore::CurrentSchema() const {
  std::lock_guard<std::mutex> lock(mu_);
  return schema_;
}

DataSchema SqliteDataStore::schema() const { return *CurrentSchema(); }

Result<std::unique_ptr<data::DataTxn>> SqliteDataStore::Begin(
    data::TxnMode mode, int64_t wait_ms) {
  SqliteDataTxn::Parts parts;
  parts.mode = mode;
  parts.clock = options_.wall_clock;
  if (mode == data::TxnMode::kWrite) {
    TESSERA_RETURN_IF_ERROR(gate_.Acquire(wait_ms));
    // Read after taking the writer: ApplySchema holds it while it changes.
    parts.schema = CurrentSchema();
    Status st = writer_->Run("BEGIN IMMEDIATE", "begin a data transaction");
    if (!st.ok()) {
      st = BeginFailed(*writer_, st);
      gate_.Release();
      return st;
    }
    parts.conn = writer_.get();
    parts.release_writer = [this] { gate_.Release(); };
    return std::unique_ptr<data::DataTxn>(
        std::make_unique<SqliteDataTxn>(std::move(parts)));
  }
  // The schema before the snapshot: a snapshot newer than the schema only
  // has more columns and tables, never fewer.
  parts.schema = CurrentSchema();
  Result<std::unique_ptr<DataConn>> reader = readers_.Take();
  if (!reader.ok()) return reader.status();
  DataConn& conn = **reader;
  Status st = conn.Run("BEGIN", "begin a data read");
  if (st.ok()) {
    // The first read takes the snapshot, now rather than at the first use.
    Result<StatementRef> stmt =
        conn.Statement("SELECT count(*) FROM data_schema");
    Result<bool> row =
        stmt.ok() ? (*stmt)->Step("begin a data read") : stmt.status();
    if (!row.ok()) st = row.status();
  }
  if (!st.ok()) {
    if (!conn.autocommit()) (void)conn.Run("ROLLBACK", "end a data read");
    return BeginFailed(conn, st);
  }
  parts.conn = &conn;
  parts.reader = std::move(reader).value();
  parts.return_reader = [this](std::unique_ptr<DataConn> c) {
    readers_.Return(std::move(c));
  };
  return std::unique_ptr<data::DataTxn>(
      std::make_unique<SqliteDataTxn>(std::move(parts)));
}

Status SqliteDataStore::ApplySchema(const DataSchema& schema) {
  TESSERA_RETURN_IF_ERROR(gate_.Acquire(options_.busy_timeout_ms));
  Status st = writer_->Run("BEGIN IMMEDIATE", "begin a data schema change");
  if (!st.ok()) {
    gate_.Release();
    return BeginFailed(*writer_, st);
  }
  st = ApplyLocked(schema);
  if (st.ok()) st = writer_->Run("COMMIT", "commit a data schema change");
  if (!st.ok() && !writer_->autocommit()) {
    (void)writer_->Run("ROLLBACK", "roll back a data schema change");
  }
  if (st.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    schema_ = std::make_shared<const DataSchema>(schema);
  }
  // Statements of the old shapes are not needed again.
  writer_->cache.clear();
  gate_.Release();
  return st;
}

Status SqliteDataStore::ApplyLocked(const DataSchema& next) {
  SqliteDb& db = *writer_->db;
  auto run_all = [&](const Result<std::vector<std::string>>& sql,
                     const std::string& what) -> Status {
    if (!sql.ok()) return sql.status();
    for (const std::string& s : sql.value()) {
      Status st = db.Exec(s, what);
      if (!st.ok() &&
          writer_->ExtendedErrorCode() == SQLITE_CONSTRAINT_UNIQUE) {
        return Status(StatusCode::kAlreadyExists, st.message());
      }
      TESSERA_RETURN_IF_ERROR(st);
    }
    return Status::Ok();
  };
  SchemaSteps steps;
  steps.create_type = [&](const EntityType& type) {
    return run_all(CreateTypeSql(type), "create the table of " + type.name);
  };
  steps.add_field = [&](const EntityType& type, const data::FieldSpec& field,
                        const std::optional<SqlValue>& fill) -> Status {
    const std::string where = type.name + "." + field.name;
    Result<std::string> sql = AddColumnSql(type, field);
    if (!sql.ok()) return sql.status();
    TESSERA_RETURN_IF_ERROR(db.Exec(*sql, "add the column of " + where));
    if (!fill.has_value()) return Status::Ok();
    Result<std::string> table = TableName(type);
    if (!table.ok()) return table.status();
    Result<StatementRef> stmt = writer_->Statement(
        "UPDATE " + *table + " SET " + ColumnName(field.name) + " = ?1");
    if (!stmt.ok()) return stmt.status();
    TESSERA_RETURN_IF_ERROR(Bind(**stmt, 1, *fill));
    return (*stmt)->Run("fill the default of " + where);
  };
  steps.add_index = [&](const EntityType& type, std::string_view field,
                        bool unique) {
    return run_all(
        CreateIndexSql(type, field, unique),
        "create the index of " + type.name + "." + std::string(field));
  };
  TESSERA_RETURN_IF_ERROR(ApplySchemaChanges(*CurrentSchema(), next, steps));
  Result<StatementRef> stmt = writer_->Statement(
      "INSERT OR REPLACE INTO data_schema(id, schema_json, applied_ms) "
      "VALUES(1, ?1, ?2)");
  if (!stmt.ok()) return stmt.status();
  const std::string text = data::DataSchemaJson(next);
  TESSERA_RETURN_IF_ERROR((*stmt)->BindText(1, text));
  TESSERA_RETURN_IF_ERROR((*stmt)->BindInt64(2, NowMs()));
  return (*stmt)->Run("record the applied data schema");
}

Result<std::vector<data::ChangeEvent>> SqliteDataStore::Changes(
    int64_t after_seq, int64_t limit) {
  if (limit < 1) {
    return InvalidArgument("data store: changes: limit must be at least 1");
  }
  if (limit > 1000) limit = 1000;
  Result<std::unique_ptr<DataConn>> reader = readers_.Take();
  if (!reader.ok()) return reader.status();
  std::vector<data::ChangeEvent> out;
  {
    Result<StatementRef> stmt = (*reader)->Statement(
        "SELECT seq, ts_ms, op, type, row_id, row_json, fields_json, origin "
        "FROM data_changes WHERE seq > ?1 ORDER BY seq LIMIT ?2");
    if (!stmt.ok()) return stmt.status();
    SqliteStatement& s = **stmt;
    TESSERA_RETURN_IF_ERROR(s.BindInt64(1, after_seq));
    TESSERA_RETURN_IF_ERROR(s.BindInt64(2, limit));
    while (true) {
      Result<bool> row = s.Step("read data changes");
      if (!row.ok()) return row.status();
      if (!*row) break;
      data::ChangeEvent e;
      e.seq = s.ColumnInt64(0);
      e.ts_ms = s.ColumnInt64(1);
      e.op = ChangeOpFromName(s.ColumnBytes(2));
      e.type = s.ColumnBytes(3);
      e.id = s.ColumnBytes(4);
      e.row_json = s.ColumnBytes(5);
      e.fields = ParseChangedFields(s.ColumnBytes(6));
      e.origin = s.ColumnBytes(7);
      out.push_back(std::move(e));
    }
  }
  readers_.Return(std::move(reader).value());
  return out;
}

Status SqliteDataStore::Prune(int64_t now_ms) {
  TESSERA_RETURN_IF_ERROR(gate_.Acquire(options_.busy_timeout_ms));
  Status st = writer_->db->InTransaction("prune data", [&]() -> Status {
    for (auto [sql, before] :
         {std::pair<const char*, int64_t>{
              "DELETE FROM data_calls WHERE created_ms < ?1",
              now_ms - data::kCallRetentionMs},
          {"DELETE FROM data_changes WHERE ts_ms < ?1",
           now_ms - data::kChangeRetentionMs}}) {
      Result<StatementRef> stmt = writer_->Statement(sql);
      if (!stmt.ok()) return stmt.status();
      TESSERA_RETURN_IF_ERROR((*stmt)->BindInt64(1, before));
      TESSERA_RETURN_IF_ERROR((*stmt)->Run("prune data"));
    }
    return Status::Ok();
  });
  gate_.Release();
  return st;
}

}  // namespace tessera::store
