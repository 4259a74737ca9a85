// libFuzzer target: the realm protocol's messages (src/realm/wire.cc), as
// a realm connection hands a client's binary WebSocket message over. The
// input is decoded as a client message (what the server does) and as a
// server message (what test clients do). Checks what must hold whatever
// the bytes:
//  - a refusal is kInvalidArgument with a reason that fits a WebSocket
//    close frame (1 to 123 bytes);
//  - an accepted message re-encodes to bytes no longer than the input
//    (the encoders write the shortest forms) that decode to the same
//    message, and encoding that again gives the same bytes;
//  - a COMMITS decodes back to the same entries (at least one, versions
//    increasing, an entry without a patch has a seq);
//  - a WRITE's patch, decoded with default limits on a fresh KeyTable, is
//    a patch or a refusal (kInvalidArgument / kResourceExhausted) that
//    leaves the table empty; an accepted one re-encodes and decodes back.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "realm/patch.h"
#include "realm/wire.h"

namespace {

using namespace tessera;
using namespace tessera::realm;
using namespace tessera::realm::wire;

void Check(bool ok) {
  if (!ok) std::abort();
}

std::span<const uint8_t> AsBytes(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

std::string_view AsText(std::span<const uint8_t> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

void CheckRefusal(const Status& status) {
  Check(status.code() == StatusCode::kInvalidArgument);
  Check(!status.message().empty());
  Check(status.message().size() <= 123);
}

template <typename... F>
struct Visitor : F... {
  using F::operator()...;
};
template <typename... F>
Visitor(F...) -> Visitor<F...>;

std::string Encode(const ClientMessage& msg) {
  return std::visit(
      Visitor{
          [](const Hello& m) {
            return EncodeHello(m.ticket, m.epoch, m.version, m.protocol,
                               m.flags);
          },
          [](const Write& m) { return EncodeWrite(m.seq, AsText(m.patch)); },
          [](const Ping& m) { return EncodePing(m.nonce); },
          [](const Pong& m) { return EncodePong(m.nonce); },
          [](const Intent& m) { return EncodeIntent(m.seq, m.name, m.args); }},
      msg);
}

std::string Encode(const ServerMessage& msg) {
  return std::visit(
      Visitor{[](const Hydrate& m) {
                return EncodeHydrate(m.epoch, m.version, m.avatar, m.limits,
                                     m.state);
              },
              [](const Resume& m) {
                return EncodeResume(m.epoch, m.from, m.head, m.avatar,
                                    m.limits);
              },
              [](const Commit& m) {
                return EncodeCommit(m.version, m.patch, m.seq);
              },
              [](const Ack& m) { return EncodeAck(m.seq, m.version); },
              [](const Reject& m) {
                return EncodeReject(m.seq, m.code, m.message);
              },
              [](const Ping& m) { return EncodePing(m.nonce); },
              [](const Pong& m) { return EncodePong(m.nonce); },
              [](const Commits& m) {
                CommitsWriter w;
                for (const CommitsEntry& e : m.entries) {
                  if (e.patch.has_value()) {
                    w.Add(e.version, *e.patch, e.seq);
                  } else {
                    w.AddAck(e.version, e.seq.value());
                  }
                }
                return w.Take();
              }},
      msg);
}

bool Same(const ClientMessage& a, const ClientMessage& b) {
  if (a.index() != b.index()) return false;
  if (const auto* x = std::get_if<Hello>(&a)) {
    const auto& y = std::get<Hello>(b);
    return x->protocol == y.protocol && x->ticket == y.ticket &&
           x->epoch == y.epoch && x->version == y.version &&
           x->flags == y.flags;
  }
  if (const auto* x = std::get_if<Write>(&a)) {
    const auto& y = std::get<Write>(b);
    return x->seq == y.seq && AsText(x->patch) == AsText(y.patch);
  }
  if (const auto* x = std::get_if<Ping>(&a)) {
    return x->nonce == std::get<Ping>(b).nonce;
  }
  if (const auto* x = std::get_if<Intent>(&a)) {
    const auto& y = std::get<Intent>(b);
    return x->seq == y.seq && x->name == y.name && x->args == y.args;
  }
  return std::get<Pong>(a).nonce == std::get<Pong>(b).nonce;
}

void CheckPatch(std::span<const uint8_t> bytes) {
  KeyTable keys;
  Result<Patch> patch = DecodePatch(bytes, &keys);
  if (!patch.ok()) {
    const StatusCode code = patch.status().code();
    Check(code == StatusCode::kInvalidArgument ||
          code == StatusCode::kResourceExhausted);
    Check(!patch.status().message().empty());
    Check(keys.size() == 0);
    return;
  }
  KeyTable enc, dec;
  const std::string again = EncodePatch(*patch, &enc);
  Result<Patch> back = DecodePatch(AsBytes(again), &dec);
  Check(back.ok());
  Check(*back == *patch);
}

void CheckClient(std::span<const uint8_t> bytes) {
  Result<ClientMessage> msg = DecodeClientMessage(bytes);
  if (!msg.ok()) return CheckRefusal(msg.status());
  const std::string again = Encode(*msg);
  Check(again.size() <= bytes.size());
  Result<ClientMessage> back = DecodeClientMessage(AsBytes(again));
  Check(back.ok());
  Check(Same(*msg, *back));
  Check(Encode(*back) == again);
  if (const auto* write = std::get_if<Write>(&*msg)) CheckPatch(write->patch);
}

void CheckServer(std::span<const uint8_t> bytes) {
  Result<ServerMessage> msg = DecodeServerMessage(bytes);
  if (!msg.ok()) return CheckRefusal(msg.status());
  const std::string again = Encode(*msg);
  Check(again.size() <= bytes.size());
  Result<ServerMessage> back = DecodeServerMessage(AsBytes(again));
  Check(back.ok());
  Check(back->index() == msg->index());
  Check(Encode(*back) == again);
  if (const auto* commits = std::get_if<Commits>(&*msg)) {
    Check(!commits->entries.empty());
    Check(commits->entries == std::get<Commits>(*back).entries);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> bytes(data, size);
  CheckClient(bytes);
  CheckServer(bytes);
  return 0;
}
