#include "net/webtransport/wt_wire.h"

#include <algorithm>
#include <cstring>
#include <string_view>

namespace tessera::net::wt {
namespace {

std::span<const uint8_t> AsBytes(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

constexpr size_t kMaxCloseReason = 1024;

}  // namespace

size_t VarintSize(uint64_t value) {
  if (value < (uint64_t{1} << 6)) return 1;
  if (value < (uint64_t{1} << 14)) return 2;
  if (value < (uint64_t{1} << 30)) return 4;
  return 8;
}

void AppendVarint(std::string& out, uint64_t value) {
  const size_t n = VarintSize(value);
  const uint8_t prefix = n == 1 ? 0x00 : n == 2 ? 0x40 : n == 4 ? 0x80 : 0xc0;
  for (size_t i = 0; i < n; ++i) {
    uint8_t byte = static_cast<uint8_t>(value >> (8 * (n - 1 - i)));
    if (i == 0) byte = static_cast<uint8_t>((byte & 0x3f) | prefix);
    out.push_back(static_cast<char>(byte));
  }
}

bool Reader::Varint(uint64_t* value) {
  if (pos_ >= bytes_.size()) return false;
  const size_t n = size_t{1} << (bytes_[pos_] >> 6);
  if (remaining() < n) return false;
  uint64_t v = bytes_[pos_] & 0x3f;
  for (size_t i = 1; i < n; ++i) v = (v << 8) | bytes_[pos_ + i];
  pos_ += n;
  *value = v;
  return true;
}

bool Reader::Bytes(size_t n, std::span<const uint8_t>* out) {
  if (remaining() < n) return false;
  *out = bytes_.subspan(pos_, n);
  pos_ += n;
  return true;
}

void TlvReader::Feed(std::span<const uint8_t> bytes) {
  // Compact once the consumed prefix is most of the buffer.
  if (pos_ > 0 && pos_ * 2 >= buf_.size()) {
    buf_.erase(0, pos_);
    pos_ = 0;
  }
  buf_.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

TlvReader::Next TlvReader::Take(Tlv* out, std::string* error) {
  Reader r(AsBytes(std::string_view(buf_).substr(pos_)));
  uint64_t type = 0;
  uint64_t length = 0;
  if (!r.Varint(&type)) return Next::kNeedMore;
  if (!r.Varint(&length)) return Next::kNeedMore;
  if (length > max_payload_) {
    *error = "frame of type " + std::to_string(type) + " declares " +
             std::to_string(length) + " bytes (at most " +
             std::to_string(max_payload_) + ")";
    return Next::kError;
  }
  std::span<const uint8_t> payload;
  if (!r.Bytes(static_cast<size_t>(length), &payload)) return Next::kNeedMore;
  out->type = type;
  out->payload.assign(reinterpret_cast<const char*>(payload.data()),
                      payload.size());
  pos_ += r.consumed();
  return Next::kTlv;
}

std::string TlvReader::TakeRest() {
  std::string rest = buf_.substr(pos_);
  buf_.clear();
  pos_ = 0;
  return rest;
}

Result<Settings> ParseSettings(std::span<const uint8_t> payload) {
  Reader r(payload);
  Settings out;
  while (r.remaining() > 0) {
    uint64_t id = 0;
    uint64_t value = 0;
    if (!r.Varint(&id) || !r.Varint(&value)) {
      return InvalidArgument("SETTINGS ends inside a setting");
    }
    if (std::any_of(out.begin(), out.end(),
                    [id](const auto& s) { return s.first == id; })) {
      return InvalidArgument("SETTINGS repeats identifier " +
                             std::to_string(id));
    }
    out.emplace_back(id, value);
  }
  return out;
}

std::string EncodeTlv(uint64_t type, std::span<const uint8_t> payload) {
  std::string out;
  AppendVarint(out, type);
  AppendVarint(out, payload.size());
  out.append(reinterpret_cast<const char*>(payload.data()), payload.size());
  return out;
}

std::string ServerControlStreamPreamble() {
  // Chromium's draft-02 keys on ENABLE_WEBTRANSPORT and H3_DATAGRAM (in
  // either code), draft-07 on WEBTRANSPORT_MAX_SESSIONS, newer drafts on
  // WT_MAX_SESSIONS; all need extended CONNECT. The QPACK dynamic table
  // stays off (capacity 0), so neither QPACK stream carries anything.
  const Settings settings = {
      {kSettingQpackMaxTableCapacity, 0},
      {kSettingQpackBlockedStreams, 0},
      {kSettingEnableConnectProtocol, 1},
      {kSettingH3Datagram, 1},
      {kSettingH3DatagramDraft04, 1},
      {kSettingEnableWebTransport, 1},
      {kSettingWebTransportMaxSessionsDraft07, 1},
      {kSettingWtMaxSessions, 1},
  };
  std::string payload;
  for (const auto& [id, value] : settings) {
    AppendVarint(payload, id);
    AppendVarint(payload, value);
  }
  std::string out;
  AppendVarint(out, kUniControl);
  out += EncodeTlv(kFrameSettings, AsBytes(payload));
  return out;
}

std::optional<BidiStart> ParseBidiStart(std::span<const uint8_t> bytes) {
  Reader r(bytes);
  uint64_t first = 0;
  if (!r.Varint(&first)) return std::nullopt;
  BidiStart out;
  if (first != kWtBidiSignal) return out;
  if (!r.Varint(&out.session_id)) return std::nullopt;
  out.webtransport = true;
  out.consumed = r.consumed();
  return out;
}

Result<Datagram> ParseDatagram(std::span<const uint8_t> bytes) {
  Reader r(bytes);
  uint64_t quarter = 0;
  if (!r.Varint(&quarter)) return InvalidArgument("datagram without a prefix");
  // A quarter stream id above 2^60 - 1 names no stream (RFC 9297 §2.1).
  if (quarter > (kMaxVarint >> 2)) {
    return InvalidArgument("datagram quarter stream id out of range");
  }
  Datagram out;
  out.session_id = quarter * 4;
  out.payload = r.rest();
  return out;
}

std::string DatagramPrefix(uint64_t session_id) {
  std::string out;
  AppendVarint(out, session_id / 4);
  return out;
}

Result<CloseSession> ParseCloseSession(std::span<const uint8_t> payload) {
  if (payload.size() < 4) {
    return InvalidArgument("CLOSE_WEBTRANSPORT_SESSION shorter than its code");
  }
  if (payload.size() - 4 > kMaxCloseReason) {
    return InvalidArgument("CLOSE_WEBTRANSPORT_SESSION reason too long");
  }
  CloseSession out;
  out.code = (uint32_t{payload[0]} << 24) | (uint32_t{payload[1]} << 16) |
             (uint32_t{payload[2]} << 8) | uint32_t{payload[3]};
  out.reason.assign(reinterpret_cast<const char*>(payload.data()) + 4,
                    payload.size() - 4);
  return out;
}

std::string EncodeCloseSession(uint32_t code, std::string_view reason) {
  std::string payload;
  for (int shift = 24; shift >= 0; shift -= 8) {
    payload.push_back(static_cast<char>((code >> shift) & 0xff));
  }
  payload.append(reason.substr(0, kMaxCloseReason));
  return EncodeTlv(kCapsuleCloseSession, AsBytes(payload));
}

}  // namespace tessera::net::wt
