#include "common/text.h"

#include <cstdint>
#include <cstdio>

namespace tessera {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD
constexpr std::string_view kCutMarker = "...";

bool IsContinuation(char c) { return (static_cast<uint8_t>(c) & 0xC0) == 0x80; }

// The sequence length a lead byte announces (2 to 4), or 0 for a byte that
// does not start a multi-byte sequence.
size_t LeadLength(char c) {
  const uint8_t b = static_cast<uint8_t>(c);
  if ((b & 0xE0) == 0xC0) return 2;
  if ((b & 0xF0) == 0xE0) return 3;
  if ((b & 0xF8) == 0xF0) return 4;
  return 0;
}

// The length of the valid UTF-8 sequence starting at text[i], or 0 if the
// bytes there are not one.
size_t ValidSequence(std::string_view text, size_t i) {
  const auto at = [&](size_t k) { return static_cast<uint8_t>(text[k]); };
  const uint8_t b = at(i);
  if (b < 0x80) return 1;
  size_t n = 0;
  uint32_t cp = 0;
  if ((b & 0xE0) == 0xC0) {
    n = 2;
    cp = b & 0x1F;
  } else if ((b & 0xF0) == 0xE0) {
    n = 3;
    cp = b & 0x0F;
  } else if ((b & 0xF8) == 0xF0) {
    n = 4;
    cp = b & 0x07;
  } else {
    return 0;
  }
  if (i + n > text.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((at(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (at(i + k) & 0x3F);
  }
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    return 0;
  }
  return n;
}

}  // namespace

std::string_view Utf8Prefix(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  // Back up over at most three continuation bytes to the lead byte of the
  // sequence the cut falls in; drop that sequence if it does not fit whole.
  // Anything else (stray continuation bytes, a cut on a boundary) keeps the
  // cut at the limit.
  size_t start = max_bytes;
  for (int k = 0; k < 3 && start > 0 && IsContinuation(text[start]); ++k) {
    --start;
  }
  if (start == max_bytes) return text.substr(0, max_bytes);
  const size_t length = LeadLength(text[start]);
  if (length > max_bytes - start) return text.substr(0, start);
  return text.substr(0, max_bytes);
}

std::string SafeUtf8(std::string_view text, size_t max_bytes) {
  std::string out;
  out.reserve(text.size() < max_bytes ? text.size() : max_bytes);
  const size_t marker = max_bytes >= kCutMarker.size() ? kCutMarker.size() : 0;
  size_t i = 0;
  // Valid characters go in while they fit; once one would not, the text is
  // cut back to leave room for the marker.
  while (i < text.size()) {
    const size_t n = ValidSequence(text, i);
    const std::string_view piece = n == 0 ? kReplacement : text.substr(i, n);
    if (out.size() + piece.size() > max_bytes) break;
    out.append(piece);
    i += n == 0 ? 1 : n;
  }
  if (i == text.size()) return out;
  // Cut: remove whole characters from the end until the marker fits.
  while (!out.empty() && out.size() + marker > max_bytes) {
    size_t k = out.size() - 1;
    while (k > 0 && (static_cast<uint8_t>(out[k]) & 0xC0) == 0x80) --k;
    out.resize(k);
  }
  out.append(kCutMarker.substr(0, marker));
  return out;
}

std::string EscapeForLog(std::string_view text, size_t max_bytes) {
  const std::string safe = SafeUtf8(text, max_bytes);
  std::string out;
  out.reserve(safe.size());
  for (size_t i = 0; i < safe.size(); ++i) {
    const uint8_t b = static_cast<uint8_t>(safe[i]);
    char buf[16];
    if (b == '\n') {
      out += "\\n";
    } else if (b == '\t') {
      out += "\\t";
    } else if (b == '\r') {
      out += "\\r";
    } else if (b == '\\') {
      out += "\\\\";
    } else if (b < 0x20 || b == 0x7F) {
      std::snprintf(buf, sizeof(buf), "\\x%02X", b);
      out += buf;
    } else if (b == 0xC2 && i + 1 < safe.size() &&
               static_cast<uint8_t>(safe[i + 1]) < 0xA0) {
      // U+0080..U+009F (C1 controls) are C2 80..C2 9F in UTF-8.
      std::snprintf(buf, sizeof(buf), "\\u{%02X}",
                    static_cast<uint8_t>(safe[i + 1]));
      out += buf;
      ++i;
    } else {
      out += static_cast<char>(b);
    }
  }
  return out;
}

}  // namespace tessera
