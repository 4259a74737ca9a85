// A small RAII wrapper over libpq for the PostgreSQL stores: one
// connection (PgConn, from a postgres:// URL), statements with text or
// binary parameters (PQexecParams; results in text form), transactions,
// and every failure as a Status carrying the server's message and its
// SQLSTATE. Not thread-safe: a store holds one behind its own mutex.
//
// Parameters: PgParam::Text for text columns (a NUL byte is refused with
// kInvalidArgument before anything is sent: libpq would cut the value
// short), PgParam::Int for bigint/integer, PgParam::Bytes for bytea (sent
// in binary, any bytes), PgParam::Double for double precision. Results:
// PgResult::Text / Int64 / Double / Bytes (bytea read back from its hex
// form).
#ifndef TESSERA_STORE_POSTGRES_PG_CONN_H_
#define TESSERA_STORE_POSTGRES_PG_CONN_H_

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "common/status.h"

struct pg_conn;
struct pg_result;

namespace tessera::store::pg {

// SQLSTATE codes the stores look at.
inline constexpr std::string_view kUniqueViolation = "23505";
inline constexpr std::string_view kSerializationFailure = "40001";
inline constexpr std::string_view kLockNotAvailable = "55P03";

class PgParam {
 public:
  static PgParam Text(std::string_view value) { return PgParam(value, 0); }
  static PgParam Bytes(std::string_view value) { return PgParam(value, 1); }
  static PgParam Int(int64_t value);
  // For double precision columns: the shortest text that reads back as
  // exactly `value` ("inf", "-inf" and "nan" included).
  static PgParam Double(double value);
  // SQL NULL.
  static PgParam Null() {
    PgParam p(std::string_view(), 0);
    p.null_ = true;
    return p;
  }

  const char* data() const { return owned_ ? own_.data() : view_.data(); }
  int size() const {
    return static_cast<int>(owned_ ? own_.size() : view_.size());
  }
  int format() const { return format_; }  // 0 text, 1 binary
  bool is_null() const { return null_; }
  std::string_view view() const {
    return {data(), static_cast<size_t>(size())};
  }

 private:
  PgParam(std::string_view view, int format) : view_(view), format_(format) {}
  explicit PgParam(std::string owned) : own_(std::move(owned)), owned_(true) {}

  std::string_view view_;  // not owned: must outlive the call
  std::string own_;
  bool owned_ = false;
  bool null_ = false;
  int format_ = 0;
};

// A statement's result; empty (no rows) for commands.
class PgResult {
 public:
  PgResult() = default;
  explicit PgResult(pg_result* res);
  ~PgResult();
  PgResult(PgResult&& other) noexcept;
  PgResult& operator=(PgResult&& other) noexcept;
  PgResult(const PgResult&) = delete;
  PgResult& operator=(const PgResult&) = delete;

  int rows() const;
  // Rows a command changed (INSERT / UPDATE / DELETE), 0 otherwise.
  int64_t affected() const;
  bool IsNull(int row, int col) const;
  std::string_view Text(int row, int col) const;
  // Errors: kIo when the column is not a decimal integer.
  Result<int64_t> Int64(int row, int col) const;
  // A double precision column (PostgreSQL 12+ prints the shortest exact
  // form). Errors: kIo when it is not a number.
  Result<double> Double(int row, int col) const;
  // A bytea column. Errors: kIo when it is not in hex form.
  Result<std::string> Bytes(int row, int col) const;

 private:
  pg_result* res_ = nullptr;
};

// `url` with connect_timeout=2 (seconds) added when it sets none, so that
// connecting, and reconnecting after a statement timed out, is bounded
// too.
std::string WithConnectTimeout(const std::string& url);

class PgConn {
 public:
  // Connects to `url` (postgres:// or postgresql://, libpq's URI form).
  // Errors: kInvalidArgument for a malformed URL, kIo when the server
  // cannot be reached or refuses (with libpq's message; the password, if
  // any, is never in it).
  static Result<std::unique_ptr<PgConn>> Connect(const std::string& url);
  ~PgConn();
  PgConn(const PgConn&) = delete;
  PgConn& operator=(const PgConn&) = delete;

  // Runs one statement; `what` starts the error message. A connection
  // found broken is reset once before the statement (never inside a
  // transaction: that has been lost and its COMMIT fails). Errors: kIo
  // with the server's message; kAlreadyExists for a unique violation;
  // kAborted for a serialization failure; kUnavailable for a lock not
  // taken within lock_timeout; kInvalidArgument for a text
  // parameter holding a NUL.
  Result<PgResult> Exec(std::string_view sql, std::span<const PgParam> params,
                        std::string_view what);
  Result<PgResult> Exec(std::string_view sql,
                        std::initializer_list<PgParam> params,
                        std::string_view what) {
    return Exec(sql, std::span<const PgParam>(params.begin(), params.size()),
                what);
  }
  // Exec for a statement whose rows are not needed.
  Status Run(std::string_view sql, std::initializer_list<PgParam> params,
             std::string_view what);
  // Runs `sql` (several statements allowed, no parameters).
  Status RunScript(const std::string& sql, std::string_view what);

  // Runs `body` between `begin` (e.g. "BEGIN") and COMMIT; any error of
  // `body` or of the COMMIT rolls everything back and is the answer.
  Status InTransaction(std::string_view begin, std::string_view what,
                       const std::function<Status()>& body);

  // A transaction left open between calls (what InTransaction does
  // around a body): BeginTransaction runs `begin_script` (BEGIN and maybe
  // more statements, e.g. taking a lock) and rolls back on its error;
  // while open, a broken connection is never reset (its statements fail).
  // CommitTransaction's error has rolled back; RollbackTransaction always
  // closes it.
  Status BeginTransaction(const std::string& begin_script,
                          std::string_view what);
  Status CommitTransaction(std::string_view what);
  void RollbackTransaction(std::string_view what);

  // Bounds each later statement's wait for the server's answer (0, the
  // default: no bound). A statement past it fails with kDeadlineExceeded
  // and the connection is dropped and made again before the next one (the
  // reconnect bounded by the URL's connect_timeout), so a server or proxy
  // that accepts and never answers cannot hold the caller.
  void set_call_timeout_ms(int64_t ms) { call_timeout_ms_ = ms; }

  bool in_transaction() const { return in_transaction_; }
  // Whether the connection to the server is lost.
  bool broken() const;

 private:
  explicit PgConn(pg_conn* conn) : conn_(conn) {}
  // Resets a broken connection (outside a transaction).
  void EnsureConnected();
  // Wraps `res` (taking it), or the error it or the connection reports.
  Result<PgResult> Check(pg_result* res, std::string_view what);

  // PQexecParams with call_timeout_ms_ as a bound (the asynchronous API).
  pg_result* ExecBounded(const char* statement, int count,
                         const char* const* values, const int* lengths,
                         const int* formats, std::string_view what,
                         Status* timeout);

  pg_conn* conn_ = nullptr;
  bool in_transaction_ = false;
  int64_t call_timeout_ms_ = 0;
  bool needs_reset_ = false;  // a statement timed out on this connection
};

}  // namespace tessera::store::pg

#endif  // TESSERA_STORE_POSTGRES_PG_CONN_H_
