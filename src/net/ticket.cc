// Verification order matters: nothing of the payload is decoded or parsed
// before its signature has been checked (in constant time), so only text
// this server minted ever reaches the JSON parser.
#include "net/ticket.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <array>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>

#include "net/base64url.h"

namespace tessera::net {
namespace {

using nlohmann::json;

constexpr std::string_view kPrefix = "v1.";
constexpr size_t kMaxTicketBytes = 4096;
constexpr size_t kMacBytes = 32;  // SHA-256

using Mac = std::array<unsigned char, kMacBytes>;

// HMAC-SHA256(secret, message); nullopt only if OpenSSL fails.
std::optional<Mac> Sign(std::string_view secret, std::string_view message) {
  static const char kEmpty = 0;  // HMAC() wants a non-null key
  const char* key = secret.empty() ? &kEmpty : secret.data();
  Mac mac;
  unsigned int len = 0;
  if (HMAC(EVP_sha256(), key, static_cast<int>(secret.size()),
           reinterpret_cast<const unsigned char*>(message.data()),
           message.size(), mac.data(), &len) == nullptr ||
      len != kMacBytes) {
    return std::nullopt;
  }
  return mac;
}

TicketCheck Fail(TicketError error, std::string message) {
  TicketCheck check;
  check.error = error;
  check.message = std::move(message);
  return check;
}

TicketCheck Invalid(std::string why) {
  return Fail(TicketError::kInvalid, "invalid ticket: " + std::move(why));
}

// Fills `ticket` from the payload, whose signature has been verified.
TicketCheck ParsePayload(std::string_view payload_b64, Ticket* ticket) {
  std::optional<std::string> payload = Base64UrlDecode(payload_b64);
  if (!payload) return Invalid("payload is not base64url");
  json j = json::parse(*payload, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Invalid("payload is not JSON");
  if (!j.is_object()) return Invalid("payload is not a JSON object");
  // A shard's id is "s" (the format from before tickets named a kind);
  // any kind's is "k" with "r", one way or the other, not both.
  auto s = j.find("s");
  auto k = j.find("k");
  auto r = j.find("r");
  if (k == j.end()) {
    if (s == j.end() || !s->is_string()) {
      return Invalid("shard id missing or not a string");
    }
  } else {
    if (s != j.end()) return Invalid("both a shard id and a resource kind");
    if (!k->is_string() || k->get_ref<const std::string&>().empty()) {
      return Invalid("resource kind empty or not a string");
    }
    if (r == j.end() || !r->is_string()) {
      return Invalid("resource id missing or not a string");
    }
  }
  auto u = j.find("u");
  if (u == j.end() || !u->is_string()) {
    return Invalid("subscriber id missing or not a string");
  }
  // Inputs with an empty subscriber id come from the server side (a
  // function's shards.send): no connection may have one.
  if (u->get_ref<const std::string&>().empty()) {
    return Invalid("subscriber id is empty");
  }
  auto e = j.find("e");
  if (e == j.end() || !e->is_number_integer()) {
    return Invalid("expiry missing or not an integer");
  }
  if (e->is_number_unsigned() &&
      e->get<uint64_t>() >
          static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return Invalid("expiry out of range");
  }
  auto c = j.find("c");
  if (c != j.end() && !c->is_object()) {
    return Invalid("claims are not a JSON object");
  }
  // Absent in tickets minted before they were dated: 0.
  auto i = j.find("i");
  if (i != j.end() &&
      (!i->is_number_integer() ||
       (i->is_number_unsigned() &&
        i->get<uint64_t>() >
            static_cast<uint64_t>(std::numeric_limits<int64_t>::max())))) {
    return Invalid("issue time not an integer in range");
  }
  if (k == j.end()) {
    ticket->resource_kind = std::string(kShardResource);
    ticket->resource_id = s->get<std::string>();
  } else {
    ticket->resource_kind = k->get<std::string>();
    ticket->resource_id = r->get<std::string>();
  }
  ticket->subscriber_id = u->get<std::string>();
  ticket->expires_unix = e->get<int64_t>();
  ticket->issued_unix_ms = i == j.end() ? 0 : i->get<int64_t>();
  ticket->claims_json =
      c == j.end() ? "{}"
                   : c->dump(-1, ' ', false, json::error_handler_t::replace);
  return TicketCheck{};
}

}  // namespace

std::string MintTicket(std::string_view secret, const Ticket& ticket,
                       const WallClock* clock) {
  json payload = json::object();
  if (ticket.resource_kind == kShardResource) {
    payload["s"] = ticket.resource_id;
  } else {
    payload["k"] = ticket.resource_kind;
    payload["r"] = ticket.resource_id;
  }
  payload["u"] = ticket.subscriber_id;
  payload["e"] = ticket.expires_unix;
  payload["i"] =
      (clock != nullptr ? *clock : *RealWallClock::Get()).UnixNowMs();
  // Claims that are not a JSON object break the caller's contract; they
  // are left out rather than minted into a ticket that never verifies.
  json claims = json::parse(ticket.claims_json, nullptr, false);
  if (claims.is_object() && !claims.empty()) payload["c"] = std::move(claims);
  std::string text(kPrefix);
  text += Base64UrlEncode(
      payload.dump(-1, ' ', false, json::error_handler_t::replace));
  std::optional<Mac> mac = Sign(secret, text);
  text += '.';
  if (mac) {
    text += Base64UrlEncode(std::string_view(
        reinterpret_cast<const char*>(mac->data()), mac->size()));
  }
  return text;
}

TicketCheck VerifyTicketAnyResource(std::string_view secret,
                                    std::string_view text, int64_t now_unix) {
  if (secret.empty()) return Invalid("no ticket secret is configured");
  if (text.size() > kMaxTicketBytes) return Invalid("too long");
  if (text.substr(0, kPrefix.size()) != kPrefix) return Invalid("not v1");
  const size_t dot = text.find('.', kPrefix.size());
  if (dot == std::string_view::npos) return Invalid("no signature");
  const std::string_view signed_part = text.substr(0, dot);
  const std::string_view payload_b64 = signed_part.substr(kPrefix.size());
  std::optional<std::string> signature = Base64UrlDecode(text.substr(dot + 1));
  if (!signature || signature->size() != kMacBytes) {
    return Invalid("malformed signature");
  }
  std::optional<Mac> expected = Sign(secret, signed_part);
  if (!expected ||
      CRYPTO_memcmp(expected->data(), signature->data(), kMacBytes) != 0) {
    return Invalid("signature does not verify");
  }

  Ticket ticket;
  TicketCheck check = ParsePayload(payload_b64, &ticket);
  if (check.error != TicketError::kNone) return check;
  if (now_unix >= ticket.expires_unix) {
    return Fail(TicketError::kExpired, "ticket expired");
  }
  check.ticket = std::move(ticket);
  return check;
}

TicketCheck VerifyTicket(std::string_view secret, std::string_view text,
                         std::string_view kind, std::string_view id,
                         int64_t now_unix) {
  TicketCheck check = VerifyTicketAnyResource(secret, text, now_unix);
  if (check.error != TicketError::kNone) return check;
  const Ticket& ticket = check.ticket;
  if (ticket.resource_kind != kind) {
    return Fail(TicketError::kWrongResource,
                "ticket is not for a " + std::string(kind));
  }
  if (ticket.resource_id != id) {
    return Fail(TicketError::kWrongResource,
                "ticket is for another " + std::string(kind));
  }
  return check;
}

TicketCheck VerifyTicket(std::string_view secret, std::string_view text,
                         std::string_view shard_id, int64_t now_unix) {
  return VerifyTicket(secret, text, kShardResource, shard_id, now_unix);
}

}  // namespace tessera::net
