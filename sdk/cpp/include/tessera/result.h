// Status and Result<T>: errors as values for guest code built without
// exceptions.
//
// A failed Status or Result carries a UTF-8 message; at the ABI boundary the
// SDK copies that text into the output buffer and returns abi::kError. Neither
// type ever aborts: reading the value of a failed Result is a programmer error
// checked only by the caller (call ok() first).
#ifndef TESSERA_RESULT_H_
#define TESSERA_RESULT_H_

#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace tessera {

// An error message, convertible to a failed Status or Result<T>:
//   return tessera::Error("outside the arena");
struct Error {
  explicit Error(std::string_view text) : message(text) {}
  std::string message;
};

// Success, or an error message. Default-constructed: success.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : failed_(true), message_(std::move(error.message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return !failed_; }
  // Empty when ok().
  const std::string& message() const { return message_; }

 private:
  bool failed_ = false;
  std::string message_;
};

// A value of type T, or an error message.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}
  Result(Error error) : message_(std::move(error.message)) {}
  // Requires !status.ok(): a Result made from a successful Status would hold
  // no value, so it is turned into an error saying so.
  Result(Status status)
      : message_(status.ok() ? std::string("ok status without a value")
                             : status.message()) {}

  bool ok() const { return value_.has_value(); }
  // Empty when ok().
  const std::string& error() const { return message_; }
  // Failed as a Status (drops the value).
  Status status() const { return ok() ? Status() : Status(Error(message_)); }

  // Require ok().
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }

 private:
  std::optional<T> value_;
  std::string message_;
};

}  // namespace tessera

#endif  // TESSERA_RESULT_H_
