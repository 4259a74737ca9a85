// Native tests of the C++ SDK's transfer and message support
// (tessera/transfer.h, tessera/messages.h, tessera/detail/talk_export.h):
// Auth's claims, the exports driven as the host drives them (the layouts of
// docs/guest-abi.md "Transfers and messages", written here independently of
// the SDK), and which members TESSERA_SHARD accepts.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "guest_calls.h"
#include "tessera/shard_sdk.h"

namespace talk_test {

using sdk_test::Arg;
using sdk_test::Bytes;
using sdk_test::Output;
using tessera::Auth;
namespace abi = tessera::abi;

// ---------------------------------------------------------------------------
// Auth.

TEST(AuthTest, ClaimsAreReadFromTheJsonObject) {
  const Auth auth("alice",
                  R"( { "party" : "p7", "level": 3, "vip" : true,
                        "tags": [ "a", "b c" ], "pos": {"x": 1.5e2, "y": -0},
                        "none": null, "quote": "say \"hi\" \u00e9" } )",
                  "zone-0");
  EXPECT_EQ(auth.subscriber(), "alice");
  EXPECT_EQ(auth.from_shard(), "zone-0");
  EXPECT_EQ(auth.claim("party"), "p7");
  EXPECT_EQ(auth.claim("level"), "3");
  EXPECT_EQ(auth.claim("vip"), "true");
  EXPECT_EQ(auth.claim("tags"), R"(["a","b c"])");
  EXPECT_EQ(auth.claim("pos"), R"({"x":1.5e2,"y":-0})");
  EXPECT_EQ(auth.claim("none"), "null");
  EXPECT_EQ(auth.claim("quote"), "say \"hi\" \xc3\xa9");
  EXPECT_EQ(auth.claim("missing"), std::nullopt);
  EXPECT_EQ(auth.claim("x"), std::nullopt);  // nested keys are not claims
}

TEST(AuthTest, EscapedKeysAndTheLastOfARepeatedKey) {
  const Auth auth("a", R"({"p\u0061rty":"one","party":"two","k":1})", "");
  EXPECT_EQ(auth.claim("party"), "two");
  EXPECT_EQ(auth.claim("k"), "1");
}

TEST(AuthTest, ClaimsThatAreNotAnObjectHaveNoClaims) {
  for (std::string_view claims :
       {"", "[]", "\"party\"", "{\"party\":\"p\"", "{\"party\":\"p\"} x",
        "{\"party\":}", "{'party':'p'}", "{\"party\":\"p\",}"}) {
    const Auth auth("a", claims, "");
    EXPECT_EQ(auth.claim("party"), std::nullopt) << claims;
  }
  EXPECT_EQ(Auth("a", "{}", "").claim("party"), std::nullopt);
}

// ---------------------------------------------------------------------------
// Shards.

struct Params {
  std::string need;  // a claim transfer_in requires of arrivals
};
TESSERA_FIELDS(Params, need);

struct Noop {};
TESSERA_FIELDS(Noop);
using Input = std::variant<Noop>;

struct Hero {
  std::int64_t hp = 0;
  std::string name;
};
TESSERA_FIELDS(Hero, hp, name);

struct Snap {
  std::uint64_t heroes = 0;
};
TESSERA_FIELDS(Snap, heroes);

// Every talk member, a typed (MessagePack) state.
class Zone {
 public:
  static tessera::Result<Zone> init(std::string_view, Params p) {
    Zone z;
    z.need = p.need;
    return z;
  }
  tessera::Status apply_input(std::string_view, Input) { return {}; }
  void tick(double) {}
  Snap snapshot() const { return Snap{heroes.size()}; }

