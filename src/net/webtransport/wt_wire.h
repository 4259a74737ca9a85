// The bytes of HTTP/3 and WebTransport that tessera parses itself (pure,
// every untrusted byte checked): QUIC variable-length integers (RFC 9000
// §16), HTTP/3 frames and capsules (both type-length-value), SETTINGS, the
// first bytes of a stream (a WebTransport bidi stream's signal and session
// id, a uni stream's type) and the quarter-stream-id prefix of an HTTP
// datagram. docs/protocol.md "WebTransport" says how they are used.
#ifndef TESSERA_NET_WEBTRANSPORT_WT_WIRE_H_
#define TESSERA_NET_WEBTRANSPORT_WT_WIRE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

namespace tessera::net::wt {

inline constexpr uint64_t kMaxVarint = (uint64_t{1} << 62) - 1;

// HTTP/3 frame types (RFC 9114 §7.2) and WebTransport's stream signal.
inline constexpr uint64_t kFrameData = 0x00;
inline constexpr uint64_t kFrameHeaders = 0x01;
inline constexpr uint64_t kFrameSettings = 0x04;
inline constexpr uint64_t kFrameGoaway = 0x07;
inline constexpr uint64_t kWtBidiSignal = 0x41;
// Unidirectional stream types.
inline constexpr uint64_t kUniControl = 0x00;
inline constexpr uint64_t kUniQpackEncoder = 0x02;
inline constexpr uint64_t kUniQpackDecoder = 0x03;
inline constexpr uint64_t kUniWebTransport = 0x54;
// Capsules on the CONNECT stream.
inline constexpr uint64_t kCapsuleCloseSession = 0x2843;
inline constexpr uint64_t kCapsuleDrainSession = 0x78ae;

// The bytes of `value` as a varint; `value` must be <= kMaxVarint.
size_t VarintSize(uint64_t value);
void AppendVarint(std::string& out, uint64_t value);

// Reads from a byte span; every read checks what is left. A failed read
// consumes nothing.
class Reader {
 public:
  explicit Reader(std::span<const uint8_t> bytes) : bytes_(bytes) {}
  bool Varint(uint64_t* value);
  bool Bytes(size_t n, std::span<const uint8_t>* out);
  size_t consumed() const { return pos_; }
  size_t remaining() const { return bytes_.size() - pos_; }
  std::span<const uint8_t> rest() const { return bytes_.subspan(pos_); }

 private:
  std::span<const uint8_t> bytes_;
  size_t pos_ = 0;
};

// One HTTP/3 frame or capsule (the same layout: type, length, payload).
struct Tlv {
  uint64_t type = 0;
  std::string payload;
};

// Collects a stream's bytes and cuts them into TLVs. A TLV whose declared
// length exceeds `max_payload` is an error (nothing that large is expected
// on the streams tessera parses).
class TlvReader {
 public:
  explicit TlvReader(size_t max_payload) : max_payload_(max_payload) {}
  void Feed(std::span<const uint8_t> bytes);
  enum class Next { kNeedMore, kTlv, kError };
  // Takes the next whole TLV into `out`.
  Next Take(Tlv* out, std::string* error);
  // The bytes fed and not yet taken (after the last TLV, say once the
  // reader is done with the framed part of a stream).
  std::string TakeRest();

 private:
  const size_t max_payload_;
  std::string buf_;
  size_t pos_ = 0;
};

// SETTINGS identifiers tessera sends (docs/protocol.md).
inline constexpr uint64_t kSettingQpackMaxTableCapacity = 0x01;
inline constexpr uint64_t kSettingQpackBlockedStreams = 0x07;
inline constexpr uint64_t kSettingEnableConnectProtocol = 0x08;
inline constexpr uint64_t kSettingH3Datagram = 0x33;
inline constexpr uint64_t kSettingH3DatagramDraft04 = 0xffd277;
inline constexpr uint64_t kSettingEnableWebTransport = 0x2b603742;
inline constexpr uint64_t kSettingWebTransportMaxSessionsDraft07 = 0xc671706a;
inline constexpr uint64_t kSettingWtMaxSessions = 0x14e9cd29;

using Settings = std::vector<std::pair<uint64_t, uint64_t>>;
// A SETTINGS frame's payload; a repeated identifier is an error.
Result<Settings> ParseSettings(std::span<const uint8_t> payload);
// The control stream's first bytes: the stream type and a SETTINGS frame
// advertising every WebTransport dialect browsers key on.
std::string ServerControlStreamPreamble();
// A whole TLV (frame or capsule).
std::string EncodeTlv(uint64_t type, std::span<const uint8_t> payload);

// The first bytes of a client-initiated bidirectional stream: a
// WebTransport stream (signal 0x41 + session id), or an HTTP/3 request
// (anything else: its first frame type).
struct BidiStart {
  bool webtransport = false;
  uint64_t session_id = 0;  // with webtransport
  size_t consumed = 0;      // bytes of the signal and session id
};
// Nullopt: more bytes are needed to tell.
std::optional<BidiStart> ParseBidiStart(std::span<const uint8_t> bytes);

// An HTTP datagram: the quarter stream id (the CONNECT stream's id / 4)
// and the payload (a view into the datagram).
struct Datagram {
  uint64_t session_id = 0;
  std::span<const uint8_t> payload;
};
Result<Datagram> ParseDatagram(std::span<const uint8_t> bytes);
// The prefix of a datagram for session `session_id` (a multiple of 4).
std::string DatagramPrefix(uint64_t session_id);

// CLOSE_WEBTRANSPORT_SESSION's payload: a 32-bit code and a UTF-8 reason
// (at most 1024 bytes, not checked for UTF-8 here).
struct CloseSession {
  uint32_t code = 0;
  std::string reason;
};
Result<CloseSession> ParseCloseSession(std::span<const uint8_t> payload);
std::string EncodeCloseSession(uint32_t code, std::string_view reason);

}  // namespace tessera::net::wt

#endif  // TESSERA_NET_WEBTRANSPORT_WT_WIRE_H_
