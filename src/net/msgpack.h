// A small MessagePack (https://github.com/msgpack/msgpack/blob/master/spec.md)
// writer and reader for the wire protocol. Debian's msgpack-cxx conflicts
// with our Boost, and the protocol needs only a handful of types.
//
// Writer: appends to a std::string, always in the smallest encoding.
// Reader: zero-copy over a byte span of untrusted input. Every length and
// element count is checked against the bytes that remain before anything
// is read, so no call ever reads past the end; a failed call leaves the
// position unchanged. Skip() is iterative and refuses nesting deeper than
// the reader's depth limit.
//
// Neither class is thread-safe; both are cheap to create per message.
#ifndef TESSERA_NET_MSGPACK_H_
#define TESSERA_NET_MSGPACK_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "common/status.h"

namespace tessera::net::msgpack {

// The family of the next value. Integers are split by sign, whatever their
// encoding: a non-negative int8..int64 is a kUint, as is every uint format.
enum class Type : uint8_t {
  kNil,
  kBool,
  kUint,
  kNegInt,
  kFloat,
  kStr,
  kBin,
  kArray,
  kMap,
  kExt,
};
const char* TypeName(Type type);

// Appends values to `*out` (not owned; must outlive the writer). Lengths
// and counts must be below 2^32 (MessagePack's limit; a programmer error
// otherwise).
class Writer {
 public:
  explicit Writer(std::string* out) : out_(out) {}

  void Nil();
  void Bool(bool v);
  void Uint(uint64_t v);
  void Int(int64_t v);
  void Double(double v);  // always float64
  void Str(std::string_view s);
  void Bin(std::string_view bytes);
  // Headers only: the caller appends exactly `n` bytes / values after them.
  void StrHeader(size_t n);
  void BinHeader(size_t n);
  void ArrayHeader(size_t n);
  void MapHeader(size_t n);

 private:
  void Byte(uint8_t b);
  void BigEndian(uint64_t v, int bytes);
  std::string* out_;
};

class Reader {
 public:
  static constexpr int kMaxDepth = 128;

  // `bytes` must outlive the reader and every view it returns. `max_depth`
  // (clamped to 1..kMaxDepth) bounds the container nesting Skip() accepts
  // (a scalar is at depth 0, [[1]] at depth 2).
  explicit Reader(std::span<const uint8_t> bytes, int max_depth = 64);

  size_t offset() const { return pos_; }
  size_t remaining() const { return bytes_.size() - pos_; }
  bool AtEnd() const { return pos_ == bytes_.size(); }

  // The type of the next value, without consuming it. Errors
  // (kInvalidArgument): no bytes left, the never-used byte 0xc1, or a value
  // whose header, length or element count does not fit in what remains.
  Result<Type> PeekType() const;

  // Each Read consumes one value of the named type. Errors
  // (kInvalidArgument): as PeekType, or another type is next ("expected
  // an unsigned integer, got str"), or the value does not fit the result.
  Status ReadNil();
  Result<bool> ReadBool();
  Result<uint64_t> ReadUint();         // any non-negative integer
  Result<int64_t> ReadInt();           // any integer in int64 range
  Result<double> ReadDouble();         // float32 or float64
  Result<std::string_view> ReadStr();  // bytes are not checked for UTF-8
  Result<std::string_view> ReadBin();
  // Return the element count (a map's count of key/value pairs); the
  // elements follow. The count is checked against the remaining bytes.
  Result<uint32_t> ReadArrayHeader();
  Result<uint32_t> ReadMapHeader();

  // Consumes one complete value of any type (containers with everything
  // inside them). Errors: malformed or truncated data, nesting deeper than
  // the depth limit. On error the position is unchanged.
  Status Skip();

 private:
  struct Head;
  Result<Head> ParseHead(size_t pos) const;
  Result<Head> Expect(Type type, const char* want) const;

  std::span<const uint8_t> bytes_;
  size_t pos_ = 0;
  int max_depth_;
};

}  // namespace tessera::net::msgpack

#endif  // TESSERA_NET_MSGPACK_H_
