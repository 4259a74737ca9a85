// The transfer and message layouts (talk_abi.h): bytes written here by hand
// from docs/guest-abi.md "Transfers and messages", decoded, and every kind
// of malformed output refused with its message.
#include "shard/talk_abi.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tessera/abi.h"

namespace tessera::shard {
namespace {

using ::testing::HasSubstr;

// Little-endian bytes, written independently of talk_abi.cc.
class Bytes : public std::string {
 public:
  Bytes& u8(unsigned v) {
    push_back(static_cast<char>(v));
    return *this;
  }
  Bytes& u32(uint32_t v) {
    for (int i = 0; i < 4; ++i) push_back(static_cast<char>(v >> (8 * i)));
    return *this;
  }
  Bytes& str(std::string_view v) {
    u32(static_cast<uint32_t>(v.size()));
    append(v);
    return *this;
  }
  Bytes& raw(std::string_view v) {
    append(v);
    return *this;
  }
};

TEST(TalkAbiTest, EncodeTransferInHasTheLayout) {
  EXPECT_EQ(EncodeTransferIn("alice", std::string("\x00st", 3),
                             R"({"party":"p"})", false, "zone-0"),
            std::string(Bytes()
                            .u32(0)
                            .str("alice")
                            .str("zone-0")
                            .str(R"({"party":"p"})")
                            .str(std::string("\x00st", 3))));
  EXPECT_EQ(EncodeTransferIn("", "", "{}", true, "z"),
            std::string(Bytes()
                            .u32(abi::kTransferInReturning)
                            .str("")
                            .str("z")
                            .str("{}")
                            .str("")));
}

TEST(TalkAbiTest, EncodeMessagesKeepsTheOrder) {
  std::vector<std::shared_ptr<const ShardMessage>> batch = {
      std::make_shared<const ShardMessage>(ShardMessage{"z0", "relic", "x"}),
      std::make_shared<const ShardMessage>(ShardMessage{"", "news", ""}),
  };
  EXPECT_EQ(EncodeMessages(batch), std::string(Bytes()
                                                   .u32(2)
                                                   .str("z0")
                                                   .str("relic")
                                                   .str("x")
                                                   .str("")
                                                   .str("news")
                                                   .str("")));
  EXPECT_EQ(EncodeMessages({}), std::string(Bytes().u32(0)));
}

TEST(TalkAbiTest, DecodesTransferRequests) {
  auto r = DecodeTransferRequests(
      Bytes().u32(2).str("alice").str("z1").str("bob").str(""));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].subscriber, "alice");
  EXPECT_EQ((*r)[0].to, "z1");
  EXPECT_EQ((*r)[1].subscriber, "bob");
  EXPECT_EQ((*r)[1].to, "");
  auto none = DecodeTransferRequests(Bytes().u32(0));
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(TalkAbiTest, DecodesGroupsKeepingWhatTheHostLimits) {
  const std::string long_name(abi::kMaxGroupNameBytes + 10, 'g');
  auto r = DecodeGroups(Bytes().u32(3).str("world").str("").str(long_name));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, (std::vector<std::string>{"world", "", long_name}));
}

TEST(TalkAbiTest, DecodesOutboxOfEachTargetKind) {
  auto r = DecodeOutbox(Bytes()
                            .u32(3)
                            .u8(abi::kTargetShard)
                            .str("z1")
                            .str("hi")
                            .str("data")
                            .u8(abi::kTargetGroup)
                            .str("world")
                            .str("relic_taken")
                            .str("")
                            .u8(abi::kTargetAll)
                            .str("")
                            .str("t")
                            .str(std::string("\x00\xff", 2)));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 3u);
  EXPECT_EQ((*r)[0].to.kind, TargetKind::kShard);
  EXPECT_EQ((*r)[0].to.name, "z1");
  EXPECT_EQ((*r)[0].topic, "hi");
  EXPECT_EQ((*r)[0].data, "data");
  EXPECT_EQ((*r)[1].to.kind, TargetKind::kGroup);
  EXPECT_EQ((*r)[1].to.name, "world");
  EXPECT_EQ((*r)[1].topic, "relic_taken");
  EXPECT_EQ((*r)[2].to.kind, TargetKind::kAll);
  EXPECT_EQ((*r)[2].to.name, "");
  EXPECT_EQ((*r)[2].data, std::string("\x00\xff", 2));
}

// Each malformed output: the message names the export, the item and why.
struct Bad {
  const char* name;
  std::string bytes;
  const char* message;
};