  tessera::Result<std::optional<Hero>> transfer_out(std::string_view sid) {
    if (sid == "stuck") return tessera::Error("cannot leave now");
    for (auto it = heroes.begin(); it != heroes.end(); ++it) {
      if (it->name == sid) {
        Hero h = *it;
        heroes.erase(it);
        return std::optional<Hero>(h);
      }
    }
    return std::optional<Hero>();
  }
  tessera::Status transfer_in(std::string_view sid, Hero hero,
                              const tessera::Auth& auth, bool returning) {
    if (!returning && !need.empty() && !auth.claim(need)) {
      return tessera::Error("missing claim " + need);
    }
    last_sid = std::string(sid);
    last_from = std::string(auth.from_shard());
    last_claims = std::string(auth.claims_json());
    last_returning = returning;
    heroes.push_back(std::move(hero));
    return {};
  }
  std::vector<tessera::TransferRequest> transfer_requests() {
    return std::exchange(requests, {});
  }
  const std::vector<std::string>& groups() const { return group_list; }
  std::vector<tessera::Outgoing> outbox() { return std::exchange(out, {}); }
  void on_message(std::string_view from, std::string_view topic,
                  std::string_view data) {
    got.push_back(std::string(from) + "|" + std::string(topic) + "|" +
                  std::string(data));
  }

  std::string need;
  std::vector<Hero> heroes;
  std::string last_sid, last_from, last_claims;
  bool last_returning = false;
  std::vector<tessera::TransferRequest> requests;
  std::vector<std::string> group_list;
  std::vector<tessera::Outgoing> out;
  std::vector<std::string> got;
};

// Raw-bytes state, std::optional return, no requests or messages.
class RawZone {
 public:
  static tessera::Result<RawZone> init(std::string_view, Params) {
    return RawZone();
  }
  tessera::Status apply_input(std::string_view, Input) { return {}; }
  void tick(double) {}
  Snap snapshot() const { return Snap{}; }
  std::optional<std::string> transfer_out(std::string_view sid) {
    if (sid != "raw") return std::nullopt;
    return std::string("\x00\xffstate", 7);
  }
  tessera::Status transfer_in(std::string_view, std::string_view state,
                              const tessera::Auth&, bool) {
    last = std::string(state);
    return {};
  }
  std::string last;
};

}  // namespace talk_test

TESSERA_SHARD(talk_test::Zone);
TESSERA_SHARD(talk_test::RawZone);

namespace talk_test {
namespace {

using tessera::detail::Exports;
using tessera::detail::GroupsExport;
using tessera::detail::OnMessagesExport;
using tessera::detail::OutboxExport;
using tessera::detail::TransferExports;
using tessera::detail::TransferRequestsExport;

// Members TESSERA_SHARD would refuse (checked without instantiating it).
struct OnlyOut {
  std::optional<std::string> transfer_out(std::string_view);
};
struct BadIn {
  std::optional<std::string> transfer_out(std::string_view);
  tessera::Status transfer_in(std::string_view, std::string);  // no auth
};
struct Mixed {
  std::optional<std::string> transfer_out(std::string_view);
  tessera::Status transfer_in(std::string_view, Hero, const tessera::Auth&,
                              bool);
};
struct RequestsOnly {
  std::vector<tessera::TransferRequest> transfer_requests();
};
struct BadGroups {
  std::vector<int> groups() const;
};
static_assert(tessera::HasTransferOut<Zone> && tessera::HasTransferIn<Zone>);
static_assert(tessera::HasTransferRequests<Zone> && tessera::HasGroups<Zone> &&
              tessera::HasOutbox<Zone> && tessera::HasOnMessage<Zone>);
static_assert(std::is_same_v<tessera::TransferOutStateOf<Zone>, Hero>);
static_assert(
    std::is_same_v<tessera::TransferInStateOf<RawZone>, std::string_view>);
static_assert(tessera::TransferStatesMatch<RawZone>);
static_assert(!tessera::HasTransferRequests<RawZone> &&
              !tessera::HasGroups<RawZone> && !tessera::HasOnMessage<RawZone>);
static_assert(!tessera::TransferComplete<OnlyOut>);
static_assert(tessera::DeclaresTransferIn<BadIn> &&
              !tessera::HasTransferIn<BadIn>);
static_assert(!tessera::TransferStatesMatch<Mixed>);
static_assert(!tessera::TransferRequestsNeedTransfers<RequestsOnly>);
static_assert(tessera::DeclaresGroups<BadGroups> &&
              !tessera::HasGroups<BadGroups>);

Zone& TheZone() { return *tessera::detail::shard_instance<Zone>(); }

int Out(std::string_view sid) {
  const Arg<Zone> a(sid);
  return TransferExports<Zone>::transfer_out(a.ptr, a.len);
}
template <class S>
int In(std::string_view arg) {
  const Arg<S> a(arg);
  return TransferExports<S>::transfer_in(a.ptr, a.len);
}
std::string InArg(unsigned flags, std::string_view sid, std::string_view peer,
                  std::string_view claims, std::string_view state) {
  return Bytes().u32(flags).str(sid).str(peer).str(claims).str(state);
}

class TalkExportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Exports<Zone>::reset_for_testing();
    Exports<RawZone>::reset_for_testing();
  }
};

