// Whole-message encoding and decoding in the codec a shard was started with
// (abi::kCodecMsgpack or abi::kCodecJson).
#ifndef TESSERA_CODEC_H_
#define TESSERA_CODEC_H_

#include <string>
#include <string_view>

#include "tessera/abi.h"
#include "tessera/decode.h"
#include "tessera/encode.h"
#include "tessera/json.h"
#include "tessera/msgpack.h"
#include "tessera/result.h"

namespace tessera {

using Codec = abi::Codec;

inline bool is_known_codec(int codec) {
  return codec == abi::kCodecMsgpack || codec == abi::kCodecJson;
}

// Appends `value` encoded in `codec` to `out`. Requires is_known_codec(codec).
template <class T>
void encode(Codec codec, const T& value, std::string& out) {
  if (codec == abi::kCodecJson) {
    json::Writer w(out);
    encode_value(w, value);
  } else {
    msgpack::Writer w(out);
    encode_value(w, value);
  }
}

namespace detail {

template <class R, class T>
Status decode_all(R& r, T& out) {
  if (decode_value(r, out) && r.finish()) return Status();
  return Error(r.error());
}

}  // namespace detail

// Decodes exactly one value from all of `bytes` into `out` (members missing
// from the input keep the values `out` has). On failure `out` may be partly
// written and the Status names the field and the problem.
template <class T>
Status decode(Codec codec, std::string_view bytes, T& out) {
  if (codec == abi::kCodecJson) {
    json::Reader r(bytes);
    return detail::decode_all(r, out);
  }
  if (codec == abi::kCodecMsgpack) {
    msgpack::Reader r(bytes);
    return detail::decode_all(r, out);
  }
  return Error("unknown codec " + std::to_string(static_cast<int>(codec)));
}

}  // namespace tessera

#endif  // TESSERA_CODEC_H_
