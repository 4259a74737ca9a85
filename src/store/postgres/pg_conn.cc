#include "store/postgres/pg_conn.h"

#include <libpq-fe.h>
#include <poll.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <utility>

namespace tessera::store::pg {

namespace {

// bytea in hex form (PgResult::Bytes) whatever the server's default; no
// NOTICEs on stderr (CREATE ... IF NOT EXISTS reports every object it
// skips).
const std::string kSessionSetup =
    "SET bytea_output = 'hex'; SET client_encoding = 'UTF8'; "
    "SET client_min_messages = warning";

// The message of a failed result or connection, one line.
std::string Trimmed(const char* message) {
  std::string out = message == nullptr ? "" : message;
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) {
    out.pop_back();
  }
  for (char& c : out) {
    if (c == '\n') c = ' ';
  }
  return out.empty() ? "unknown error" : out;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

PgParam PgParam::Int(int64_t value) { return PgParam(std::to_string(value)); }

PgParam PgParam::Double(double value) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value);
  (void)ec;  // 64 bytes hold any double's shortest form
  return PgParam(std::string(buf, end));
}

PgResult::PgResult(pg_result* res) : res_(res) {}

PgResult::~PgResult() {
  if (res_ != nullptr) PQclear(res_);
}

PgResult::PgResult(PgResult&& other) noexcept
    : res_(std::exchange(other.res_, nullptr)) {}

PgResult& PgResult::operator=(PgResult&& other) noexcept {
  if (this != &other) {
    if (res_ != nullptr) PQclear(res_);
    res_ = std::exchange(other.res_, nullptr);
  }
  return *this;
}

int PgResult::rows() const { return res_ == nullptr ? 0 : PQntuples(res_); }

int64_t PgResult::affected() const {
  if (res_ == nullptr) return 0;
  const char* n = PQcmdTuples(res_);
  int64_t out = 0;
  if (n == nullptr || *n == '\0') return 0;
  std::from_chars(n, n + std::strlen(n), out);
  return out;
}

bool PgResult::IsNull(int row, int col) const {
  return PQgetisnull(res_, row, col) != 0;
}

std::string_view PgResult::Text(int row, int col) const {
  return std::string_view(PQgetvalue(res_, row, col),
                          static_cast<size_t>(PQgetlength(res_, row, col)));
}

Result<int64_t> PgResult::Int64(int row, int col) const {
  std::string_view text = Text(row, col);
  int64_t out = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
    return IoError("postgres: column " + std::to_string(col) +
                   " is not an integer: '" + std::string(text) + "'");
  }
  return out;
}

Result<double> PgResult::Double(int row, int col) const {
  std::string_view text = Text(row, col);
  double out = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
    return IoError("postgres: column " + std::to_string(col) +
                   " is not a number: '" + std::string(text) + "'");
  }
  return out;
}

Result<std::string> PgResult::Bytes(int row, int col) const {
  std::string_view text = Text(row, col);
  if (text.size() < 2 || text[0] != '\\' || text[1] != 'x' ||
      text.size() % 2 != 0) {
    return IoError("postgres: column " + std::to_string(col) +
                   " is not bytea in hex form");
  }
  std::string out;
  out.reserve((text.size() - 2) / 2);
  for (size_t i = 2; i < text.size(); i += 2) {
    const int hi = HexValue(text[i]);
    const int lo = HexValue(text[i + 1]);
    if (hi < 0 || lo < 0) {
      return IoError("postgres: column " + std::to_string(col) +
                     " has a bad hex digit");
    }
    out.push_back(static_cast<char>(hi * 16 + lo));
  }
  return out;
}

std::string WithConnectTimeout(const std::string& url) {
  if (url.find("connect_timeout=") != std::string::npos) return url;
  return url + (url.find('?') == std::string::npos ? "?" : "&") +
         "connect_timeout=2";
}

Result<std::unique_ptr<PgConn>> PgConn::Connect(const std::string& url) {
  if (!url.starts_with("postgres://") && !url.starts_with("postgresql://")) {
    return InvalidArgument("postgres: '" + url +
                           "' is not a postgres:// or postgresql:// URL");
  }
  char* error = nullptr;
  PQconninfoOption* parsed = PQconninfoParse(url.c_str(), &error);
  if (parsed == nullptr) {
    std::string message = Trimmed(error);
    PQfreemem(error);
    return InvalidArgument("postgres: malformed URL: " + message);
  }
  PQconninfoFree(parsed);
  pg_conn* conn = PQconnectdb(url.c_str());
  if (conn == nullptr) return IoError("postgres: out of memory connecting");
  if (PQstatus(conn) != CONNECTION_OK) {
    std::string message = Trimmed(PQerrorMessage(conn));
    PQfinish(conn);
    return IoError("postgres: cannot connect: " + message);
  }
  std::unique_ptr<PgConn> out(new PgConn(conn));
  TESSERA_RETURN_IF_ERROR(
      out->RunScript(kSessionSetup, "postgres: set up the session"));
  return out;
}

PgConn::~PgConn() {
  if (conn_ != nullptr) PQfinish(conn_);
}

void PgConn::EnsureConnected() {
  if (!in_transaction_ && (needs_reset_ || PQstatus(conn_) == CONNECTION_BAD)) {
    needs_reset_ = false;
    PQreset(conn_);
    if (PQstatus(conn_) == CONNECTION_OK) {
      (void)RunScript(kSessionSetup, "postgres: set up the session");
    }
  }
}

