// A small bounds-checked MessagePack reader over untrusted bytes, for the
// patch decoder (patch_codec.cc). It reads one item header at a time and
// never allocates: a string's bytes are a view into the input, a container
// is only its count (the caller reads its elements). Integers are
// classified by value, not by format: any non-negative integer is kUint,
// any negative one kInt. Internal to tessera_realm.
#ifndef TESSERA_REALM_MSGPACK_READER_H_
#define TESSERA_REALM_MSGPACK_READER_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace tessera::realm {

enum class MsgKind { kNil, kBool, kUint, kInt, kFloat, kStr, kArray, kMap };
const char* MsgKindName(MsgKind kind);

struct MsgItem {
  MsgKind kind = MsgKind::kNil;
  bool b = false;
  uint64_t u = 0;    // kUint
  int64_t i = 0;     // kInt (always < 0)
  double f = 0;      // kFloat (float32 widened)
  size_t count = 0;  // kStr: bytes (not yet read); kArray/kMap: elements
};

class MsgReader {
 public:
  explicit MsgReader(std::span<const uint8_t> bytes) : bytes_(bytes) {}

  // Reads the next item's header; false with the reason in *why when the
  // bytes end early or the type is not one patches use (bin, ext, 0xc1).
  bool Next(MsgItem* item, std::string* why);
  // The `n` bytes of a string whose header Next just read.
  bool Payload(size_t n, std::string_view* out, std::string* why);

  size_t pos() const { return pos_; }
  size_t left() const { return bytes_.size() - pos_; }
  bool done() const { return pos_ == bytes_.size(); }

 private:
  bool Be(size_t n, uint64_t* v, std::string* why);

  std::span<const uint8_t> bytes_;
  size_t pos_ = 0;
};

// Whether `text` is well-formed UTF-8 (no overlong forms, surrogates or
// code points past U+10FFFF).
bool ValidUtf8(std::string_view text);

}  // namespace tessera::realm

#endif  // TESSERA_REALM_MSGPACK_READER_H_
