// COMMITS (wire.h CommitsWriter) and HELLO's flags: exact bytes, the round
// trip through DecodeServerMessage, the header's shortest forms as the
// entries grow, and a refusal with a short reason for each malformed form.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "realm/patch_testing.h"
#include "realm/wire.h"

namespace tessera::realm::wire {
namespace {

using patch_testing::Bytes;
using patch_testing::FromHex;

Result<Commits> Decode(const std::string& bytes) {
  Result<ServerMessage> msg = DecodeServerMessage(Bytes(bytes));
  if (!msg.ok()) return msg.status();
  if (!std::holds_alternative<Commits>(*msg)) {
    return InvalidArgument("decoded as another message");
  }
  return std::get<Commits>(*msg);
}

std::string Refusal(const std::string& bytes) {
  Result<Commits> msg = Decode(bytes);
  EXPECT_FALSE(msg.ok());
  EXPECT_EQ(msg.status().code(), StatusCode::kInvalidArgument);
  EXPECT_LE(msg.status().message().size(), 123u);
  return msg.status().message();
}

TEST(RealmWireCommits, ExactBytes) {
  CommitsWriter w;
  w.Add(5, "\x90");
  w.AddAck(6, 9);
  w.Add(7, "\x91", 10);
  EXPECT_EQ(w.size(), 3u);
  // [21, [[5, bin 90], [6, nil, 9], [7, bin 91, 10]]]
  EXPECT_EQ(w.Take(),
            FromHex("92 15 93 92 05 c4 01 90 93 06 c0 09 93 07 c4 01 91 0a"));
  // Empty again, and reusable.
  EXPECT_EQ(w.size(), 0u);
  w.Add(300, "");
  EXPECT_EQ(w.Take(), FromHex("92 15 91 92 cd 01 2c c4 00"));
}

TEST(RealmWireCommits, RoundTripsAsTheCommitsAndAcksTheyStandFor) {
  CommitsWriter w;
  w.Add(10, "\x90");
  w.Add(11, "\x91\x92", 3);
  w.AddAck(12, 4);
  w.Add(kMaxInteger, "p");
  Result<Commits> back = Decode(w.Take());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  const std::vector<CommitsEntry> want = {{10, "\x90", std::nullopt},
                                          {11, "\x91\x92", 3},
                                          {12, std::nullopt, 4},
                                          {kMaxInteger, "p", std::nullopt}};
  EXPECT_EQ(back->entries, want);
}

TEST(RealmWireCommits, TheEntriesHeaderTakesItsShortestForm) {
  const std::vector<std::pair<size_t, std::string>> counts = {
      {15, "9f"},
      {16, "dc 00 10"},
      {65535, "dc ff ff"},
      {65536, "dd 00 01 00 00"}};
  for (const auto& [n, hex] : counts) {
    CommitsWriter w;
    for (size_t i = 0; i < n; ++i) w.AddAck(i + 1, 0);
    const std::string bytes = w.Take();
    EXPECT_EQ(bytes.substr(0, 2 + hex.size() / 3 + 1),
              FromHex("92 15") + FromHex(hex))
        << n;
    Result<Commits> back = Decode(bytes);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(back->entries.size(), n);
    EXPECT_EQ(back->entries.back().version, n);
  }
}

TEST(RealmWireCommits, TrailingElementsOfAnEntryAreIgnored) {
  // [21, [[1, bin 90, 2, "x", [nil]]], "later"]
  Result<Commits> msg = Decode(
      FromHex("93 15 91 95 01 c4 01 90 02 a1 78 91 c0 a5 6c 61 74 65 72"));
  ASSERT_TRUE(msg.ok()) << msg.status().ToString();
  EXPECT_EQ(msg->entries,
            (std::vector<CommitsEntry>{{1, std::string("\x90"), 2}}));
}

TEST(RealmWireCommits, RefusesMalformedEntries) {
  EXPECT_EQ(Refusal(FromHex("91 15")), "COMMITS: entries is missing");
  EXPECT_EQ(Refusal(FromHex("92 15 c0")), "COMMITS: entries must be an array");
  EXPECT_EQ(Refusal(FromHex("92 15 90")), "COMMITS: entries must not be empty");
  EXPECT_EQ(Refusal(FromHex("92 15 91 05")), "COMMITS: entry must be an array");
  EXPECT_EQ(Refusal(FromHex("92 15 91 90")),
            "COMMITS: entry version is missing");
  EXPECT_EQ(Refusal(FromHex("92 15 91 91 01")),
            "COMMITS: entry patch is missing");
  EXPECT_EQ(Refusal(FromHex("92 15 91 92 01 a1 78")),
            "COMMITS: entry patch must be bin or nil");
  EXPECT_EQ(Refusal(FromHex("92 15 91 92 01 c0")),
            "COMMITS: entry seq is missing (an ACK entry needs one)");
  EXPECT_EQ(Refusal(FromHex("92 15 91 93 01 c0 ff")),
            "COMMITS: entry seq must be an integer in 0..2^53");
  EXPECT_EQ(Refusal(FromHex("92 15 91 92 cf 00 20 00 00 00 00 00 01 c0")),
            "COMMITS: entry version must be an integer in 0..2^53");
  // Versions increase.
  EXPECT_EQ(Refusal(FromHex("92 15 92 92 02 c4 00 92 02 c4 00")),
            "COMMITS: entry version must be above the one before");
  // More entries announced than bytes.
  EXPECT_FALSE(Decode(FromHex("92 15 dd ff ff ff ff 92 01 c4 00")).ok());
  EXPECT_FALSE(
      Decode(FromHex("92 15 91 92 01 c4 05 90")).ok());  // truncated bin
  EXPECT_EQ(Refusal(FromHex("92 15 91 92 01 c4 00 c0")),
            "trailing bytes after the message");
}

TEST(RealmWireHello, FlagsAreOptionalAndLeftOutWhenZero) {
  EXPECT_EQ(EncodeHello("t", 0, 0), FromHex("95 01 01 a1 74 00 00"));
  EXPECT_EQ(EncodeHello("t", 0, 0, kProtocol, kHelloCommits),
            FromHex("96 01 01 a1 74 00 00 01"));
  auto hello = [](const std::string& bytes) {
    Result<ClientMessage> msg = DecodeClientMessage(Bytes(bytes));
    EXPECT_TRUE(msg.ok()) << msg.status().ToString();
    return msg.ok() ? std::get<Hello>(*msg) : Hello{};
  };
  EXPECT_EQ(hello(FromHex("95 01 01 a1 74 00 00")).flags, 0u);
  EXPECT_EQ(hello(FromHex("96 01 01 a1 74 00 00 01")).flags, kHelloCommits);
  // Unknown bits are kept for the caller to ignore; a 7th element is
  // ignored like any trailing one.
  EXPECT_EQ(hello(FromHex("97 01 01 a1 74 00 00 cd 01 01 a1 78")).flags,
            0x101u);
  Result<ClientMessage> bad =
      DecodeClientMessage(Bytes(FromHex("96 01 01 a1 74 00 00 a1 31")));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "HELLO: flags must be an integer in 0..2^53");
}

}  // namespace
}  // namespace tessera::realm::wire
