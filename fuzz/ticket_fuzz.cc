// libFuzzer target: ticket verification on arbitrary text. Random text
// almost never carries a valid HMAC, so the input is also re-signed with
// the fuzzer's secret, both as the payload JSON and as the payload's
// base64url text, to reach the checks behind the signature. Each text is
// verified for a shard and for another kind of resource (tickets name a
// kind since the realms; shard tickets keep the older format). A re-minted
// ticket carries the minting clock's time as its issue time ("i").
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "net/base64url.h"
#include "net/ticket.h"

namespace {

using namespace tessera::net;

constexpr std::string_view kSecret = "fuzz-secret";
constexpr std::string_view kShard = "arena-1";  // also the realm's id
constexpr std::string_view kRealm = "realm";
constexpr int64_t kNow = 1700000000;
// Re-minted tickets are dated by this clock (1 ms after kNow).
const tessera::FakeWallClock kMintClock(kNow * 1'000'000 + 1'000);

void Check(bool ok) {
  if (!ok) std::abort();
}

std::string Sign(std::string_view payload_part) {
  std::string text = "v1." + std::string(payload_part);
  unsigned char mac[32];
  unsigned int len = 0;
  HMAC(EVP_sha256(), kSecret.data(), static_cast<int>(kSecret.size()),
       reinterpret_cast<const unsigned char*>(text.data()), text.size(), mac,
       &len);
  return text + "." +
         Base64UrlEncode(std::string_view(reinterpret_cast<char*>(mac), len));
}

void VerifyAs(std::string_view text, std::string_view kind) {
  TicketCheck check = VerifyTicket(kSecret, text, kind, kShard, kNow);
  Check(check.error != TicketError::kNone || check.message.empty());
  if (check.error != TicketError::kNone) {
    Check(!check.message.empty());
    return;
  }
  const Ticket& t = check.ticket;
  // The empty subscriber id is the server's own: no ticket carries it.
  Check(!t.subscriber_id.empty());
  Check(t.resource_kind == kind && t.resource_id == kShard &&
        t.expires_unix > kNow);
  Check(!t.claims_json.empty() && t.claims_json.front() == '{');
  // What verified re-mints into a ticket with the same fields, the
  // resource's kind included, and for no other kind.
  const std::string minted = MintTicket(kSecret, t, &kMintClock);
  TicketCheck again = VerifyTicket(kSecret, minted, kind, kShard, kNow);
  if (again.error == TicketError::kInvalid) return;  // re-mint grew > 4 KiB
  Check(again.error == TicketError::kNone);
  Check(again.ticket.resource_kind == t.resource_kind &&
        again.ticket.resource_id == t.resource_id &&
        again.ticket.subscriber_id == t.subscriber_id &&
        again.ticket.expires_unix == t.expires_unix &&
        again.ticket.issued_unix_ms == kNow * 1000 + 1 &&
        (again.ticket.claims_json == t.claims_json || t.claims_json == "{}"));
  const std::string_view other = kind == kRealm ? kShardResource : kRealm;
  Check(VerifyTicket(kSecret, minted, other, kShard, kNow).error ==
        TicketError::kWrongResource);
}

void VerifyAndCheck(std::string_view text) {
  VerifyAs(text, kShardResource);
  VerifyAs(text, kRealm);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  VerifyAndCheck(text);
  VerifyAndCheck(Sign(Base64UrlEncode(text)));  // text as the payload JSON
  if (text.find('.') == std::string_view::npos) {
    VerifyAndCheck(Sign(text));  // text as the payload's base64url
  }
  return 0;
}
