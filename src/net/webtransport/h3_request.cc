#include "net/webtransport/h3_request.h"

#include <nghttp3/nghttp3.h>

#include <string_view>

namespace tessera::net::wt {
namespace {

constexpr size_t kMaxFields = 64;
constexpr size_t kMaxFieldBytes = 8 * 1024;

std::span<const uint8_t> AsBytes(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

nghttp3_nv Nv(std::string_view name, std::string_view value) {
  nghttp3_nv nv;
  nv.name = reinterpret_cast<uint8_t*>(const_cast<char*>(name.data()));
  nv.namelen = name.size();
  nv.value = reinterpret_cast<uint8_t*>(const_cast<char*>(value.data()));
  nv.valuelen = value.size();
  nv.flags = NGHTTP3_NV_FLAG_NONE;
  return nv;
}

std::string_view View(nghttp3_rcbuf* buf) {
  nghttp3_vec v = nghttp3_rcbuf_get_buf(buf);
  return {reinterpret_cast<const char*>(v.base), v.len};
}

}  // namespace

H3Codec::H3Codec() {
  const nghttp3_mem* mem = nghttp3_mem_default();
  (void)nghttp3_qpack_encoder_new(&encoder_, 0, mem);
  (void)nghttp3_qpack_decoder_new(&decoder_, 0, 0, mem);
}

H3Codec::~H3Codec() {
  if (encoder_ != nullptr) nghttp3_qpack_encoder_del(encoder_);
  if (decoder_ != nullptr) nghttp3_qpack_decoder_del(decoder_);
}

Result<RequestHeaders> H3Codec::DecodeRequest(int64_t stream_id,
                                              std::span<const uint8_t> block) {
  if (decoder_ == nullptr) return Internal("no QPACK decoder");
  const nghttp3_mem* mem = nghttp3_mem_default();
  nghttp3_qpack_stream_context* sctx = nullptr;
  if (nghttp3_qpack_stream_context_new(&sctx, stream_id, mem) != 0) {
    return Internal("no QPACK stream context");
  }
  RequestHeaders out;
  std::string error;
  size_t fields = 0;
  const uint8_t* p = block.data();
  size_t left = block.size();
  for (;;) {
    nghttp3_qpack_nv nv;
    uint8_t flags = 0;
    const nghttp3_ssize n = nghttp3_qpack_decoder_read_request(
        decoder_, sctx, &nv, &flags, p, left, /*fin=*/1);
    if (n < 0) {
      error = std::string("QPACK: ") + nghttp3_strerror(static_cast<int>(n));
      break;
    }
    p += n;
    left -= static_cast<size_t>(n);
    if ((flags & NGHTTP3_QPACK_DECODE_FLAG_EMIT) != 0) {
      const std::string_view name = View(nv.name);
      const std::string_view value = View(nv.value);
      if (++fields > kMaxFields || value.size() > kMaxFieldBytes) {
        error = "too many or too large header fields";
      } else if (name == ":method") {
        out.method = value;
      } else if (name == ":protocol") {
        out.protocol = value;
      } else if (name == ":scheme") {
        out.scheme = value;
      } else if (name == ":authority") {
        out.authority = value;
      } else if (name == ":path") {
        out.path = value;
      } else if (name == "origin") {
        out.origin = value;
      }
      nghttp3_rcbuf_decref(nv.name);
      nghttp3_rcbuf_decref(nv.value);
      if (!error.empty()) break;
      continue;
    }
    if ((flags & NGHTTP3_QPACK_DECODE_FLAG_FINAL) != 0) break;
    // Blocked (no dynamic table here: never legitimately) or no progress.
    error = "QPACK field section incomplete";
    break;
  }
  nghttp3_qpack_stream_context_del(sctx);
  if (!error.empty()) return InvalidArgument(error);
  return out;
}

std::string H3Codec::ResponseHeaders(int64_t stream_id, int status) {
  const std::string code = std::to_string(status);
  // draft-02 clients look for the version header in the response.
  const nghttp3_nv nva[] = {Nv(":status", code),
                            Nv("sec-webtransport-http3-draft", "draft02")};
  const nghttp3_mem* mem = nghttp3_mem_default();
  nghttp3_buf pbuf, rbuf, ebuf;
  nghttp3_buf_init(&pbuf);
  nghttp3_buf_init(&rbuf);
  nghttp3_buf_init(&ebuf);
  std::string block;
  if (encoder_ != nullptr &&
      nghttp3_qpack_encoder_encode(encoder_, &pbuf, &rbuf, &ebuf, stream_id,
                                   nva, status == 200 ? 2 : 1) == 0) {
    block.append(reinterpret_cast<const char*>(pbuf.pos),
                 nghttp3_buf_len(&pbuf));
    block.append(reinterpret_cast<const char*>(rbuf.pos),
                 nghttp3_buf_len(&rbuf));
  }
  nghttp3_buf_free(&pbuf, mem);
  nghttp3_buf_free(&rbuf, mem);
  nghttp3_buf_free(&ebuf, mem);
  return EncodeTlv(kFrameHeaders, AsBytes(block));
}

std::string H3Codec::DataFrame(std::string_view payload) const {
  return EncodeTlv(kFrameData, AsBytes(payload));
}

H3RequestStream::Events H3RequestStream::Feed(H3Codec& codec,
                                              std::span<const uint8_t> bytes,
                                              int64_t stream_id) {
  Events ev;
  if (done_) return ev;
  frames_.Feed(bytes);
  auto fail = [&](std::string why, uint64_t code) {
    ev.error = std::move(why);
    ev.error_code = code;
    done_ = true;
    return ev;
  };
  for (;;) {
    Tlv frame;
    std::string error;
    const TlvReader::Next next = frames_.Take(&frame, &error);
    if (next == TlvReader::Next::kNeedMore) break;
    if (next == TlvReader::Next::kError) return fail(error, kH3FrameError);
    const std::span<const uint8_t> payload = AsBytes(frame.payload);
    if (!got_headers_) {
      if (frame.type == kFrameData) {
        return fail("DATA before HEADERS", kH3FrameUnexpected);
      }
      if (frame.type != kFrameHeaders) continue;  // reserved / unknown
      Result<RequestHeaders> h = codec.DecodeRequest(stream_id, payload);
      if (!h.ok()) return fail(h.status().message(), kH3MessageError);
      got_headers_ = true;
      ev.headers = std::move(h).value();
      continue;
    }
    if (frame.type != kFrameData) continue;  // trailers, GREASE, unknown
    capsules_.Feed(payload);
    for (;;) {
      Tlv capsule;
      const TlvReader::Next c = capsules_.Take(&capsule, &error);
      if (c == TlvReader::Next::kNeedMore) break;
      if (c == TlvReader::Next::kError) return fail(error, kH3MessageError);
      if (capsule.type != kCapsuleCloseSession) continue;
      Result<CloseSession> close = ParseCloseSession(AsBytes(capsule.payload));
      if (!close.ok()) return fail(close.status().message(), kH3MessageError);
      ev.close = true;
      ev.close_info = std::move(close).value();
      done_ = true;
      return ev;
    }
  }
  return ev;
}

}  // namespace tessera::net::wt