TEST_F(TalkExportTest, TransferOutAndInRoundTripATypedState) {
  ASSERT_EQ(sdk_test::Init<Zone>(abi::kCodecJson, "z0", "{}"), abi::kOk);
  TheZone().heroes = {{7, "alice"}, {9, "bob"}};
  ASSERT_EQ(Out("alice"), abi::kOk) << Output<Zone>();
  const std::string state = Output<Zone>();
  // MessagePack {"hp": 7, "name": "alice"}, whatever the shard's codec.
  EXPECT_EQ(state, std::string("\x82\xa2hp\x07\xa4name\xa5"
                               "alice"));
  EXPECT_EQ(TheZone().heroes.size(), 1u);
  EXPECT_EQ(Out("alice"), abi::kNoState);
  EXPECT_EQ(Out("stuck"), abi::kError);
  EXPECT_EQ(Output<Zone>(), "cannot leave now");

  ASSERT_EQ(In<Zone>(InArg(0, "alice", "z9", R"({"party":"p"})", state)),
            abi::kOk)
      << Output<Zone>();
  ASSERT_EQ(TheZone().heroes.size(), 2u);
  EXPECT_EQ(TheZone().heroes[1].hp, 7);
  EXPECT_EQ(TheZone().heroes[1].name, "alice");
  EXPECT_EQ(TheZone().last_sid, "alice");
  EXPECT_EQ(TheZone().last_from, "z9");
  EXPECT_EQ(TheZone().last_claims, R"({"party":"p"})");
  EXPECT_FALSE(TheZone().last_returning);
  ASSERT_EQ(
      In<Zone>(InArg(abi::kTransferInReturning, "bob", "z9", "{}", state)),
      abi::kOk);
  EXPECT_TRUE(TheZone().last_returning);
}

TEST_F(TalkExportTest, TransferInRefusalsAndMalformedArguments) {
  ASSERT_EQ(sdk_test::Init<Zone>(abi::kCodecMsgpack, "z1", ""), abi::kOk);
  TheZone().need = "party";
  const std::string state = "\x81\xa2hp\x01";
  EXPECT_EQ(In<Zone>(InArg(0, "a", "z0", "{}", state)), abi::kError);
  EXPECT_EQ(Output<Zone>(), "missing claim party");
  // A returning player is not asked for claims.
  EXPECT_EQ(In<Zone>(InArg(1, "a", "z0", "{}", state)), abi::kOk);
  EXPECT_EQ(In<Zone>(InArg(0, "a", "z0", "{}", "\x81\xa2hp\xa1x")),
            abi::kError);
  EXPECT_EQ(Output<Zone>().rfind("invalid transfer state: ", 0), 0u)
      << Output<Zone>();
  EXPECT_EQ(In<Zone>(InArg(0, "a", "z0", "{}", state) + "x"), abi::kError);
  EXPECT_EQ(Output<Zone>(),
            "tessera_transfer_in: malformed argument: trailing bytes at byte "
            "30");
  EXPECT_EQ(In<Zone>(std::string(Bytes().u32(0).str("a").u32(99))),
            abi::kError);
  EXPECT_EQ(Output<Zone>(),
            "tessera_transfer_in: malformed argument: unexpected end reading "
            "peer shard at byte 13");
  EXPECT_EQ(TheZone().heroes.size(), 1u);
}

TEST_F(TalkExportTest, RawStatesPassAsTheyAre) {
  ASSERT_EQ(sdk_test::Init<RawZone>(abi::kCodecMsgpack, "r", ""), abi::kOk);
  const Arg<RawZone> sid("raw");
  ASSERT_EQ(TransferExports<RawZone>::transfer_out(sid.ptr, sid.len), abi::kOk);
  EXPECT_EQ(Output<RawZone>(), std::string("\x00\xffstate", 7));
  const Arg<RawZone> other("other");
  EXPECT_EQ(TransferExports<RawZone>::transfer_out(other.ptr, other.len),
            abi::kNoState);
  ASSERT_EQ(In<RawZone>(InArg(0, "raw", "p", "{}", std::string("\x00z", 2))),
            abi::kOk);
  EXPECT_EQ(tessera::detail::shard_instance<RawZone>()->last,
            std::string("\x00z", 2));
}

