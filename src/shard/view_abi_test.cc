#include "shard/view_abi.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

namespace tessera::shard {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

template <class T>
void Put(std::string& out, T v) {
  char buf[sizeof(T)];
  std::memcpy(buf, &v, sizeof(T));
  out.append(buf, sizeof(T));
}

std::string Config(double cell, double margin, uint8_t flags) {
  std::string s;
  Put(s, cell);
  Put(s, margin);
  Put(s, flags);
  return s;
}

std::string Entity(uint64_t id, uint32_t gen, float x, float y) {
  std::string s;
  Put(s, id);
  Put(s, gen);
  Put(s, x);
  Put(s, y);
  return s;
}

TEST(ViewAbiTest, InterestConfigReadsAndRefusesBadValues) {
  Result<GuestInterestConfig> ok = ParseInterestConfig(Config(150, 15, 1));
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->cell_size, 150);
  EXPECT_EQ(ok->margin, 15);
  EXPECT_TRUE(ok->shared_snapshots);
  EXPECT_FALSE(ParseInterestConfig(Config(150, 15, 1).substr(0, 16)).ok());
  EXPECT_THAT(ParseInterestConfig(Config(0, 1, 0)).status().message(),
              HasSubstr("cell_size"));
  EXPECT_THAT(
      ParseInterestConfig(Config(std::nan(""), 1, 0)).status().message(),
      HasSubstr("cell_size"));
  EXPECT_THAT(ParseInterestConfig(Config(10, -1, 0)).status().message(),
              HasSubstr("margin"));
  EXPECT_THAT(ParseInterestConfig(Config(10, 1, 4)).status().message(),
              HasSubstr("flag"));
}

TEST(ViewAbiTest, EntitiesAreParsedAndChecked) {
  std::string bytes;
  Put<uint32_t>(bytes, 2);
  bytes += Entity(7, 1, 1.5f, -2.0f) + Entity(3, 0, 0, 0);
  std::vector<GuestEntity> out;
  ASSERT_TRUE(ParseEntities(bytes, out).ok());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].id, 7u);
  EXPECT_EQ(out[0].generation, 1u);
  EXPECT_EQ(out[0].x, 1.5f);
  EXPECT_EQ(out[0].y, -2.0f);

  EXPECT_THAT(ParseEntities(bytes.substr(0, bytes.size() - 1), out).message(),
              HasSubstr("2 entities need 40 bytes"));
  std::string dup;
  Put<uint32_t>(dup, 2);
  dup += Entity(7, 0, 0, 0) + Entity(7, 0, 1, 1);
  EXPECT_THAT(ParseEntities(dup, out).message(), HasSubstr("listed twice"));
  std::string big;
  Put<uint32_t>(big, 1);
  big += Entity(uint64_t{1} << 53, 0, 0, 0);
  EXPECT_THAT(ParseEntities(big, out).message(), HasSubstr("2^53"));
  std::string inf;
  Put<uint32_t>(inf, 1);
  inf += Entity(1, 0, std::numeric_limits<float>::infinity(), 0);
  EXPECT_THAT(ParseEntities(inf, out).message(), HasSubstr("non-finite"));
  EXPECT_FALSE(ParseEntities("", out).ok());
}

TEST(ViewAbiTest, SubscriberListAndAreas) {
  const std::string subs[] = {"ann", "b"};
  const std::string list = EncodeSubscriberList(subs);
  std::string want;
  Put<uint32_t>(want, 2);
  Put<uint32_t>(want, 3);
  want += "ann";
  Put<uint32_t>(want, 1);
  want += "b";
  EXPECT_EQ(list, want);

  std::string areas;
  Put<uint8_t>(areas, 1);
  Put<float>(areas, 10);
  Put<float>(areas, 20);
  Put<float>(areas, 30);
  Put<uint8_t>(areas, 0);
  Put<float>(areas, 0);
  Put<float>(areas, 0);
  Put<float>(areas, 0);
  std::vector<std::optional<GuestArea>> out;
  ASSERT_TRUE(ParseAreas(areas, 2, out).ok());
  ASSERT_TRUE(out[0].has_value());
  EXPECT_EQ(out[0]->radius, 30);
  EXPECT_FALSE(out[1].has_value());
  EXPECT_FALSE(ParseAreas(areas, 3, out).ok());
  std::string bad = areas;
  bad[0] = 2;
  EXPECT_THAT(ParseAreas(bad, 2, out).message(), HasSubstr("has_area"));
  std::string negative;
  Put<uint8_t>(negative, 1);
  Put<float>(negative, 0);
  Put<float>(negative, 0);
  Put<float>(negative, -1);
  EXPECT_THAT(ParseAreas(negative, 1, out).message(),
              HasSubstr("negative radius"));
}

TEST(ViewAbiTest, FilterAndViewRequests) {
  const std::string subs[] = {"a"};
  const uint64_t ids[] = {4, 9};
  const std::span<const uint64_t> cands[] = {ids};
  std::string want;
  Put<uint32_t>(want, 1);
  Put<uint32_t>(want, 1);
  want += "a";
  Put<uint32_t>(want, 2);
  Put<uint64_t>(want, 4);
  Put<uint64_t>(want, 9);
  EXPECT_EQ(EncodeFilterRequest(subs, cands), want);

  const uint64_t entered[] = {9};
  std::string view;
  Put<uint32_t>(view, 1);
  view += "a";
  Put<uint32_t>(view, 2);
  Put<uint64_t>(view, 4);
  Put<uint64_t>(view, 9);
  Put<uint32_t>(view, 1);
  Put<uint64_t>(view, 9);
  Put<uint32_t>(view, 0);
  EXPECT_EQ(EncodeViewRequest("a", ids, entered, {}), view);
}

}  // namespace
}  // namespace tessera::shard
