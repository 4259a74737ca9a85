// The realm protocol's messages (docs/protocol.md "Realms
// (tessera.realm.v1)"): decoding client messages (untrusted bytes, every
// byte checked) and encoding server messages, plus the other direction for
// test clients and tools. Patches travel inside as `bin` holding the
// binary patch form (realm/patch.h); this file frames them and never
// decodes them (the caller does, with its connection's key table and
// limits). Pure functions; thread-safe.
#ifndef TESSERA_REALM_WIRE_H_
#define TESSERA_REALM_WIRE_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/status.h"
#include "realm/msgpack_writer.h"
#include "realm/patch.h"

namespace tessera::realm::wire {

inline constexpr uint64_t kProtocol = 1;
inline constexpr std::string_view kSubprotocol = "tessera.realm.v1";
// Every seq, epoch and version is at most this (exact in a double).
inline constexpr uint64_t kMaxInteger = uint64_t{1} << 53;

enum MsgType : uint8_t {
  kHello = 1,
  kWrite = 2,
  kPing = 3,
  kPong = 4,
  kIntent = 5,
  kHydrate = 16,
  kResume = 17,
  kCommit = 18,
  kAck = 19,
  kReject = 20,
  kCommits = 21,
};

// HELLO's `flags` bits: what the client understands beyond protocol 1's
// messages. Unknown bits are ignored.
inline constexpr uint64_t kHelloCommits = 1;  // COMMITS instead of COMMIT/ACK

// Client to server. Views point into the decoded buffer.
struct Hello {
  uint64_t protocol = 0;
  std::string_view ticket;
  uint64_t epoch = 0;  // what the client holds; 0, 0: nothing
  uint64_t version = 0;
  uint64_t flags = 0;  // kHello* bits; absent: 0
};
struct Write {
  uint64_t seq = 0;
  std::span<const uint8_t> patch;  // the binary patch form, undecoded
};
struct Ping {
  uint64_t nonce = 0;
};
struct Pong {
  uint64_t nonce = 0;
};
// The longest intent name.
inline constexpr size_t kMaxIntentName = 64;
struct Intent {
  uint64_t seq = 0;
  std::string_view name;  // 1..kMaxIntentName bytes
  std::string_view args;  // JSON text, unparsed
};
using ClientMessage = std::variant<Hello, Write, Ping, Pong, Intent>;

// Decodes one client message. Errors: kInvalidArgument with a short reason
// for the close frame ("not a MessagePack array", "unknown message type 9",
// "HELLO: epoch must be an integer in 0..2^53", ...). Integers of any
// width are read by value; trailing elements are ignored.
Result<ClientMessage> DecodeClientMessage(std::span<const uint8_t> bytes);

// Server to client. `limits` is AdvertisedLimits(...) (a JSON object of
// integers), written as a MessagePack map; `state` and `patch` are encoded
// patches (EncodePatch on the connection's outgoing key table).
std::string EncodeHydrate(uint64_t epoch, uint64_t version,
                          std::string_view avatar, const Json& limits,
                          std::string_view state);
std::string EncodeResume(uint64_t epoch, uint64_t from, uint64_t head,
                         std::string_view avatar, const Json& limits);
// With `seq`: the reader's own write, changed by slicing.
std::string EncodeCommit(uint64_t version, std::string_view patch,
                         std::optional<uint64_t> seq = std::nullopt);
std::string EncodeAck(uint64_t seq, uint64_t version);

// COMMITS [21, entries]: the commits of one group commit a reader may
// read, in version order, in one message (for a client whose HELLO set
// kHelloCommits). Each entry stands for the COMMIT or ACK it replaces:
// [version, patch] another writer's commit, [version, patch, seq] the
// reader's own WRITE changed by slicing, [version, nil, seq] the reader's
// own WRITE exactly as sent (an ACK). Add versions in increasing order.
class CommitsWriter {
 public:
  CommitsWriter();
  void Add(uint64_t version, std::string_view patch,
           std::optional<uint64_t> seq = std::nullopt);
  void AddAck(uint64_t version, uint64_t seq);
  size_t size() const { return count_; }  // entries
  size_t bytes() const { return out_.size(); }
  // The message; the writer is empty again afterwards.
  std::string Take();

 private:
  MsgWriter out_;  // room for the header, then the entries
  size_t count_ = 0;
};
// `code`: "limits_exceeded", "permission_denied" or "invalid_patch".
std::string EncodeReject(uint64_t seq, std::string_view code,
                         std::string_view message);
std::string EncodePing(uint64_t nonce);
std::string EncodePong(uint64_t nonce);

// Server messages decoded (test clients, tools, benchmarks). Copies.
struct Hydrate {
  uint64_t epoch = 0, version = 0;
  std::string avatar;
  Json limits = Json::object();
  std::string state;  // an encoded patch
};
struct Resume {
  uint64_t epoch = 0, from = 0, head = 0;
  std::string avatar;
  Json limits = Json::object();
};
struct Commit {
  uint64_t version = 0;
  std::string patch;  // an encoded patch
  std::optional<uint64_t> seq;
};
struct Ack {
  uint64_t seq = 0, version = 0;
};
struct Reject {
  uint64_t seq = 0;
  std::string code, message;
};
// One entry of COMMITS: `patch` absent is an ACK of `seq`.
struct CommitsEntry {
  uint64_t version = 0;
  std::optional<std::string> patch;
  std::optional<uint64_t> seq;
  bool operator==(const CommitsEntry&) const = default;
};
struct Commits {
  std::vector<CommitsEntry> entries;  // at least one, versions increasing
};
using ServerMessage =
    std::variant<Hydrate, Resume, Commit, Ack, Reject, Ping, Pong, Commits>;
Result<ServerMessage> DecodeServerMessage(std::span<const uint8_t> bytes);

// Client-side encoders.
// `flags` 0 is left out (a HELLO of 5 elements, as before flags existed).
std::string EncodeHello(std::string_view ticket, uint64_t epoch,
                        uint64_t version, uint64_t protocol = kProtocol,
                        uint64_t flags = 0);
std::string EncodeWrite(uint64_t seq, std::string_view patch);
std::string EncodeIntent(uint64_t seq, std::string_view name,
                         std::string_view args_json);

}  // namespace tessera::realm::wire

#endif  // TESSERA_REALM_WIRE_H_
