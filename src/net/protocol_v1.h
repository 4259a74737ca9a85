// Wire protocol v1 (docs/protocol.md): decoding client messages (untrusted
// bytes, every byte checked) and encoding server messages. Pure functions.
#ifndef TESSERA_NET_PROTOCOL_V1_H_
#define TESSERA_NET_PROTOCOL_V1_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "common/status.h"

namespace tessera::net::v1 {

inline constexpr uint32_t kVersion = 1;

enum MsgType : uint8_t {
  kHello = 1,
  kInput = 2,
  kPing = 3,
  kPong = 4,
  kWelcome = 16,
  kAck = 17,
  kReject = 18,
  kFrame = 19,
  kTransfer = 20,
  kNotify = 21,
  kClose = 22,
};

// HELLO flag bits (docs/protocol.md).
inline constexpr uint64_t kHelloFrameAcks = 1;

struct Hello {
  uint64_t version = 0;
  std::string_view ticket;  // points into the decoded buffer
  uint64_t flags = 0;       // absent: 0; unknown bits are ignored
};
// The largest view tick (and seq): every integer up to it is exact in a
// double.
inline constexpr uint64_t kMaxViewTick = uint64_t{1} << 53;

struct Input {
  uint64_t seq = 0;
  std::string_view payload;  // points into the decoded buffer
  // The (fractional) tick the client was drawing when the input was made:
  // finite, 0..kMaxViewTick (docs/protocol.md "View tick and lag
  // compensation"); nullopt when not stamped.
  std::optional<double> view_tick;
};
struct Ping {
  uint64_t nonce = 0;
};
struct Pong {
  uint64_t nonce = 0;
};
using ClientMessage = std::variant<Hello, Input, Ping, Pong>;

// Decodes one client message. Views point into `bytes`, which must outlive
// the result. Errors: kInvalidArgument with a short reason suitable for the
// close frame ("not a MessagePack array", "unknown message type 9", ...).
Result<ClientMessage> DecodeClientMessage(std::span<const uint8_t> bytes);

// `flags`: the HELLO flags the server honours (0: the element is left out).
std::string EncodeWelcome(std::string_view shard_id,
                          std::string_view subscriber_id, uint32_t tick_rate,
                          std::string_view codec, uint64_t tick,
                          uint64_t flags = 0);
std::string EncodeAck(uint64_t seq);
std::string EncodeReject(uint64_t seq, std::string_view error);
std::string EncodePing(uint64_t nonce);
std::string EncodePong(uint64_t nonce);
// The bytes of a FRAME message that precede the snapshot: the complete
// message is FrameHeader(...) + snapshot, so one snapshot buffer can be
// shared by every connection (written as two buffers).
std::string EncodeFrameHeader(uint64_t tick, uint64_t last_seq,
                              size_t snapshot_size);
// A replication FRAME [19, tick, last_seq, snapshot | nil, entities] is
// ViewFrameHeader(...) + snapshot (when sized) + BinHeader(entities size)
// + entities.
std::string EncodeViewFrameHeader(uint64_t tick, uint64_t last_seq,
                                  std::optional<size_t> snapshot_size);
std::string EncodeBinHeader(size_t size);
// TRANSFER [20, shard_id, ticket]: the player moved to `shard_id`; `ticket`
// joins it there. The last message before the close 4011.
std::string EncodeTransfer(std::string_view shard_id, std::string_view ticket);
// NOTIFY [21, module, channel, payload, flow_id]: a compute module's
// notification (docs/protocol.md "Notifications from compute modules");
// `channel` is the channel emitted, or "spatial:<shard>".
std::string EncodeNotify(std::string_view module, std::string_view channel,
                         std::string_view payload, std::string_view flow_id);

// CLOSE [22, code, reason]: the last message of a WebTransport session,
// with the code and reason a WebSocket close frame would carry (a browser
// does not see WebTransport's own close code reliably).
std::string EncodeClose(int code, std::string_view reason);

// Decoding server messages (test clients, tools).
struct Welcome {
  std::string shard_id, subscriber_id, codec;
  uint32_t tick_rate = 0;
  uint64_t tick = 0;
  uint64_t flags = 0;  // the HELLO flags the server honours
};
struct Ack {
  uint64_t seq = 0;
};
struct Reject {
  uint64_t seq = 0;
  std::string error;
};
struct Frame {
  uint64_t tick = 0, last_seq = 0;
  std::string snapshot;       // empty when nil
  bool snapshot_nil = false;  // replication: the snapshot did not change
  std::optional<std::string> entities;  // replication payload, if present
};
struct Transfer {
  std::string shard_id;  // where the player is now
  std::string ticket;    // for HELLO there
};
struct Notify {
  std::string module;   // the emitting compute module
  std::string channel;  // as emitted, or "spatial:<shard>"
  std::string payload;  // the module's bytes
  std::string flow_id;  // of the run that emitted it
};
using ServerMessage =
    std::variant<Welcome, Ack, Reject, Frame, Ping, Pong, Transfer, Notify>;
Result<ServerMessage> DecodeServerMessage(std::span<const uint8_t> bytes);

// Client-side encoders (test clients, the bench bot driver).
std::string EncodeHello(std::string_view ticket, uint64_t version = kVersion,
                        uint64_t flags = 0);
// `view_tick` (finite, 0..kMaxViewTick) goes out as an unsigned integer
// when it is integral, else as a float64.
std::string EncodeInput(uint64_t seq, std::string_view payload,
                        std::optional<double> view_tick = std::nullopt);

}  // namespace tessera::net::v1

#endif  // TESSERA_NET_PROTOCOL_V1_H_
