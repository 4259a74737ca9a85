// DataStore: the app's data (docs/data.md), a port the data layer declares
// and the store layer implements (store/sqlite_data_store.h: one real table
// per entity type in the app's SQLite file; store/postgres/pg_data_store.h:
// the same tables in a PostgreSQL database). data_store_conformance.h is
// the test suite every adapter passes.
//
// Transactions: everything happens in a DataTxn. A write transaction holds
// the store's one writer for its whole life (SQLite has one writer; the
// PostgreSQL adapter serialises the same way per app), so callers keep
// them short and take the writer BEFORE any lock of their own that another
// writer could hold while waiting for the writer (the compute engine takes
// it before a module's run lock). Read transactions see one consistent
// snapshot and never wait for the writer.
//
// Nested scopes (Savepoint / Release / RollbackTo) let one transaction
// carry many independent units: the server's keyed-call runner commits a
// batch of calls with one durable commit (group commit), each call in its
// own scope, so a failed call rolls back alone. Rolled-back scopes drop
// their change events too.
//
// Durability: a Commit that returned OK survives kill -9 and power loss
// (SQLite: WAL, synchronous=FULL; PostgreSQL: the server's commit). A DataTxn
// destroyed without Commit rolls back. A DataTxn is used by one thread at a
// time.
#ifndef TESSERA_DATA_DATA_STORE_H_
#define TESSERA_DATA_DATA_STORE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "data/data_types.h"

namespace tessera::data {

class DataTxn {
 public:
  virtual ~DataTxn() = default;  // rolls back unless committed

  // --- rows. `type` must be a type of the applied schema (UNKNOWN_TYPE,
  // kNotFound). Field values are checked with CheckFields (schema.h).
  // Errors: the codes of schema.h as Status messages; kIo for the store.
  virtual Result<std::optional<Row>> Get(std::string_view type,
                                         std::string_view id) = 0;
  // The row whose indexed `field` equals `value_json` (the first by id when
  // the index is not unique). Errors: NO_INDEX for a field without an index.
  virtual Result<std::optional<Row>> Lookup(std::string_view type,
                                            std::string_view field,
                                            std::string_view value_json) = 0;
  // Rows matching `filter` with id > `cursor` ("" = from the start), by id,
  // at most `limit` (1..kMaxPageLimit; BAD_FILTER outside).
  virtual Result<Page> List(std::string_view type, const Filter& filter,
                            std::string_view cursor, int64_t limit) = 0;
  virtual Result<int64_t> Count(std::string_view type,
                                const Filter& filter) = 0;

  // Write ops fail with kFailedPrecondition on a read transaction.
  // Inserts a row (`id` "" = NewRowId); returns it. Errors: ROW_EXISTS,
  // UNIQUE_VIOLATION, BAD_VALUE, UNKNOWN_FIELD.
  virtual Result<Row> Insert(std::string_view type, std::string_view id,
                             std::string_view fields_json,
                             std::string_view origin) = 0;
  // Sets the fields of `set_json` (null clears an optional field); returns
  // the row after. A set that changes nothing records no change and keeps
  // the version. Errors: ROW_NOT_FOUND, UNIQUE_VIOLATION, BAD_VALUE, ...
  virtual Result<Row> Update(std::string_view type, std::string_view id,
                             std::string_view set_json,
                             std::string_view origin) = 0;
  // Whether a row was deleted (false: there was none).
  virtual Result<bool> Delete(std::string_view type, std::string_view id,
                              std::string_view origin) = 0;

  // --- keyed calls (idempotency): the stored outcome of `key`, or none.
  virtual Result<std::optional<StoredCall>> GetCall(std::string_view key) = 0;
  // Stores `call` (created_ms 0: now). Errors: kAlreadyExists for a key
  // already stored, kIo.
  virtual Status PutCall(const StoredCall& call) = 0;

  // --- nested scopes (write transactions only); strictly nested.
  virtual Status Savepoint() = 0;
  virtual Status Release() = 0;     // keeps the innermost scope's work
  virtual Status RollbackTo() = 0;  // undoes it (and ends the scope)

  // The change events of this transaction so far (without seq).
  virtual const std::vector<ChangeEvent>& changes() const = 0;
  // Makes everything durable and returns the change events with their
  // sequence numbers. After an error the transaction is rolled back.
  // Errors: kIo (nothing committed), kFailedPrecondition (open scopes).
  virtual Result<std::vector<ChangeEvent>> Commit() = 0;

  // Reads and writes done so far (each Get/Lookup/List/Count and GetCall is
  // a read; Insert/Update/Delete/PutCall a write), for run rows.
  virtual int64_t reads() const = 0;
  virtual int64_t writes() const = 0;
};

enum class TxnMode { kRead, kWrite };

class DataStore {
 public:
  virtual ~DataStore() = default;

  // Brings the store to `schema`: DiffSchemas(applied, schema), then in
  // one transaction creates the new tables, columns and indexes and records
  // `schema` as applied. Errors: DiffSchemas' kFailedPrecondition (nothing
  // changes); kFailedPrecondition "UNIQUE_VIOLATION: ..." when a new unique
  // index meets duplicate values; kIo.
  virtual Status ApplySchema(const DataSchema& schema) = 0;
  // The applied schema (empty before the first ApplySchema).
  virtual DataSchema schema() const = 0;

  // A transaction. kWrite waits for the writer (at most `wait_ms`, then
  // kUnavailable "UNAVAILABLE: the data store is busy"). Errors: kIo.
  virtual Result<std::unique_ptr<DataTxn>> Begin(TxnMode mode,
                                                 int64_t wait_ms = 5000) = 0;

  // Committed change events with seq > `after_seq`, oldest first, at most
  // `limit` (<= 1000). Kept kChangeRetentionMs. Errors: kIo.
  virtual Result<std::vector<ChangeEvent>> Changes(int64_t after_seq,
                                                   int64_t limit) = 0;
  // Deletes stored calls older than kCallRetentionMs and change events
  // older than kChangeRetentionMs before `now_ms`. Errors: kIo.
  virtual Status Prune(int64_t now_ms) = 0;
};

inline constexpr int64_t kChangeRetentionMs = 7LL * 24 * 3600 * 1000;

}  // namespace tessera::data

#endif  // TESSERA_DATA_DATA_STORE_H_
