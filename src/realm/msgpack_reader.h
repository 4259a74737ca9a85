// A small bounds-checked MessagePack reader over untrusted bytes, for the
// patch decoder (patch_decode.cc) and the realm protocol's messages
// (wire.cc). It reads one item header at a time and never allocates: a
// string's bytes are a view into the input, a container is only its count
// (the caller reads its elements). Integers are classified by value, not by
// format: any non-negative integer is kUint, any negative one kInt.
// Internal to tessera_realm.
#ifndef TESSERA_REALM_MSGPACK_READER_H_
#define TESSERA_REALM_MSGPACK_READER_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace tessera::realm {

enum class MsgKind {
  kNil,
  kBool,
  kUint,
  kInt,
  kFloat,
  kStr,
  kArray,
  kMap,
  kBin,  // MsgReader::Mode::kAll only
  kExt,  // MsgReader::Mode::kAll only
};
const char* MsgKindName(MsgKind kind);

struct MsgItem {
  MsgKind kind = MsgKind::kNil;
  bool b = false;
  uint64_t u = 0;       // kUint
  int64_t i = 0;        // kInt (always < 0)
  double f = 0;         // kFloat (float32 widened)
  int8_t ext_type = 0;  // kExt
  // kStr, kBin, kExt: payload bytes (not yet read); kArray/kMap: elements.
  size_t count = 0;
};

class MsgReader {
 public:
  // kPatch: the types patches use (bin, ext and 0xc1 are refused); kAll:
  // every MessagePack type (only 0xc1 is refused).
  enum class Mode { kPatch, kAll };

  explicit MsgReader(std::span<const uint8_t> bytes, Mode mode = Mode::kPatch)
      : bytes_(bytes), mode_(mode) {}

  // Reads the next item's header; false with the reason in *why when the
  // bytes end early or the type is refused in this mode.
  bool Next(MsgItem* item, std::string* why);
  // The `n` payload bytes of a str, bin or ext whose header Next just read.
  bool Payload(size_t n, std::string_view* out, std::string* why);
  // Skips the rest of the item whose header Next just read: a payload, or
  // a container's elements however deeply nested (no recursion, nothing
  // allocated; a count that cannot fit in the bytes left is refused early).
  bool Skip(const MsgItem& item, std::string* why);

  size_t pos() const { return pos_; }
  size_t left() const { return bytes_.size() - pos_; }
  bool done() const { return pos_ == bytes_.size(); }

 private:
  bool Be(size_t n, uint64_t* v, std::string* why);

  std::span<const uint8_t> bytes_;
  Mode mode_;
  size_t pos_ = 0;
};

// Whether `text` is well-formed UTF-8 (no overlong forms, surrogates or
// code points past U+10FFFF).
bool ValidUtf8(std::string_view text);

}  // namespace tessera::realm

#endif  // TESSERA_REALM_MSGPACK_READER_H_
