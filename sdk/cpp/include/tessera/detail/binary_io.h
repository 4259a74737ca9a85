// Little-endian binary writing and bounds-checked reading for the interest and
// replication exports (docs/guest-abi.md, "Interest and replication"). Byte
// order is explicit, so native builds on any host produce the same bytes as
// wasm32.
#ifndef TESSERA_DETAIL_BINARY_IO_H_
#define TESSERA_DETAIL_BINARY_IO_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace tessera::detail {

// Appends to a caller-owned buffer.
class BinaryWriter {
 public:
  explicit BinaryWriter(std::string& out) : out_(out) {}

  void u8(std::uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void u32(std::uint32_t v) { le(v, 4); }
  void u64(std::uint64_t v) { le(v, 8); }
  void f32(float v) {
    std::uint32_t bits = 0;
    std::memcpy(&bits, &v, sizeof bits);
    le(bits, 4);
  }
  void f64(double v) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof bits);
    le(bits, 8);
  }
  void bytes(std::string_view v) { out_.append(v.data(), v.size()); }
  // Overwrites 4 bytes at `at` (a count written before its items).
  void patch_u32(std::size_t at, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) {
      out_[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
    }
  }
  std::size_t size() const { return out_.size(); }

 private:
  void le(std::uint64_t v, int n) {
    char b[8];
    for (int i = 0; i < n; ++i) b[i] = static_cast<char>((v >> (8 * i)) & 0xff);
    out_.append(b, static_cast<std::size_t>(n));
  }

  std::string& out_;
};

// Reads from a byte view. After the first failure every read returns zero
// and ok() stays false; error() says what was short.
class BinaryReader {
 public:
  explicit BinaryReader(std::string_view in) : in_(in) {}

  std::uint8_t u8(const char* what) {
    return static_cast<std::uint8_t>(le(1, what));
  }
  std::uint32_t u32(const char* what) {
    return static_cast<std::uint32_t>(le(4, what));
  }
  std::uint64_t u64(const char* what) { return le(8, what); }
  double f64(const char* what) {
    const std::uint64_t bits = le(8, what);
    double v = 0;
    std::memcpy(&v, &bits, sizeof v);
    return v;
  }
  // A u32 byte length, then that many bytes.
  std::string_view str(const char* what) {
    const std::uint32_t n = u32(what);
    if (!take(n, what)) return {};
    std::string_view s = in_.substr(pos_ - n, n);
    return s;
  }
  // Whether `count` items of at least `item_bytes` each can still follow
  // (guards reserve() against absurd counts).
  bool can_hold(std::uint64_t count, std::size_t item_bytes) const {
    return ok_ && count <= (in_.size() - pos_) / item_bytes;
  }
  // Fails unless every byte was read.
  bool finish() {
    if (ok_ && pos_ != in_.size()) {
      fail("trailing bytes", nullptr);
    }
    return ok_;
  }
  // Marks the input bad (e.g. a count too large for what follows).
  void fail(const char* problem, const char* what) {
    if (!ok_) return;
    ok_ = false;
    error_ = std::string(problem);
    if (what != nullptr) error_ += std::string(" reading ") + what;
    error_ += " at byte " + std::to_string(pos_);
  }

  bool ok() const { return ok_; }
  const std::string& error() const { return error_; }

 private:
  bool take(std::size_t n, const char* what) {
    if (!ok_) return false;
    if (in_.size() - pos_ < n) {
      fail("unexpected end", what);
      return false;
    }
    pos_ += n;
    return true;
  }
  std::uint64_t le(std::size_t n, const char* what) {
    if (!take(n, what)) return 0;
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < n; ++i) {
      v |= static_cast<std::uint64_t>(
               static_cast<unsigned char>(in_[pos_ - n + i]))
           << (8 * i);
    }
    return v;
  }

  std::string_view in_;
  std::size_t pos_ = 0;
  bool ok_ = true;
  std::string error_;
};

}  // namespace tessera::detail

#endif  // TESSERA_DETAIL_BINARY_IO_H_
