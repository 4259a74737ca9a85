// base64url without padding (RFC 4648 section 5), as tickets use it.
// Decoding is strict: only the 64 URL-safe characters, no padding or
// whitespace, no impossible length, and the unused low bits of the last
// character must be zero, so every byte string has exactly one encoding.
// Also the standard alphabet (section 4, "+/" and "=" padding) for the
// admin API's binary fields.
#ifndef TESSERA_NET_BASE64URL_H_
#define TESSERA_NET_BASE64URL_H_

#include <optional>
#include <string>
#include <string_view>

namespace tessera::net {

std::string Base64UrlEncode(std::string_view bytes);
// nullopt if `text` is not a canonical unpadded base64url string.
std::optional<std::string> Base64UrlDecode(std::string_view text);
// Standard base64 with "=" padding (the compute API's resultBase64).
std::string Base64Encode(std::string_view bytes);
// Standard base64: "+" and "/", with the "=" padding (a multiple of 4
// characters) or without it; otherwise as strict as Base64UrlDecode.
std::optional<std::string> Base64Decode(std::string_view text);

}  // namespace tessera::net

#endif  // TESSERA_NET_BASE64URL_H_
