#include "net/base64url.h"

#include <array>
#include <cstdint>

namespace tessera::net {
namespace {

constexpr char kAlphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
constexpr char kStandardAlphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

using DecodeTable = std::array<int8_t, 256>;

// Character -> 6-bit value, or -1 outside the alphabet.
constexpr DecodeTable MakeDecodeTable(const char* alphabet) {
  DecodeTable table{};
  for (auto& v : table) v = -1;
  for (int i = 0; i < 64; ++i) {
    table[static_cast<uint8_t>(alphabet[i])] = static_cast<int8_t>(i);
  }
  return table;
}
constexpr DecodeTable kDecode = MakeDecodeTable(kAlphabet);
constexpr DecodeTable kStandardDecode = MakeDecodeTable(kStandardAlphabet);

std::optional<std::string> Decode(std::string_view text,
                                  const DecodeTable& table) {
  if (text.size() % 4 == 1) return std::nullopt;  // 6 bits cannot end a byte
  std::string out;
  out.reserve(text.size() * 3 / 4);
  uint32_t acc = 0;
  int bits = 0;
  for (char c : text) {
    const int8_t v = table[static_cast<uint8_t>(c)];
    if (v < 0) return std::nullopt;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
      acc &= (1u << bits) - 1;
    }
  }
  if (acc != 0) return std::nullopt;  // non-zero unused bits: not canonical
  return out;
}

std::string Encode(std::string_view bytes, const char* alphabet) {
  const char* kAlphabet = alphabet;
  std::string out;
  out.reserve((bytes.size() * 4 + 2) / 3);
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const uint32_t v = static_cast<uint8_t>(bytes[i]) << 16 |
                       static_cast<uint8_t>(bytes[i + 1]) << 8 |
                       static_cast<uint8_t>(bytes[i + 2]);
    out.push_back(kAlphabet[v >> 18]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(kAlphabet[(v >> 6) & 63]);
    out.push_back(kAlphabet[v & 63]);
  }
  const size_t rest = bytes.size() - i;
  if (rest == 1) {
    const uint32_t v = static_cast<uint8_t>(bytes[i]) << 16;
    out.push_back(kAlphabet[v >> 18]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
  } else if (rest == 2) {
    const uint32_t v = static_cast<uint8_t>(bytes[i]) << 16 |
                       static_cast<uint8_t>(bytes[i + 1]) << 8;
    out.push_back(kAlphabet[v >> 18]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(kAlphabet[(v >> 6) & 63]);
  }
  return out;
}

}  // namespace

std::string Base64UrlEncode(std::string_view bytes) {
  return Encode(bytes, kAlphabet);
}

std::string Base64Encode(std::string_view bytes) {
  std::string out = Encode(bytes, kStandardAlphabet);
  while (out.size() % 4 != 0) out.push_back('=');
  return out;
}

std::optional<std::string> Base64UrlDecode(std::string_view text) {
  return Decode(text, kDecode);
}

std::optional<std::string> Base64Decode(std::string_view text) {
  // Padding: only to complete the last group of 4.
  size_t pad = 0;
  while (pad < 2 && pad < text.size() && text[text.size() - 1 - pad] == '=') {
    ++pad;
  }
  if (pad > 0) {
    if (text.size() % 4 != 0) return std::nullopt;
    text.remove_suffix(pad);
    // "xx==" ends with 1 byte, "xxx=" with 2: the rest must agree.
    if (text.size() % 4 != 4 - pad) return std::nullopt;
  }
  return Decode(text, kStandardDecode);
}

}  // namespace tessera::net
