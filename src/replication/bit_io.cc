#include "replication/bit_io.h"

namespace tessera::replication {

void PutU32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}

void PutU64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}

void PutF64(std::string& out, double v) {
  PutU64(out, std::bit_cast<uint64_t>(v));
}

bool ByteReader::U8(uint8_t* v) {
  if (remaining() < 1) return false;
  *v = static_cast<uint8_t>(bytes_[pos_++]);
  return true;
}

bool ByteReader::U32(uint32_t* v) {
  if (remaining() < 4) return false;
  uint32_t r = 0;
  for (int i = 0; i < 4; ++i) {
    r |= static_cast<uint32_t>(static_cast<uint8_t>(bytes_[pos_ + i]))
         << (8 * i);
  }
  pos_ += 4;
  *v = r;
  return true;
}

bool ByteReader::U64(uint64_t* v) {
  if (remaining() < 8) return false;
  uint64_t r = 0;
  for (int i = 0; i < 8; ++i) {
    r |= static_cast<uint64_t>(static_cast<uint8_t>(bytes_[pos_ + i]))
         << (8 * i);
  }
  pos_ += 8;
  *v = r;
  return true;
}

bool ByteReader::F32(float* v) {
  uint32_t bits = 0;
  if (!U32(&bits)) return false;
  *v = std::bit_cast<float>(bits);
  return true;
}

bool ByteReader::F64(double* v) {
  uint64_t bits = 0;
  if (!U64(&bits)) return false;
  *v = std::bit_cast<double>(bits);
  return true;
}

bool ByteReader::Varint(uint64_t* v) {
  uint64_t r = 0;
  for (size_t i = 0; i < 10; ++i) {
    if (pos_ + i >= bytes_.size()) return false;
    const uint8_t b = static_cast<uint8_t>(bytes_[pos_ + i]);
    if (i == 9 && b > 1) return false;  // over 64 bits
    r |= static_cast<uint64_t>(b & 0x7f) << (7 * i);
    if ((b & 0x80) == 0) {
      pos_ += i + 1;
      *v = r;
      return true;
    }
  }
  return false;  // an 11th byte would be needed
}

bool ByteReader::Bytes(size_t n, std::string_view* v) {
  if (remaining() < n) return false;
  *v = bytes_.substr(pos_, n);
  pos_ += n;
  return true;
}

bool BitReader::Read(int n, uint64_t* v) {
  if (static_cast<uint64_t>(n) > bits_remaining()) return false;
  uint64_t r = 0;
  uint64_t pos = pos_;
  int left = n;
  while (left > 0) {
    const uint8_t byte = static_cast<uint8_t>(bytes_[pos / 8]);
    const int avail = 8 - static_cast<int>(pos % 8);
    const int take = left < avail ? left : avail;
    const uint64_t bits = (byte >> (avail - take)) & ((1u << take) - 1);
    r = (r << take) | bits;
    pos += take;
    left -= take;
  }
  pos_ = pos;
  *v = r;
  return true;
}

bool BitReader::ReadExpGolomb(int k, uint64_t* v) {
  const uint64_t start = pos_;
  int zeros = 0;
  for (;;) {
    uint64_t bit = 0;
    if (!Read(1, &bit)) {
      pos_ = start;
      return false;
    }
    if (bit != 0) break;
    ++zeros;
    if (zeros + k + 1 > 64) {
      pos_ = start;
      return false;
    }
  }
  // The 1 just read is the top bit of w.
  uint64_t rest = 0;
  const int n = zeros + k + 1;
  if (!Read(n - 1, &rest)) {
    pos_ = start;
    return false;
  }
  const uint64_t w = (uint64_t{1} << (n - 1)) | rest;
  *v = w - (uint64_t{1} << k);
  return true;
}

}  // namespace tessera::replication
