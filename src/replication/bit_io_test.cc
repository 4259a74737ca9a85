// Varints, zigzag, MSB-first bits and Exp-Golomb codes.
#include "replication/bit_io.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "replication/testing/guest_store.h"

namespace tessera::replication {
namespace {

TEST(BitIoTest, ZigZag) {
  EXPECT_EQ(ZigZag(0), 0u);
  EXPECT_EQ(ZigZag(-1), 1u);
  EXPECT_EQ(ZigZag(1), 2u);
  EXPECT_EQ(ZigZag(-2), 3u);
  for (int64_t v : {int64_t{0}, int64_t{-5}, int64_t{123456789},
                    std::numeric_limits<int64_t>::min(),
                    std::numeric_limits<int64_t>::max()}) {
    EXPECT_EQ(UnZigZag(ZigZag(v)), v);
  }
}

TEST(BitIoTest, VarintRoundTripAndSizes) {
  std::vector<uint64_t> values = {0,
                                  1,
                                  127,
                                  128,
                                  16383,
                                  16384,
                                  (uint64_t{1} << 53) - 1,
                                  std::numeric_limits<uint64_t>::max()};
  testing::Rng rng(3);
  for (int i = 0; i < 1000; ++i) values.push_back(rng.Next() >> rng.Below(64));
  std::string out;
  for (uint64_t v : values) {
    const size_t before = out.size();
    PutVarint(out, v);
    EXPECT_EQ(out.size() - before, VarintSize(v)) << v;
  }
  ByteReader r(out);
  for (uint64_t v : values) {
    uint64_t got = 0;
    ASSERT_TRUE(r.Varint(&got));
    EXPECT_EQ(got, v);
  }
  EXPECT_TRUE(r.AtEnd());
  EXPECT_EQ(VarintSize(std::numeric_limits<uint64_t>::max()), 10u);
}

TEST(BitIoTest, VarintRefusesOverlongAndTruncated) {
  uint64_t v = 0;
  // 10th byte above 1: over 64 bits.
  std::string over(9, '\xff');
  over.push_back('\x02');
  EXPECT_FALSE(ByteReader(over).Varint(&v));
  // 11 bytes.
  std::string eleven(10, '\x80');
  eleven.push_back('\x00');
  EXPECT_FALSE(ByteReader(eleven).Varint(&v));
  // Truncated.
  EXPECT_FALSE(ByteReader(std::string("\x80\x80", 2)).Varint(&v));
  EXPECT_FALSE(ByteReader("").Varint(&v));
  // The largest value.
  std::string max(9, '\xff');
  max.push_back('\x01');
  ByteReader r(max);
  ASSERT_TRUE(r.Varint(&v));
  EXPECT_EQ(v, std::numeric_limits<uint64_t>::max());
}

TEST(BitIoTest, FixedWidthLittleEndian) {
  std::string out;
  PutU32(out, 0x01020304);
  PutU64(out, 0x1122334455667788);
  PutF64(out, -2.5);
  EXPECT_EQ(out.substr(0, 4), std::string("\x04\x03\x02\x01", 4));
  ByteReader r(out);
  uint32_t a = 0;
  uint64_t b = 0;
  double c = 0;
  ASSERT_TRUE(r.U32(&a) && r.U64(&b) && r.F64(&c));
  EXPECT_EQ(a, 0x01020304u);
  EXPECT_EQ(b, 0x1122334455667788u);
  EXPECT_EQ(c, -2.5);
  uint8_t byte = 0;
  EXPECT_FALSE(r.U8(&byte));
}

TEST(BitIoTest, BitsAreMostSignificantFirst) {
  std::string out;
  BitWriter w(&out);
  w.Write(1, 1);
  w.Write(0, 2);
  w.Write(0x1f, 5);  // 1 00 11111 = 0x9f
  w.Write(0x5, 3);   // 101, padded: 1010 0000
  w.Flush();
  EXPECT_EQ(out, std::string("\x9f\xa0", 2));
  BitReader r(out);
  uint64_t v = 0;
  ASSERT_TRUE(r.Read(1, &v));
  EXPECT_EQ(v, 1u);
  ASSERT_TRUE(r.Read(7, &v));
  EXPECT_EQ(v, 0x1fu);
  ASSERT_TRUE(r.Read(3, &v));
  EXPECT_EQ(v, 5u);
  EXPECT_EQ(r.bytes_consumed(), 2u);
  ASSERT_TRUE(r.Read(5, &v));
  EXPECT_FALSE(r.Read(1, &v));
}

TEST(BitIoTest, ExpGolombKnownCodes) {
  // Order 0: 0 -> 1, 1 -> 010, 2 -> 011, 3 -> 00100.
  std::string out;
  BitWriter w(&out);
  for (uint64_t v : {0, 1, 2, 3}) w.WriteExpGolomb(v, 0);
  w.Flush();  // 1 010 011 0 0100 -> 1010 0110 0100 0000
  EXPECT_EQ(out, std::string("\xa6\x40", 2));
  // Order 2 of 5: w = 9 = 1001 (4 bits), one zero: 01001.
  EXPECT_EQ(ExpGolombBits(5, 2), 5);
  EXPECT_EQ(ExpGolombBits(0, 3), 4);
}

TEST(BitIoTest, ExpGolombRoundTrip) {
  testing::Rng rng(5);
  std::vector<std::pair<uint64_t, int>> values;
  for (int i = 0; i < 5000; ++i) {
    const int k = static_cast<int>(rng.Below(33));
    uint64_t v = rng.Next() >> (11 + rng.Below(53));  // < 2^53
    values.emplace_back(v, k);
  }
  values.emplace_back(0, 0);
  values.emplace_back(0, 32);
  values.emplace_back((uint64_t{1} << 63) - 1, 0);  // z = 63: 64-bit value
  std::string out;
  BitWriter w(&out);
  uint64_t bits = 0;
  for (auto [v, k] : values) {
    w.WriteExpGolomb(v, k);
    bits += ExpGolombBits(v, k);
  }
  w.Flush();
  EXPECT_EQ(out.size(), (bits + 7) / 8);
  BitReader r(out);
  for (auto [v, k] : values) {
    uint64_t got = 0;
    ASSERT_TRUE(r.ReadExpGolomb(k, &got));
    EXPECT_EQ(got, v);
  }
}

TEST(BitIoTest, ExpGolombRefusesOversizedAndTruncated) {
  // 64 zero bits then a 1: z + k + 1 = 65 > 64.
  std::string zeros(8, '\0');
  zeros.push_back('\x80');
  zeros.append(8, '\0');
  uint64_t v = 0;
  EXPECT_FALSE(BitReader(zeros).ReadExpGolomb(0, &v));
  // 40 zeros with k = 30: 71 > 64.
  std::string z40(5, '\0');
  z40.append(8, '\xff');
  EXPECT_FALSE(BitReader(z40).ReadExpGolomb(30, &v));
  // Truncated: 3 zeros, a 1, then too few bits.
  EXPECT_FALSE(BitReader(std::string("\x10", 1)).ReadExpGolomb(2, &v));
  // All zeros: no terminating 1.
  EXPECT_FALSE(BitReader(std::string("\0\0", 2)).ReadExpGolomb(0, &v));
}

}  // namespace
}  // namespace tessera::replication