Result<PgResult> PgConn::Exec(std::string_view sql,
                              std::span<const PgParam> params,
                              std::string_view what) {
  std::vector<const char*> values;
  std::vector<int> lengths;
  std::vector<int> formats;
  values.reserve(params.size());
  lengths.reserve(params.size());
  formats.reserve(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    const PgParam& p = params[i];
    if (p.is_null()) {
      values.push_back(nullptr);
      lengths.push_back(0);
      formats.push_back(0);
      continue;
    }
    if (p.format() == 0 && p.view().find('\0') != std::string_view::npos) {
      return InvalidArgument(std::string(what) + ": parameter " +
                             std::to_string(i + 1) +
                             " holds a NUL byte (not allowed in text)");
    }
    // A null pointer would be SQL NULL: an empty view is an empty value.
    values.push_back(p.data() != nullptr ? p.data() : "");
    lengths.push_back(p.size());
    formats.push_back(p.format());
  }
  EnsureConnected();
  if (needs_reset_) {  // still in the transaction the timeout lost
    return IoError(std::string(what) +
                   ": the transaction was lost when a statement timed out");
  }
  // Text parameters must be NUL-terminated for libpq: copy those that are
  // views into a buffer of their own.
  std::vector<std::string> terminated;
  terminated.reserve(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i].format() == 0 && !params[i].is_null()) {
      terminated.emplace_back(params[i].view());
      values[i] = terminated.back().c_str();
    }
  }
  const std::string statement(sql);
  if (call_timeout_ms_ > 0) {
    Status timeout;
    pg_result* res = ExecBounded(
        statement.c_str(), static_cast<int>(params.size()), values.data(),
        lengths.data(), formats.data(), what, &timeout);
    if (!timeout.ok()) return timeout;
    return Check(res, what);
  }
  pg_result* res =
      PQexecParams(conn_, statement.c_str(), static_cast<int>(params.size()),
                   nullptr, values.data(), lengths.data(), formats.data(),
                   /*resultFormat=*/0);
  return Check(res, what);
}

pg_result* PgConn::ExecBounded(const char* statement, int count,
                               const char* const* values, const int* lengths,
                               const int* formats, std::string_view what,
                               Status* timeout) {
  if (PQsendQueryParams(conn_, statement, count, nullptr, values, lengths,
                        formats, /*resultFormat=*/0) == 0) {
    return nullptr;  // Check reports the connection's error
  }
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(call_timeout_ms_);
  while (PQisBusy(conn_) != 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      needs_reset_ = true;
      *timeout =
          Status(StatusCode::kDeadlineExceeded,
                 std::string(what) + ": no answer from the database in " +
                     std::to_string(call_timeout_ms_) + " ms");
      return nullptr;
    }
    pollfd fd{PQsocket(conn_), POLLIN, 0};
    const int ready = poll(&fd, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno != EINTR) return nullptr;
    if (ready > 0 && PQconsumeInput(conn_) == 0) return nullptr;
  }
  pg_result* res = PQgetResult(conn_);
  // The rest of the results (none for one statement) up to the end marker.
  while (pg_result* more = PQgetResult(conn_)) PQclear(more);
  return res;
}

Result<PgResult> PgConn::Check(pg_result* res, std::string_view what) {
  if (res == nullptr) {
    return IoError(std::string(what) + ": " + Trimmed(PQerrorMessage(conn_)));
  }
  PgResult result(res);
  const ExecStatusType status = PQresultStatus(res);
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return result;
  const char* state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
  const std::string_view sqlstate = state == nullptr ? "" : state;
  std::string message =
      std::string(what) + ": " + Trimmed(PQresultErrorMessage(res));
  if (!sqlstate.empty()) message += " (SQLSTATE " + std::string(sqlstate) + ")";
  if (sqlstate == kUniqueViolation) {
    return Status(StatusCode::kAlreadyExists, std::move(message));
  }
  if (sqlstate == kSerializationFailure) {
    return Status(StatusCode::kAborted, std::move(message));
  }
  if (sqlstate == kLockNotAvailable) {
    return Status(StatusCode::kUnavailable, std::move(message));
  }
  return IoError(std::move(message));
}

Status PgConn::Run(std::string_view sql, std::initializer_list<PgParam> params,
                   std::string_view what) {
  return Exec(sql, params, what).status();
}

Status PgConn::RunScript(const std::string& sql, std::string_view what) {
  EnsureConnected();
  return Check(PQexec(conn_, sql.c_str()), what).status();
}

Status PgConn::BeginTransaction(const std::string& begin_script,
                                std::string_view what) {
  Status status = RunScript(begin_script, what);
  if (!status.ok()) {
    (void)RunScript("ROLLBACK", what);
    return status;
  }
  in_transaction_ = true;
  return Status::Ok();
}

Status PgConn::CommitTransaction(std::string_view what) {
  Status status = RunScript("COMMIT", what);
  if (!status.ok()) RollbackTransaction(what);
  in_transaction_ = false;
  return status;
}

void PgConn::RollbackTransaction(std::string_view what) {
  // Ok or not (a lost connection has lost the transaction anyway).
  (void)RunScript("ROLLBACK", what);
  in_transaction_ = false;
}

bool PgConn::broken() const { return PQstatus(conn_) == CONNECTION_BAD; }

Status PgConn::InTransaction(std::string_view begin, std::string_view what,
                             const std::function<Status()>& body) {
  TESSERA_RETURN_IF_ERROR(BeginTransaction(std::string(begin), what));
  Status status = body();
  if (!status.ok()) {
    RollbackTransaction(what);
    return status;
  }
  return CommitTransaction(what);
}

}  // namespace tessera::store::pg
