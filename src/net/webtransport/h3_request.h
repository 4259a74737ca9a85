// The HTTP/3 request stream of a WebTransport session (pure but for
// nghttp3's QPACK): the client's HEADERS (decoded with no dynamic table),
// then, once the session is open, DATA frames whose payload carries
// capsules (CLOSE_WEBTRANSPORT_SESSION ends the session; DRAIN, GREASE and
// unknown capsules are skipped), other frames skipped. Every byte checked.
#ifndef TESSERA_NET_WEBTRANSPORT_H3_REQUEST_H_
#define TESSERA_NET_WEBTRANSPORT_H3_REQUEST_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "net/webtransport/wt_wire.h"

struct nghttp3_qpack_encoder;
struct nghttp3_qpack_decoder;

namespace tessera::net::wt {

// HTTP/3 error codes (RFC 9114 §8.1).
inline constexpr uint64_t kH3FrameUnexpected = 0x105;
inline constexpr uint64_t kH3FrameError = 0x106;
inline constexpr uint64_t kH3MessageError = 0x10e;

struct RequestHeaders {
  std::string method, protocol, scheme, authority, path, origin;
};

// A connection's QPACK encoder and decoder (dynamic tables off).
class H3Codec {
 public:
  H3Codec();
  ~H3Codec();
  H3Codec(const H3Codec&) = delete;
  H3Codec& operator=(const H3Codec&) = delete;

  // A HEADERS frame payload's field section, decoded. Errors:
  // kInvalidArgument (bad QPACK, too many or too large fields).
  Result<RequestHeaders> DecodeRequest(int64_t stream_id,
                                       std::span<const uint8_t> block);
  // A whole HEADERS frame answering with `status`.
  std::string ResponseHeaders(int64_t stream_id, int status);
  // A whole DATA frame carrying `payload`.
  std::string DataFrame(std::string_view payload) const;

 private:
  nghttp3_qpack_encoder* encoder_ = nullptr;
  nghttp3_qpack_decoder* decoder_ = nullptr;
};

class H3RequestStream {
 public:
  struct Events {
    std::optional<RequestHeaders> headers;  // the request arrived
    bool close = false;                     // CLOSE_WEBTRANSPORT_SESSION
    std::optional<CloseSession> close_info;
    std::string error;  // the stream is broken: reset it with error_code
    uint64_t error_code = 0;
  };
  // Bytes of the stream, in order. After an error or a close, further
  // bytes are ignored.
  Events Feed(H3Codec& codec, std::span<const uint8_t> bytes,
              int64_t stream_id = 0);

 private:
  TlvReader frames_{16 * 1024};
  TlvReader capsules_{64 * 1024};
  bool got_headers_ = false;
  bool done_ = false;
};

}  // namespace tessera::net::wt

#endif  // TESSERA_NET_WEBTRANSPORT_H3_REQUEST_H_
