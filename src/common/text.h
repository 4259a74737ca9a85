// Text that came from somewhere we do not trust (a guest module, a peer),
// made safe to keep, log and send on. One implementation of each rule, used
// where such text enters the host.
#ifndef TESSERA_COMMON_TEXT_H_
#define TESSERA_COMMON_TEXT_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace tessera {

// The longest prefix of `text` of at most `max_bytes` bytes that does not
// end inside a UTF-8 sequence (only the cut point is looked at; invalid
// bytes elsewhere are left alone).
std::string_view Utf8Prefix(std::string_view text, size_t max_bytes);

// `text` as valid UTF-8 of at most `max_bytes` bytes: each invalid byte
// (overlong forms, surrogates, code points past U+10FFFF, stray
// continuation bytes, a sequence cut short) becomes U+FFFD, and text longer
// than the limit is cut on a character boundary and ends with "..." (the
// marker counts within the limit). `max_bytes` below 3 allows no marker:
// the text is just cut.
std::string SafeUtf8(std::string_view text, size_t max_bytes);

// SafeUtf8, then every control character (C0, DEL and C1: U+0000-U+001F,
// U+007F-U+009F) written as an escape (`\n`, `\t`, `\r`, `\\`, `\xNN` or
// `\u{NN}` for C1), so one guest line stays one line of the server log and
// cannot move the terminal's cursor or forge another line's prefix. The
// result may exceed `max_bytes` by the escapes (at most 5x).
std::string EscapeForLog(std::string_view text, size_t max_bytes);

}  // namespace tessera

#endif  // TESSERA_COMMON_TEXT_H_
