// Status and Result<T>: expected failures as values (no exceptions on hot
// paths). A Status is cheap to copy when OK (no allocation).
#ifndef TESSERA_COMMON_STATUS_H_
#define TESSERA_COMMON_STATUS_H_

#include <string>
#include <utility>
#include <variant>

namespace tessera {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  // the caller's input is malformed
  kNotFound,
  kAlreadyExists,
  kRefused,          // a module or request was refused by policy
  kFailedPrecondition,
  kOutOfRange,         // past what is kept (a compacted log, another epoch)
  kAborted,            // lost to a concurrent writer (stale revision)
  kUnavailable,        // refused for now (switched off, circuit open)
  kPermissionDenied,   // the caller may not (an invoke policy)
  kResourceExhausted,  // fuel, memory, budget
  kDeadlineExceeded,   // watchdog / tick budget
  kTrap,               // the guest trapped
  kIo,
  kInternal,
};

const char* StatusCodeName(StatusCode code);

class Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message)
      : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "<code name>: <message>", or "ok".
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string m) {
  return Status(StatusCode::kInvalidArgument, std::move(m));
}
inline Status NotFound(std::string m) {
  return Status(StatusCode::kNotFound, std::move(m));
}
inline Status Refused(std::string m) {
  return Status(StatusCode::kRefused, std::move(m));
}
inline Status Internal(std::string m) {
  return Status(StatusCode::kInternal, std::move(m));
}
inline Status IoError(std::string m) {
  return Status(StatusCode::kIo, std::move(m));
}

// Either a value or a non-OK Status.
template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {}  // NOLINT

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOkStatus;
    return ok() ? kOkStatus : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace tessera

#define TESSERA_RETURN_IF_ERROR(expr)          \
  do {                                         \
    ::tessera::Status _st = (expr);            \
    if (!_st.ok()) return _st;                 \
  } while (0)

#endif  // TESSERA_COMMON_STATUS_H_
