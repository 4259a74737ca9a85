// State shared by the MessagePack and JSON readers: the kind of the next
// value, the first error, the field path it happened under, and the nesting
// depth limit.
//
// Both readers are pull parsers over untrusted bytes with the same API, so the
// value decoder (tessera/decode.h) is written once for both:
//   Kind peek();                      // kind of the next value, not consumed
//   bool read_null(); bool read_bool(bool&);
//   bool read_int64(std::int64_t&); bool read_uint64(std::uint64_t&);
//   bool read_double(double&);        // integers too; finite only
//   bool read_string(std::string&);   // valid UTF-8 only
//   bool begin_array(); bool array_next();
//   bool begin_object(); bool object_next(std::string& key);
//   bool skip();                      // any one value
//   bool finish();                    // nothing but whitespace remains
// array_next()/object_next() return true while there is another element (its
// value must then be read or skipped) and false at the end or on failure.
// Every read returns false once the reader has failed; the first error wins.
#ifndef TESSERA_DETAIL_READER_BASE_H_
#define TESSERA_DETAIL_READER_BASE_H_

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace tessera {

// The kind of a value in either codec.
enum class Kind {
  kNull,
  kBool,
  kInteger,
  kFloat,
  kString,
  kBinary,     // MessagePack bin
  kExtension,  // MessagePack ext
  kArray,
  kObject,
  kEnd,      // no more input
  kInvalid,  // bytes that start no value
};

// "a string", "an object", ... for error messages.
inline const char* kind_name(Kind kind) {
  switch (kind) {
    case Kind::kNull:
      return "null";
    case Kind::kBool:
      return "a boolean";
    case Kind::kInteger:
      return "an integer";
    case Kind::kFloat:
      return "a number";
    case Kind::kString:
      return "a string";
    case Kind::kBinary:
      return "binary data";
    case Kind::kExtension:
      return "a MessagePack extension";
    case Kind::kArray:
      return "an array";
    case Kind::kObject:
      return "an object";
    case Kind::kEnd:
      return "the end of the input";
    case Kind::kInvalid:
      break;
  }
  return "malformed data";
}

namespace detail {

inline std::string mismatch_message(std::string_view expected, Kind found) {
  std::string text = "expected ";
  text += expected;
  text += ", found ";
  text += kind_name(found);
  return text;
}

// A number as read from either codec, before conversion to the target type.
struct Number {
  enum class Type { kSigned, kUnsigned, kDouble } type = Type::kSigned;
  std::int64_t i = 0;   // kSigned
  std::uint64_t u = 0;  // kUnsigned
  double d = 0;         // kDouble
};

class ReaderBase {
 public:
  // Containers nested deeper than this are refused, so hostile input cannot
  // exhaust the guest's stack.
  static constexpr int kMaxDepth = 64;

  bool failed() const { return failed_; }

  // The first error, prefixed with the field path it happened under:
  //   field "players[2].x": expected a number, found a string
  std::string error() const {
    if (path_.empty()) return message_;
    return "field \"" + path_ + "\": " + message_;
  }

  // Records `message` unless an error is already recorded. Returns false so
  // callers can `return fail(...)`.
  bool fail(std::string_view message) {
    if (!failed_) {
      failed_ = true;
      message_ = message;
    }
    return false;
  }

  // Called while unwinding from a failed nested read: records that the error
  // happened inside field `name` / element `index`.
  void prefix_field(std::string_view name) {
    if (path_.empty() || path_[0] == '[') {
      path_.insert(0, name);
    } else {
      path_.insert(0, std::string(name) + ".");
    }
  }
  void prefix_index(std::size_t index) {
    std::string segment = "[" + std::to_string(index) + "]";
    if (!path_.empty() && path_[0] != '[') segment += '.';
    path_.insert(0, segment);
  }

 protected:
  // Conversions shared by both readers. An integral, in-range floating value
  // is accepted where an integer is expected (JavaScript has one number type).
  bool number_to_int64(const Number& n, std::int64_t& out) {
    switch (n.type) {
      case Number::Type::kSigned:
        out = n.i;
        return true;
      case Number::Type::kUnsigned:
        if (n.u > static_cast<std::uint64_t>(
                      std::numeric_limits<std::int64_t>::max())) {
          return fail("integer out of range");
        }
        out = static_cast<std::int64_t>(n.u);
        return true;
      case Number::Type::kDouble:
        // 2^63 is exactly representable; the range is [-2^63, 2^63).
        if (!(n.d >= -9223372036854775808.0 && n.d < 9223372036854775808.0)) {
          return fail("integer out of range");
        }
        if (std::trunc(n.d) != n.d) {
          return fail("expected an integer, found a number with a fraction");
        }
        out = static_cast<std::int64_t>(n.d);
        return true;
    }
    return false;
  }
  bool number_to_uint64(const Number& n, std::uint64_t& out) {
    switch (n.type) {
      case Number::Type::kSigned:
        if (n.i < 0) return fail("integer out of range");
        out = static_cast<std::uint64_t>(n.i);
        return true;
      case Number::Type::kUnsigned:
        out = n.u;
        return true;
      case Number::Type::kDouble:
        if (!(n.d >= 0 && n.d < 18446744073709551616.0)) {
          return fail("integer out of range");
        }
        if (std::trunc(n.d) != n.d) {
          return fail("expected an integer, found a number with a fraction");
        }
        out = static_cast<std::uint64_t>(n.d);
        return true;
    }
    return false;
  }
  // Non-finite values are refused: NaN would slip through range checks such
  // as `x < 0 || x > width`.
  bool number_to_double(const Number& n, double& out) {
    switch (n.type) {
      case Number::Type::kSigned:
        out = static_cast<double>(n.i);
        return true;
      case Number::Type::kUnsigned:
        out = static_cast<double>(n.u);
        return true;
      case Number::Type::kDouble:
        if (!std::isfinite(n.d)) return fail("expected a finite number");
        out = n.d;
        return true;
    }
    return false;
  }

  bool enter() {
    if (depth_ >= kMaxDepth) return fail("nested too deeply");
    ++depth_;
    return true;
  }
  void leave() { --depth_; }
  int depth() const { return depth_; }

 private:
  bool failed_ = false;
  int depth_ = 0;
  std::string message_;
  std::string path_;
};

}  // namespace detail
}  // namespace tessera

#endif  // TESSERA_DETAIL_READER_BASE_H_
