#include "net/ticket.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <nlohmann/json.hpp>

#include "net/base64url.h"

namespace tessera::net {
namespace {

using nlohmann::json;

constexpr std::string_view kSecret = "test-secret";
constexpr int64_t kNow = 1700000000;

Ticket Sample() {
  Ticket t;
  t.resource_id = "arena-1";
  t.subscriber_id = "alice";
  t.expires_unix = kNow + kDefaultTicketLifetimeSecs;
  t.claims_json = R"({"team":"red","level":3,"tags":["a","b"]})";
  return t;
}

// A correctly signed ticket around any payload text (already base64url or
// not), to reach the checks behind the signature.
std::string SignRaw(std::string_view payload_part,
                    std::string_view secret = kSecret) {
  std::string text = "v1." + std::string(payload_part);
  unsigned char mac[32];
  unsigned int len = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(text.data()), text.size(), mac,
       &len);
  return text + "." +
         Base64UrlEncode(std::string_view(reinterpret_cast<char*>(mac), len));
}

std::string SignJson(std::string_view payload_json) {
  return SignRaw(Base64UrlEncode(payload_json));
}

TicketCheck Verify(std::string_view text, std::string_view shard = "arena-1",
                   int64_t now = kNow) {
  return VerifyTicket(kSecret, text, shard, now);
}

TEST(Ticket, ValidTicketPreservesEveryField) {
  const std::string text = MintTicket(kSecret, Sample());
  EXPECT_TRUE(text.starts_with("v1."));
  TicketCheck check = Verify(text);
  ASSERT_EQ(check.error, TicketError::kNone) << check.message;
  EXPECT_EQ(check.ticket.resource_id, "arena-1");
  EXPECT_EQ(check.ticket.subscriber_id, "alice");
  EXPECT_EQ(check.ticket.expires_unix, kNow + 600);
  EXPECT_EQ(json::parse(check.ticket.claims_json),
            json::parse(Sample().claims_json));
}

TEST(Ticket, PayloadIsTheDocumentedJson) {
  const std::string text = MintTicket(kSecret, Sample());
  const size_t dot = text.find('.', 3);
  auto payload = Base64UrlDecode(text.substr(3, dot - 3));
  ASSERT_TRUE(payload.has_value());
  json j = json::parse(*payload);
  EXPECT_EQ(j["s"], "arena-1");
  EXPECT_EQ(j["u"], "alice");
  EXPECT_EQ(j["e"], kNow + 600);
  EXPECT_EQ(j["c"]["team"], "red");
  // Independently signed: the signature covers "v1." + payload.
  EXPECT_EQ(SignRaw(text.substr(3, dot - 3)), text);
}

// ---- The issue time ("i") ----

TEST(Ticket, MintingDatesTheTicketWithTheGivenClock) {
  FakeWallClock clock(1'700'000'123'456'789);  // microseconds
  Ticket t = Sample();
  t.issued_unix_ms = 42;  // ignored: a ticket is issued when it is minted
  const std::string text = MintTicket(kSecret, t, &clock);
  const size_t dot = text.find('.', 3);
  auto payload = Base64UrlDecode(text.substr(3, dot - 3));
  ASSERT_TRUE(payload.has_value());
  EXPECT_EQ(json::parse(*payload)["i"], 1'700'000'123'456);  // milliseconds
  TicketCheck check = Verify(text);
  ASSERT_EQ(check.error, TicketError::kNone) << check.message;
  EXPECT_EQ(check.ticket.issued_unix_ms, 1'700'000'123'456);

  clock.Advance(2'000);  // 2 ms later
  EXPECT_EQ(Verify(MintTicket(kSecret, t, &clock)).ticket.issued_unix_ms,
            1'700'000'123'458);
}

TEST(Ticket, WithoutAClockTheRealTimeDatesIt) {
  const int64_t before = RealWallClock::Get()->UnixNowMs();
  TicketCheck check = Verify(MintTicket(kSecret, Sample()));
  const int64_t after = RealWallClock::Get()->UnixNowMs();
  ASSERT_EQ(check.error, TicketError::kNone) << check.message;
  EXPECT_GE(check.ticket.issued_unix_ms, before);
  EXPECT_LE(check.ticket.issued_unix_ms, after);
}

TEST(Ticket, AnUndatedTicketReadsAsIssuedAtZero) {
  // Minted before tickets carried "i": still valid.
  TicketCheck check =
      Verify(SignJson(R"({"s":"arena-1","u":"alice","e":1800000000})"));
  ASSERT_EQ(check.error, TicketError::kNone) << check.message;
  EXPECT_EQ(check.ticket.issued_unix_ms, 0);
  check =
      Verify(SignJson(R"({"s":"arena-1","u":"alice","e":1800000000,"i":-5})"));
  ASSERT_EQ(check.error, TicketError::kNone) << check.message;
  EXPECT_EQ(check.ticket.issued_unix_ms, -5);
}

TEST(Ticket, ClaimsAreOptional) {
  Ticket t = Sample();
  t.claims_json = "{}";
  TicketCheck check = Verify(MintTicket(kSecret, t));
  ASSERT_EQ(check.error, TicketError::kNone) << check.message;
  EXPECT_EQ(check.ticket.claims_json, "{}");
  check = Verify(SignJson(R"({"s":"arena-1","u":"bob","e":1800000000})"));
  ASSERT_EQ(check.error, TicketError::kNone) << check.message;
  EXPECT_EQ(check.ticket.subscriber_id, "bob");
  EXPECT_EQ(check.ticket.claims_json, "{}");
  // Claims that break MintTicket's contract are left out.
  t.claims_json = "[1,2]";
  check = Verify(MintTicket(kSecret, t));
  ASSERT_EQ(check.error, TicketError::kNone) << check.message;
  EXPECT_EQ(check.ticket.claims_json, "{}");
}

TEST(Ticket, UnicodeIdsSurvive) {
  Ticket t = Sample();
  t.resource_id = "arène/1";
  t.subscriber_id = "名前";
  TicketCheck check =
      VerifyTicket(kSecret, MintTicket(kSecret, t), "arène/1", kNow);
  ASSERT_EQ(check.error, TicketError::kNone) << check.message;
  EXPECT_EQ(check.ticket.subscriber_id, "名前");
}

TEST(Ticket, AnyFlippedBitIsRejected) {
  const std::string text = MintTicket(kSecret, Sample());
  const size_t dot = text.find('.', 3);
  const std::string payload_b64 = text.substr(3, dot - 3);
  const std::string signature_b64 = text.substr(dot + 1);
  const std::string payload = Base64UrlDecode(payload_b64).value();
  const std::string signature = Base64UrlDecode(signature_b64).value();
  for (size_t i = 0; i < payload.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string forged = payload;
      forged[i] = static_cast<char>(forged[i] ^ (1 << bit));
      TicketCheck check =
          Verify("v1." + Base64UrlEncode(forged) + "." + signature_b64);
      EXPECT_EQ(check.error, TicketError::kInvalid);
      EXPECT_EQ(check.message, "invalid ticket: signature does not verify");
    }
  }
  for (size_t i = 0; i < signature.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string forged = signature;
      forged[i] = static_cast<char>(forged[i] ^ (1 << bit));
      TicketCheck check =
          Verify("v1." + payload_b64 + "." + Base64UrlEncode(forged));
      EXPECT_EQ(check.error, TicketError::kInvalid);
      EXPECT_EQ(check.message, "invalid ticket: signature does not verify");
    }
  }
  // Flipping bits of the text itself (any character).
  for (size_t i = 0; i < text.size(); ++i) {
    std::string forged = text;
    forged[i] = static_cast<char>(forged[i] ^ 1);
    EXPECT_EQ(Verify(forged).error, TicketError::kInvalid) << i;
  }
}

// The compute API's player check: any resource, still signed and dated.
TEST(Ticket, AnyResourceChecksTheSignatureAndExpiryOnly) {
  Ticket player = Sample();
  player.resource_kind = "player";
  player.resource_id = "*";
  const std::string text = MintTicket(kSecret, player);
  TicketCheck any = VerifyTicketAnyResource(kSecret, text, kNow);
  ASSERT_EQ(any.error, TicketError::kNone) << any.message;
  EXPECT_EQ(any.ticket.subscriber_id, "alice");
  EXPECT_EQ(any.ticket.resource_kind, "player");
  EXPECT_EQ(VerifyTicket(kSecret, text, "arena-1", kNow).error,
            TicketError::kWrongResource);
  EXPECT_EQ(VerifyTicketAnyResource("other-secret", text, kNow).error,
            TicketError::kInvalid);
  EXPECT_EQ(
      VerifyTicketAnyResource(kSecret, text, kNow + kDefaultTicketLifetimeSecs)
          .error,
      TicketError::kExpired);
}

TEST(Ticket, WrongSecretIsInvalid) {
  const std::string text = MintTicket("another-secret", Sample());
  TicketCheck check = Verify(text);
  EXPECT_EQ(check.error, TicketError::kInvalid);
  EXPECT_EQ(check.message, "invalid ticket: signature does not verify");
  // An empty secret verifies nothing (a server without a secret is closed).
  EXPECT_EQ(VerifyTicket("", MintTicket("", Sample()), "arena-1", kNow).error,
            TicketError::kInvalid);
}

TEST(Ticket, Expired) {
  const std::string text = MintTicket(kSecret, Sample());
  EXPECT_EQ(Verify(text, "arena-1", kNow + 599).error, TicketError::kNone);
  TicketCheck check = Verify(text, "arena-1", kNow + 600);
  EXPECT_EQ(check.error, TicketError::kExpired);
  EXPECT_EQ(check.message, "ticket expired");
}

TEST(Ticket, WrongShard) {
  TicketCheck check = Verify(MintTicket(kSecret, Sample()), "arena-2");
  EXPECT_EQ(check.error, TicketError::kWrongShard);
  EXPECT_EQ(check.message, "ticket is for another shard");
  EXPECT_EQ(Verify(MintTicket(kSecret, Sample()), "arena-").error,
            TicketError::kWrongShard);
}

TEST(Ticket, MalformedText) {
  const std::string good = MintTicket(kSecret, Sample());
  const std::string sig = good.substr(good.rfind('.') + 1);
  struct Case {
    std::string text, message;
  } cases[] = {
      {"", "invalid ticket: not v1"},
      {"v2" + good.substr(2), "invalid ticket: not v1"},
      {"V1" + good.substr(2), "invalid ticket: not v1"},
      {"v1.abc", "invalid ticket: no signature"},
      {good + ".x", "invalid ticket: malformed signature"},
      {good + "=", "invalid ticket: malformed signature"},
      {good.substr(0, good.size() - 1), "invalid ticket: malformed signature"},
      {good.substr(0, good.rfind('.') + 1),
       "invalid ticket: malformed signature"},
      {"v1." + Base64UrlEncode("{}") + "." +
           Base64UrlEncode(std::string(31, 'x')),
       "invalid ticket: malformed signature"},
      {" " + good, "invalid ticket: not v1"},
      {good + "\n", "invalid ticket: malformed signature"},
      {std::string(5000, 'v'), "invalid ticket: too long"},
  };
  for (const Case& c : cases) {
    TicketCheck check = Verify(c.text);
    EXPECT_EQ(check.error, TicketError::kInvalid) << c.text;
    EXPECT_EQ(check.message, c.message) << c.text;
  }
}

TEST(Ticket, OversizeTicketsAreRefusedEvenIfSigned) {
  Ticket t = Sample();
  t.claims_json = json({{"blob", std::string(3000, 'b')}}).dump();
  TicketCheck check = Verify(MintTicket(kSecret, t));
  EXPECT_EQ(check.message, "invalid ticket: too long");
  t.claims_json = json({{"blob", std::string(2000, 'b')}}).dump();
  EXPECT_EQ(Verify(MintTicket(kSecret, t)).error, TicketError::kNone);
}

TEST(Ticket, SignedButMalformedPayloads) {
  struct Case {
    std::string text, message;
  } cases[] = {
      {SignRaw("e30="), "invalid ticket: payload is not base64url"},
      {SignRaw("e3+9"), "invalid ticket: payload is not base64url"},
      {SignJson("hello"), "invalid ticket: payload is not JSON"},
      {SignJson(R"({"s":"arena-1")"), "invalid ticket: payload is not JSON"},
      {SignJson("[1,2]"), "invalid ticket: payload is not a JSON object"},
      {SignJson(R"("s")"), "invalid ticket: payload is not a JSON object"},
      {SignJson(R"({"u":"a","e":1800000000})"),
       "invalid ticket: shard id missing or not a string"},
      {SignJson(R"({"s":5,"u":"a","e":1800000000})"),
       "invalid ticket: shard id missing or not a string"},
      {SignJson(R"({"s":"arena-1","e":1800000000})"),
       "invalid ticket: subscriber id missing or not a string"},
      {SignJson(R"({"s":"arena-1","u":null,"e":1800000000})"),
       "invalid ticket: subscriber id missing or not a string"},
      {SignJson(R"({"s":"arena-1","u":"","e":1800000000})"),
       "invalid ticket: subscriber id is empty"},
      {SignJson(R"({"k":"lobby","r":"l1","u":"","e":1800000000})"),
       "invalid ticket: subscriber id is empty"},
      {SignJson(R"({"s":"arena-1","u":"a"})"),
       "invalid ticket: expiry missing or not an integer"},
      {SignJson(R"({"s":"arena-1","u":"a","e":"soon"})"),
       "invalid ticket: expiry missing or not an integer"},
      {SignJson(R"({"s":"arena-1","u":"a","e":1800000000.5})"),
       "invalid ticket: expiry missing or not an integer"},
      {SignJson(R"({"s":"arena-1","u":"a","e":18446744073709551615})"),
       "invalid ticket: expiry out of range"},
      {SignJson(R"({"s":"arena-1","u":"a","e":1800000000,"c":[1]})"),
       "invalid ticket: claims are not a JSON object"},
      {SignJson(R"({"s":"arena-1","u":"a","e":1800000000,"c":"x"})"),
       "invalid ticket: claims are not a JSON object"},
      {SignJson(R"({"s":"arena-1","u":"a","e":1800000000,"i":"now"})"),
       "invalid ticket: issue time not an integer in range"},
      {SignJson(R"({"s":"arena-1","u":"a","e":1800000000,"i":1.5})"),
       "invalid ticket: issue time not an integer in range"},
      {SignJson(
           R"({"s":"arena-1","u":"a","e":1800000000,"i":18446744073709551615})"),
       "invalid ticket: issue time not an integer in range"},
      {SignJson(std::string("{\"s\":\"a\xff\",\"u\":\"a\",\"e\":1}")),
       "invalid ticket: payload is not JSON"},
  };
  for (const Case& c : cases) {
    TicketCheck check = Verify(c.text);
    EXPECT_EQ(check.error, TicketError::kInvalid) << c.text;
    EXPECT_EQ(check.message, c.message) << c.text;
  }
}

TEST(Ticket, ErrorsHaveDistinctMessages) {
  const std::string good = MintTicket(kSecret, Sample());
  const std::string invalid = Verify(good + "x").message;
  const std::string expired = Verify(good, "arena-1", kNow + 10000).message;
  const std::string wrong_shard = Verify(good, "other").message;
  EXPECT_NE(invalid, expired);
  EXPECT_NE(invalid, wrong_shard);
  EXPECT_NE(expired, wrong_shard);
  for (const std::string& m : {invalid, expired, wrong_shard}) {
    EXPECT_FALSE(m.empty());
    EXPECT_LE(m.size(), 123u);  // fits a WebSocket close reason
  }
}

// ---- Resources of other kinds ----

TEST(Ticket, ShardTicketsKeepTheirFormat) {
  // A ticket minted before tickets named a kind (payload "s") verifies.
  const std::string old =
      SignJson(R"({"s":"arena-1","u":"bob","e":1800000000})");
  TicketCheck check = Verify(old);
  ASSERT_EQ(check.error, TicketError::kNone) << check.message;
  EXPECT_EQ(check.ticket.resource_kind, "shard");
  EXPECT_EQ(check.ticket.resource_id, "arena-1");
  // And a shard ticket minted now is written that way.
  const std::string text = MintTicket(kSecret, Sample());
  const std::string payload =
      text.substr(3, text.find('.', 3) - 3);  // after "v1."
  json j = json::parse(*Base64UrlDecode(payload));
  EXPECT_EQ(j["s"], "arena-1");
  EXPECT_FALSE(j.contains("k"));
  EXPECT_FALSE(j.contains("r"));
}

TEST(Ticket, OtherKindsNameTheirResource) {
  Ticket t = Sample();
  t.resource_kind = "realm";
  t.resource_id = "lobby";
  const std::string text = MintTicket(kSecret, t);
  TicketCheck check = VerifyTicket(kSecret, text, "realm", "lobby", kNow);
  ASSERT_EQ(check.error, TicketError::kNone) << check.message;
  EXPECT_EQ(check.ticket.resource_kind, "realm");
  EXPECT_EQ(check.ticket.resource_id, "lobby");
  EXPECT_EQ(check.ticket.subscriber_id, "alice");
  // Not a shard ticket, even for a shard of the same id.
  check = Verify(text, "lobby");
  EXPECT_EQ(check.error, TicketError::kWrongResource);
  EXPECT_EQ(check.message, "ticket is not for a shard");
  check = VerifyTicket(kSecret, text, "realm", "hall", kNow);
  EXPECT_EQ(check.error, TicketError::kWrongResource);
  EXPECT_EQ(check.message, "ticket is for another realm");
  // A shard ticket is not a realm ticket.
  check = VerifyTicket(kSecret, MintTicket(kSecret, Sample()), "realm",
                       "arena-1", kNow);
  EXPECT_EQ(check.message, "ticket is not for a realm");
}

TEST(Ticket, AnExplicitShardKindIsAShard) {
  TicketCheck check =
      Verify(SignJson(R"({"k":"shard","r":"arena-1","u":"a","e":1800000000})"));
  ASSERT_EQ(check.error, TicketError::kNone) << check.message;
  EXPECT_EQ(check.ticket.resource_id, "arena-1");
}

TEST(Ticket, SignedButMalformedResources) {
  struct Case {
    std::string text, message;
  } cases[] = {
      {SignJson(R"({"s":"a","k":"realm","r":"a","u":"a","e":1800000000})"),
       "invalid ticket: both a shard id and a resource kind"},
      {SignJson(R"({"k":"","r":"a","u":"a","e":1800000000})"),
       "invalid ticket: resource kind empty or not a string"},
      {SignJson(R"({"k":7,"r":"a","u":"a","e":1800000000})"),
       "invalid ticket: resource kind empty or not a string"},
      {SignJson(R"({"k":"realm","u":"a","e":1800000000})"),
       "invalid ticket: resource id missing or not a string"},
      {SignJson(R"({"k":"realm","r":["a"],"u":"a","e":1800000000})"),
       "invalid ticket: resource id missing or not a string"},
  };
  for (const Case& c : cases) {
    TicketCheck check = VerifyTicket(kSecret, c.text, "realm", "a", kNow);
    EXPECT_EQ(check.error, TicketError::kInvalid) << c.text;
    EXPECT_EQ(check.message, c.message) << c.text;
  }
}

}  // namespace
}  // namespace tessera::net
