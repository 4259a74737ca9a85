// The DataTxn of the PostgreSQL data store (pg_data_store.h): one
// transaction on the writer connection (kWrite, holding the store's gate
// and the writer lock) or on a pooled reader connection (kRead). Internal
// to tessera_store_postgres; made by PgDataStore::Begin.
//
// Change events are collected in memory and written to data_changes just
// before COMMIT (a rolled-back scope drops its events by truncating the
// list); their seq comes from that insert.
//
// Threading: one thread at a time (data_store.h).
#ifndef TESSERA_STORE_POSTGRES_PG_DATA_TXN_H_
#define TESSERA_STORE_POSTGRES_PG_DATA_TXN_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "data/data_store.h"
#include "store/data_sql.h"
#include "store/postgres/pg_conn.h"

namespace tessera::store {

class PgDataTxn final : public data::DataTxn {
 public:
  // For kWrite: `conn` is the writer and `release_writer` lets the gate
  // go; for kRead: `reader` owns the connection (`conn` points at it) and
  // `return_reader` takes it back at the end.
  struct Parts {
    data::TxnMode mode = data::TxnMode::kRead;
    pg::PgConn* conn = nullptr;
    std::unique_ptr<pg::PgConn> reader;
    std::function<void(std::unique_ptr<pg::PgConn>)> return_reader;
    std::function<void()> release_writer;
    std::shared_ptr<const data::DataSchema> schema;
    const WallClock* clock = nullptr;
  };
  // `parts.conn` has an open transaction (BeginTransaction).
  explicit PgDataTxn(Parts parts);
  ~PgDataTxn() override;

  Result<std::optional<data::Row>> Get(std::string_view type,
                                       std::string_view id) override;
  Result<std::optional<data::Row>> Lookup(std::string_view type,
                                          std::string_view field,
                                          std::string_view value_json) override;
  Result<data::Page> List(std::string_view type, const data::Filter& filter,
                          std::string_view cursor, int64_t limit) override;
  Result<int64_t> Count(std::string_view type,
                        const data::Filter& filter) override;
  Result<data::Row> Insert(std::string_view type, std::string_view id,
                           std::string_view fields_json,
                           std::string_view origin) override;
  Result<data::Row> Update(std::string_view type, std::string_view id,
                           std::string_view set_json,
                           std::string_view origin) override;
  Result<bool> Delete(std::string_view type, std::string_view id,
                      std::string_view origin) override;
  Result<std::optional<data::StoredCall>> GetCall(
      std::string_view key) override;
  Status PutCall(const data::StoredCall& call) override;
  Status Savepoint() override;
  Status Release() override;
  Status RollbackTo() override;
  const std::vector<data::ChangeEvent>& changes() const override {
    return changes_;
  }
  Result<std::vector<data::ChangeEvent>> Commit() override;
  int64_t reads() const override { return reads_; }
  int64_t writes() const override { return writes_; }

 private:
  struct Target {
    const data::EntityType* type;
    std::string table;  // quoted
  };
  Status CheckOpen() const;
  Status CheckWrite() const;
  Result<Target> Find(std::string_view type) const;
  // Runs a statement; a failure breaks the transaction (or its innermost
  // scope).
  Result<pg::PgResult> Exec(const std::string& sql,
                            std::span<const pg::PgParam> params,
                            std::string_view what);
  Result<std::optional<RowValues>> Read(const Target& t, std::string_view id);
  // Of `fields` (indexes into type.fields), the unique one whose value in
  // `values` (one per field) another row than `id` holds; "" when none.
  Result<std::string> TakenUniqueField(const Target& t,
                                       const std::vector<SqlValue>& values,
                                       std::span<const size_t> fields,
                                       std::string_view id);
  // Inserts the change events (their seq set).
  Status RecordChanges(std::vector<data::ChangeEvent>& events);
  // Lets go of the connection (a reader's back to the pool when `clean`)
  // or the writer.
  void Finish(bool clean);
  void Rollback();

  Parts parts_;
  pg::PgConn& conn_;
  bool ended_ = false;
  bool broken_ = false;
  bool scope_failed_ = false;  // a statement failed in the innermost scope
  std::vector<data::ChangeEvent> changes_;
  std::vector<size_t> scopes_;  // changes_.size() at each open Savepoint
  int64_t reads_ = 0;
  int64_t writes_ = 0;
};

}  // namespace tessera::store

#endif  // TESSERA_STORE_POSTGRES_PG_DATA_TXN_H_