TEST(TalkAbiTest, MalformedTransferRequestsAreRefused) {
  const Bad cases[] = {
      {"empty", "",
       "tessera_transfer_requests output: count: needs 4 bytes at byte 0, "
       "only 0 left"},
      {"count overflow", Bytes().u32(0xffffffffu),
       "tessera_transfer_requests output: count 4294967295 of requests needs "
       "at least 34359738360 bytes, only 0 follow"},
      {"length past the end", Bytes().u32(1).str("a").u32(50).raw("xyz"),
       "tessera_transfer_requests output: request 0: target shard: length "
       "50 runs past the end (3 bytes left at byte 13)"},
      {"truncated length",
       Bytes().u32(1).str("abcd").raw(std::string("\x01\x00", 2)),
       "tessera_transfer_requests output: request 0: target shard: length: "
       "needs 4 bytes at byte 12, only 2 left"},
      {"trailing", Bytes().u32(1).str("a").str("b").raw("!!"),
       "tessera_transfer_requests output: 2 trailing bytes after the last "
       "item (at byte 14)"},
  };
  for (const Bad& c : cases) {
    auto r = DecodeTransferRequests(c.bytes);
    ASSERT_FALSE(r.ok()) << c.name;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << c.name;
    EXPECT_EQ(r.status().message(), c.message) << c.name;
  }
}

TEST(TalkAbiTest, MalformedGroupsAreRefused) {
  const Bad cases[] = {
      {"short count", std::string("\x01\x00", 2),
       "tessera_groups output: count: needs 4 bytes at byte 0, only 2 left"},
      {"count overflow", Bytes().u32(3).str("a"),
       "tessera_groups output: count 3 of groups needs at least 12 bytes, "
       "only 5 follow"},
      {"length past the end", Bytes().u32(2).str("a").u32(9).raw("abc"),
       "tessera_groups output: group 1: length 9 runs past the end (3 bytes "
       "left at byte 13)"},
      {"trailing", Bytes().u32(0).raw("x"),
       "tessera_groups output: 1 trailing bytes after the last item (at "
       "byte 4)"},
  };
  for (const Bad& c : cases) {
    auto r = DecodeGroups(c.bytes);
    ASSERT_FALSE(r.ok()) << c.name;
    EXPECT_EQ(r.status().message(), c.message) << c.name;
  }
}

TEST(TalkAbiTest, MalformedOutboxesAreRefused) {
  const Bad cases[] = {
      {"count overflow", Bytes().u32(2).u8(0).str("").str("").str(""),
       "tessera_outbox output: count 2 of messages needs at least 26 bytes, "
       "only 13 follow"},
      {"unknown target kind", Bytes().u32(1).u8(3).str("z").str("t").str("d"),
       "tessera_outbox output: message 0: unknown target kind 3 at byte 4 "
       "(0 shard, 1 group, 2 all)"},
      {"all with a target", Bytes().u32(1).u8(2).str("z").str("t").str("d"),
       "tessera_outbox output: message 0: target kind all with a non-empty "
       "target"},
      {"topic past the end",
       Bytes().u32(1).u8(0).str("z").u32(900).raw("abcdefgh"),
       "tessera_outbox output: message 0: topic: length 900 runs past the "
       "end (8 bytes left at byte 14)"},
      {"data truncated",
       Bytes()
           .u32(2)
           .u8(1)
           .str("g")
           .str("t")
           .str("d")
           .u8(0)
           .str("z")
           .str("t")
           .raw("\x05"),
       "tessera_outbox output: message 1: data: length: needs 4 bytes at "
       "byte 31, only 1 left"},
      {"trailing", Bytes().u32(1).u8(0).str("z").str("t").str("d").raw("x"),
       "tessera_outbox output: 1 trailing bytes after the last item (at byte "
       "20)"},
  };
  for (const Bad& c : cases) {
    auto r = DecodeOutbox(c.bytes);
    ASSERT_FALSE(r.ok()) << c.name;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << c.name;
    EXPECT_EQ(r.status().message(), c.message) << c.name;
  }
}

TEST(TalkAbiTest, EveryPrefixOfAValidOutboxIsRefused) {
  const std::string whole = Bytes()
                                .u32(2)
                                .u8(0)
                                .str("z1")
                                .str("hi")
                                .str("data")
                                .u8(2)
                                .str("")
                                .str("t")
                                .str("x");
  ASSERT_TRUE(DecodeOutbox(whole).ok());
  for (size_t n = 0; n < whole.size(); ++n) {
    auto r = DecodeOutbox(whole.substr(0, n));
    ASSERT_FALSE(r.ok()) << n;
    EXPECT_THAT(r.status().message(), HasSubstr("tessera_outbox output: "));
  }
}

}  // namespace
}  // namespace tessera::shard
