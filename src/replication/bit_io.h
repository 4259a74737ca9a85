// Byte and bit level I/O for the replication encodings: unsigned LEB128
// varints, zigzag, little-endian fixed-width reads over untrusted bytes,
// MSB-first bit writing/reading and Exp-Golomb codes of order k.
//
// Readers never read past their input: every call checks the bytes (bits)
// that remain first and returns false, leaving the position unchanged,
// when they are not there.
#ifndef TESSERA_REPLICATION_BIT_IO_H_
#define TESSERA_REPLICATION_BIT_IO_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace tessera::replication {

inline constexpr uint64_t ZigZag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
inline constexpr int64_t UnZigZag(uint64_t u) {
  return static_cast<int64_t>(u >> 1) ^ -static_cast<int64_t>(u & 1);
}

// Appends `v` as an unsigned LEB128 varint (1..10 bytes).
inline void PutVarint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}
inline constexpr size_t VarintSize(uint64_t v) {
  return v == 0 ? 1 : (static_cast<size_t>(std::bit_width(v)) + 6) / 7;
}

void PutU32(std::string& out, uint32_t v);
void PutU64(std::string& out, uint64_t v);
void PutF64(std::string& out, double v);

// Bounds-checked little-endian reader over untrusted bytes.
class ByteReader {
 public:
  explicit ByteReader(std::string_view bytes) : bytes_(bytes) {}

  size_t offset() const { return pos_; }
  size_t remaining() const { return bytes_.size() - pos_; }
  bool AtEnd() const { return pos_ == bytes_.size(); }

  bool U8(uint8_t* v);
  bool U32(uint32_t* v);
  bool U64(uint64_t* v);
  bool F32(float* v);
  bool F64(double* v);
  // A varint of at most 10 bytes whose value fits 64 bits.
  bool Varint(uint64_t* v);
  bool Bytes(size_t n, std::string_view* v);

 private:
  std::string_view bytes_;
  size_t pos_ = 0;
};

// Number of bits of the Exp-Golomb order `k` code of `v` (v + 2^k must fit
// 64 bits).
inline constexpr int ExpGolombBits(uint64_t v, int k) {
  const int n = std::bit_width(v + (uint64_t{1} << k));
  return 2 * n - 1 - k;
}

// Writes bits most significant first into a std::string (appending).
class BitWriter {
 public:
  explicit BitWriter(std::string* out) : out_(out) {}

  // The low `n` bits of `v`, 0 <= n <= 64.
  void Write(uint64_t v, int n) {
    if (n > 32) {
      Write32(v >> 32, n - 32);
      n = 32;
    }
    Write32(v & ((uint64_t{1} << n) - 1), n);
  }
  // Exp-Golomb order k (v + 2^k must fit 64 bits).
  void WriteExpGolomb(uint64_t v, int k) {
    const uint64_t w = v + (uint64_t{1} << k);
    const int n = std::bit_width(w);
    Write(0, n - 1 - k);
    Write(w, n);
  }
  // Pads the last byte with zero bits.
  void Flush() {
    if (count_ > 0) {
      out_->push_back(static_cast<char>((acc_ << (8 - count_)) & 0xff));
      acc_ = 0;
      count_ = 0;
    }
  }

 private:
  void Write32(uint64_t v, int n) {  // n <= 32, v < 2^n
    acc_ = (acc_ << n) | v;
    count_ += n;
    while (count_ >= 8) {
      count_ -= 8;
      out_->push_back(static_cast<char>((acc_ >> count_) & 0xff));
    }
  }

  std::string* out_;
  uint64_t acc_ = 0;
  int count_ = 0;  // pending bits in the low bits of acc_, < 8
};

// Reads bits most significant first from untrusted bytes.
class BitReader {
 public:
  explicit BitReader(std::string_view bytes) : bytes_(bytes) {}

  // Bytes touched so far (the last one possibly in part).
  size_t bytes_consumed() const { return (pos_ + 7) / 8; }
  uint64_t bits_remaining() const { return bytes_.size() * 8 - pos_; }

  // `n` bits, 0 <= n <= 64.
  bool Read(int n, uint64_t* v);
  // Exp-Golomb order k; refuses codes whose value part is over 64 bits.
  bool ReadExpGolomb(int k, uint64_t* v);

 private:
  std::string_view bytes_;
  uint64_t pos_ = 0;  // in bits
};

}  // namespace tessera::replication

#endif  // TESSERA_REPLICATION_BIT_IO_H_
