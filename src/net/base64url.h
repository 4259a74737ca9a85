// base64url without padding (RFC 4648 section 5), as tickets use it.
// Decoding is strict: only the 64 URL-safe characters, no padding or
// whitespace, no impossible length, and the unused low bits of the last
// character must be zero, so every byte string has exactly one encoding.
#ifndef TESSERA_NET_BASE64URL_H_
#define TESSERA_NET_BASE64URL_H_

#include <optional>
#include <string>
#include <string_view>

namespace tessera::net {

std::string Base64UrlEncode(std::string_view bytes);
// nullopt if `text` is not a canonical unpadded base64url string.
std::optional<std::string> Base64UrlDecode(std::string_view text);

}  // namespace tessera::net

#endif  // TESSERA_NET_BASE64URL_H_
