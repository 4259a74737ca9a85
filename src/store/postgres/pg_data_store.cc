#include "store/postgres/pg_data_store.h"

#include <algorithm>
#include <utility>

#include "data/schema.h"
#include "store/data_sql.h"
#include "store/postgres/pg_data_sql.h"
#include "store/postgres/pg_data_txn.h"

namespace tessera::store {

using data::DataSchema;
using data::EntityType;
using pg::PgParam;
using pg::PgResult;

namespace {

// The applied schema recorded in the database (empty when none). Errors:
// kFailedPrecondition for one this build cannot read, kIo.
Result<DataSchema> ReadAppliedSchema(pg::PgConn& conn) {
  Result<PgResult> row =
      conn.Exec("SELECT schema_json FROM data_schema WHERE id = 1", {},
                "postgres data store: read the applied data schema");
  if (!row.ok()) return row.status();
  if (row->rows() == 0) return DataSchema();
  Result<DataSchema> parsed = data::ParseDataSchema(
      std::string(row->Text(0, 0)), "postgres data store: data_schema");
  if (!parsed.ok()) {
    return Status(StatusCode::kFailedPrecondition, parsed.status().message());
  }
  return parsed;
}

}  // namespace

Result<std::unique_ptr<PgDataStore>> PgDataStore::Open(const std::string& url,
                                                       Options options) {
  if (options.wall_clock == nullptr) options.wall_clock = RealWallClock::Get();
  options.busy_timeout_ms = std::max(options.busy_timeout_ms, 1);
  Result<std::unique_ptr<pg::PgConn>> writer = pg::PgConn::Connect(url);
  if (!writer.ok()) return writer.status();
  TESSERA_RETURN_IF_ERROR(pg::EnsureDataSchema(**writer));
  Result<DataSchema> schema = ReadAppliedSchema(**writer);
  if (!schema.ok()) return schema.status();
  return std::unique_ptr<PgDataStore>(new PgDataStore(
      url, options, std::move(writer).value(),
      std::make_shared<const DataSchema>(std::move(schema).value())));
}

Result<std::unique_ptr<data::DataStore>> OpenPgDataStore(
    const std::string& url, PgDataStore::Options options) {
  Result<std::unique_ptr<PgDataStore>> store = PgDataStore::Open(url, options);
  if (!store.ok()) return store.status();
  return std::unique_ptr<data::DataStore>(std::move(store).value());
}

PgDataStore::PgDataStore(std::string url, Options options,
                         std::unique_ptr<pg::PgConn> writer,
                         std::shared_ptr<const DataSchema> schema)
    : options_(options),
      url_(std::move(url)),
      writer_(std::move(writer)),
      schema_(std::move(schema)),
      readers_([this] { return pg::PgConn::Connect(url_); },
               options.idle_readers) {}

PgDataStore::~PgDataStore() { readers_.Clear(); }

Status PgDataStore::BeginWriterTxn(std::string_view what) {
  Status st = writer_->BeginTransaction(
      "BEGIN ISOLATION LEVEL READ COMMITTED; SET LOCAL lock_timeout = '" +
          std::to_string(options_.busy_timeout_ms) +
          "ms'; SELECT pg_advisory_xact_lock(" +
          std::to_string(pg::kDataWriterLock) + ")",
      what);
  if (st.code() == StatusCode::kUnavailable) {
    return Status(StatusCode::kUnavailable,
                  "UNAVAILABLE: the data store is busy (another connection "
                  "held the writer lock for " +
                      std::to_string(options_.busy_timeout_ms) + " ms)");
  }
  return st;
}

std::shared_ptr<const DataSchema> PgDataStore::CurrentSchema() const {
  std::lock_guard<std::mutex> lock(mu_);
  return schema_;
}

DataSchema PgDataStore::schema() const { return *CurrentSchema(); }

Result<std::unique_ptr<data::DataTxn>> PgDataStore::Begin(data::TxnMode mode,
                                                          int64_t wait_ms) {
  PgDataTxn::Parts parts;
  parts.mode = mode;
  parts.clock = options_.wall_clock;
  if (mode == data::TxnMode::kWrite) {
    TESSERA_RETURN_IF_ERROR(gate_.Acquire(wait_ms));
    // Read after taking the writer: ApplySchema holds it while it changes.
    parts.schema = CurrentSchema();
    Status st = BeginWriterTxn("postgres data store: begin a transaction");
    if (!st.ok()) {
      gate_.Release();
      return st;
    }
    parts.conn = writer_.get();
    parts.release_writer = [this] { gate_.Release(); };
    return std::unique_ptr<data::DataTxn>(
        std::make_unique<PgDataTxn>(std::move(parts)));
  }
  // The schema before the snapshot: a snapshot newer than the schema only
  // has more columns and tables, never fewer.
  parts.schema = CurrentSchema();
  Result<std::unique_ptr<pg::PgConn>> reader = readers_.Take();
  if (!reader.ok()) return reader.status();
  // The first statement takes the snapshot, now rather than at first use.
  TESSERA_RETURN_IF_ERROR((*reader)->BeginTransaction(
      "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SELECT 1",
      "postgres data store: begin a read"));
  parts.conn = reader->get();
  parts.reader = std::move(reader).value();
  parts.return_reader = [this](std::unique_ptr<pg::PgConn> c) {
    readers_.Return(std::move(c));
  };
  return std::unique_ptr<data::DataTxn>(
      std::make_unique<PgDataTxn>(std::move(parts)));
}

Status PgDataStore::ApplySchema(const DataSchema& schema) {
  const std::string what = "postgres data store: change the data schema";
  TESSERA_RETURN_IF_ERROR(gate_.Acquire(options_.busy_timeout_ms));
  Status st = BeginWriterTxn(what);
  if (st.ok()) {
    st = ApplyLocked(schema);
    if (st.ok()) {
      st = writer_->CommitTransaction(what);
    } else {
      writer_->RollbackTransaction(what);
    }
  }
  if (st.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    schema_ = std::make_shared<const DataSchema>(schema);
  }
  gate_.Release();
  return st;
}

Status PgDataStore::ApplyLocked(const DataSchema& next) {
  // What the database holds (another process may have applied a schema
  // since this one read it).
  Result<DataSchema> applied = ReadAppliedSchema(*writer_);
  if (!applied.ok()) return applied.status();
  pg::PgConn& conn = *writer_;
  auto run_all = [&](const Result<std::vector<std::string>>& sql,
                     const std::string& what) -> Status {
    if (!sql.ok()) return sql.status();
    for (const std::string& s : sql.value()) {
      // A unique violation is kAlreadyExists (pg_conn.h).
      TESSERA_RETURN_IF_ERROR(conn.RunScript(s, what));
    }
    return Status::Ok();
  };
  SchemaSteps steps;
  steps.create_type = [&](const EntityType& type) {
    return run_all(pg::CreateTypeSql(type), "create the table of " + type.name);
  };
  steps.add_field = [&](const EntityType& type, const data::FieldSpec& field,
                        const std::optional<SqlValue>& fill) -> Status {
    const std::string where = type.name + "." + field.name;
    Result<std::string> sql = pg::AddColumnSql(type, field);
    if (!sql.ok()) return sql.status();
    TESSERA_RETURN_IF_ERROR(conn.RunScript(*sql, "add the column of " + where));
    if (!fill.has_value()) return Status::Ok();
    Result<std::string> table = pg::TableName(type);
    if (!table.ok()) return table.status();
    return conn.Run(
        "UPDATE " + *table + " SET " + pg::ColumnName(field.name) + " = $1",
        {pg::ParamOf(*fill)}, "fill the default of " + where);
  };
  steps.add_index = [&](const EntityType& type, std::string_view field,
                        bool unique) {
    return run_all(
        pg::CreateIndexSql(type, field, unique),
        "create the index of " + type.name + "." + std::string(field));
  };
  TESSERA_RETURN_IF_ERROR(ApplySchemaChanges(*applied, next, steps));
  return conn.Run(
      "INSERT INTO data_schema(id, schema_json, applied_ms) VALUES(1, $1, $2) "
      "ON CONFLICT (id) DO UPDATE SET schema_json = EXCLUDED.schema_json, "
      "applied_ms = EXCLUDED.applied_ms",
      {PgParam::Text(data::DataSchemaJson(next)), PgParam::Int(NowMs())},
      "record the applied data schema");
}

Result<std::vector<data::ChangeEvent>> PgDataStore::Changes(int64_t after_seq,
                                                            int64_t limit) {
  if (limit < 1) {
    return InvalidArgument("data store: changes: limit must be at least 1");
  }
  if (limit > 1000) limit = 1000;
  Result<std::unique_ptr<pg::PgConn>> reader = readers_.Take();
  if (!reader.ok()) return reader.status();
  Result<PgResult> rows = (*reader)->Exec(
      "SELECT seq, ts_ms, op, type, row_id, row_json, fields_json, origin "
      "FROM data_changes WHERE seq > $1 ORDER BY seq LIMIT $2",
      {PgParam::Int(after_seq), PgParam::Int(limit)},
      "postgres data store: read data changes");
  if (!rows.ok()) return rows.status();
  std::vector<data::ChangeEvent> out;
  for (int i = 0; i < rows->rows(); ++i) {
    data::ChangeEvent e;
    Result<int64_t> seq = rows->Int64(i, 0);
    Result<int64_t> ts = rows->Int64(i, 1);
    Result<std::string> row_json = rows->Bytes(i, 5);
    Result<std::string> fields = rows->Bytes(i, 6);
    Result<std::string> origin = rows->Bytes(i, 7);
    for (const Status& st : {seq.status(), ts.status(), row_json.status(),
                             fields.status(), origin.status()}) {
      TESSERA_RETURN_IF_ERROR(st);
    }
    e.seq = *seq;
    e.ts_ms = *ts;
    e.op = ChangeOpFromName(rows->Text(i, 2));
    e.type = std::string(rows->Text(i, 3));
    e.id = std::string(rows->Text(i, 4));
    e.row_json = std::move(row_json).value();
    e.fields = ParseChangedFields(*fields);
    e.origin = std::move(origin).value();
    out.push_back(std::move(e));
  }
  readers_.Return(std::move(reader).value());
  return out;
}

Status PgDataStore::Prune(int64_t now_ms) {
  const std::string what = "postgres data store: prune data";
  TESSERA_RETURN_IF_ERROR(gate_.Acquire(options_.busy_timeout_ms));
  Status st = BeginWriterTxn(what);
  if (st.ok()) {
    st = writer_->Run("DELETE FROM data_calls WHERE created_ms < $1",
                      {PgParam::Int(now_ms - data::kCallRetentionMs)}, what);
    if (st.ok()) {
      st =
          writer_->Run("DELETE FROM data_changes WHERE ts_ms < $1",
                       {PgParam::Int(now_ms - data::kChangeRetentionMs)}, what);
    }
    if (st.ok()) {
      st = writer_->CommitTransaction(what);
    } else {
      writer_->RollbackTransaction(what);
    }
  }
  gate_.Release();
  return st;
}

}  // namespace tessera::store