TEST_F(TalkExportTest, RequestsGroupsAndOutboxHaveTheLayouts) {
  ASSERT_EQ(sdk_test::Init<Zone>(abi::kCodecMsgpack, "z", ""), abi::kOk);
  EXPECT_EQ(TransferRequestsExport<Zone>::transfer_requests(), abi::kNoState);
  EXPECT_EQ(GroupsExport<Zone>::groups(), abi::kNoState);
  EXPECT_EQ(OutboxExport<Zone>::outbox(), abi::kNoState);

  TheZone().requests = {{"alice", "z2"}, {"bob", ""}};
  ASSERT_EQ(TransferRequestsExport<Zone>::transfer_requests(), abi::kOk);
  EXPECT_EQ(
      Output<Zone>(),
      std::string(Bytes().u32(2).str("alice").str("z2").str("bob").str("")));
  EXPECT_EQ(TransferRequestsExport<Zone>::transfer_requests(), abi::kNoState);

  TheZone().group_list = {"world", "north"};
  ASSERT_EQ(GroupsExport<Zone>::groups(), abi::kOk);
  EXPECT_EQ(Output<Zone>(),
            std::string(Bytes().u32(2).str("world").str("north")));
  ASSERT_EQ(GroupsExport<Zone>::groups(), abi::kOk);  // groups are not taken

  TheZone().out = {{tessera::Target::shard("z2"), "hi", "one"},
                   {tessera::Target::group("world"), "relic", ""},
                   {tessera::Target{tessera::TargetKind::kAll, "ignored"}, "t",
                    std::string("\x00\x01", 2)}};
  ASSERT_EQ(OutboxExport<Zone>::outbox(), abi::kOk);
  EXPECT_EQ(Output<Zone>(), std::string(Bytes()
                                            .u32(3)
                                            .u8(abi::kTargetShard)
                                            .str("z2")
                                            .str("hi")
                                            .str("one")
                                            .u8(abi::kTargetGroup)
                                            .str("world")
                                            .str("relic")
                                            .str("")
                                            .u8(abi::kTargetAll)
                                            .str("")
                                            .str("t")
                                            .str(std::string("\x00\x01", 2))));
  EXPECT_EQ(OutboxExport<Zone>::outbox(), abi::kNoState);
  EXPECT_EQ(tessera::Target::all().kind, tessera::TargetKind::kAll);
  EXPECT_TRUE(tessera::Target::all().name.empty());
}

TEST_F(TalkExportTest, OnMessagesAppliesABatchInOrder) {
  ASSERT_EQ(sdk_test::Init<Zone>(abi::kCodecMsgpack, "z", ""), abi::kOk);
  const Arg<Zone> batch(std::string(
      Bytes().u32(2).str("z0").str("a").str("1").str("").str("b").str("")));
  ASSERT_EQ(OnMessagesExport<Zone>::on_messages(batch.ptr, batch.len),
            abi::kOk);
  EXPECT_EQ(TheZone().got, (std::vector<std::string>{"z0|a|1", "|b|"}));

  // A malformed batch applies nothing.
  const Arg<Zone> cut(
      std::string(Bytes().u32(2).str("z0").str("a").str("1").str("x")));
  EXPECT_EQ(OnMessagesExport<Zone>::on_messages(cut.ptr, cut.len), abi::kError);
  EXPECT_EQ(
      Output<Zone>().rfind("tessera_on_messages: malformed argument: ", 0), 0u)
      << Output<Zone>();
  const Arg<Zone> huge(std::string(Bytes().u32(1000000)));
  EXPECT_EQ(OnMessagesExport<Zone>::on_messages(huge.ptr, huge.len),
            abi::kError);
  EXPECT_EQ(Output<Zone>(),
            "tessera_on_messages: malformed argument: count larger than the "
            "argument reading message count at byte 4");
  EXPECT_EQ(TheZone().got.size(), 2u);
}

}  // namespace
}  // namespace talk_test
