// The DataTxn of the SQLite data store (sqlite_data_store.h): one SQLite
// transaction on the writer connection (kWrite, holding the store's writer
// mutex) or on a pooled reader connection (kRead). Internal to
// tessera_store; made by SqliteDataStore::Begin.
//
// Change events are collected in memory and written to data_changes just
// before COMMIT (so a rolled-back scope drops its events by truncating the
// list); their seq comes from that insert.
//
// Threading: one thread at a time (data_store.h).
#ifndef TESSERA_STORE_SQLITE_DATA_TXN_H_
#define TESSERA_STORE_SQLITE_DATA_TXN_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "data/data_store.h"
#include "store/sqlite_data_sql.h"

namespace tessera::store {

class SqliteDataTxn final : public data::DataTxn {
 public:
  // What a transaction holds. For kWrite: `conn` is the writer and
  // `release_writer` lets the store's writer go; for kRead: `reader` owns
  // the connection (`conn` points at it) and `return_reader` takes it back
  // at the end.
  struct Parts {
    data::TxnMode mode = data::TxnMode::kRead;
    DataConn* conn = nullptr;
    std::unique_ptr<DataConn> reader;
    std::function<void(std::unique_ptr<DataConn>)> return_reader;
    std::function<void()> release_writer;
    std::shared_ptr<const data::DataSchema> schema;
    const WallClock* clock = nullptr;
  };
  // `parts.conn` has an open transaction (BEGIN IMMEDIATE / a deferred one
  // whose snapshot is taken).
  explicit SqliteDataTxn(Parts parts);
  ~SqliteDataTxn() override;

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
  // kFailedPrecondition once the transaction ended or broke.
  Status CheckOpen() const;
  Status CheckWrite() const;
  // The entity type named `type` (UNKNOWN_TYPE) and its table.
  Result<Target> Find(std::string_view type) const;
  Result<std::optional<RowValues>> Read(const Target& t, std::string_view id);
  // A failed statement's status: the data codes for constraint failures,
  // kUnavailable for a busy database, else `st`; marks the transaction
  // broken when SQLite rolled it back.
  // `id` names the row in ROW_EXISTS.
  Status Failed(const Status& st, const Target* t, std::string_view id);
  // Ends the SQLite transaction (COMMIT or ROLLBACK) and lets go of the
  // connection / writer.
  void Finish(bool commit_ok);
  void Rollback();

  Parts parts_;
  DataConn& conn_;
  bool ended_ = false;
  bool broken_ = false;
  std::vector<data::ChangeEvent> changes_;
  std::vector<size_t> scopes_;  // changes_.size() at each open Savepoint
  int64_t reads_ = 0;
  int64_t writes_ = 0;
};

}  // namespace tessera::store

#endif  // TESSERA_STORE_SQLITE_DATA_TXN_H_
