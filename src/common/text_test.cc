#include "common/text.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <string_view>

namespace tessera {
namespace {

using namespace std::string_literals;

constexpr std::string_view kFFFD = "\xEF\xBF\xBD";

// An independent, slow reference: true if `s` is well-formed UTF-8
// (Unicode 15, table 3-7).
bool IsValidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto b = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
    const uint8_t c = b(i);
    size_t n = 0;
    uint8_t lo = 0x80;
    uint8_t hi = 0xBF;
    if (c <= 0x7F) {
      ++i;
      continue;
    } else if (c >= 0xC2 && c <= 0xDF) {
      n = 2;
    } else if (c == 0xE0) {
      n = 3;
      lo = 0xA0;
    } else if (c >= 0xE1 && c <= 0xEC) {
      n = 3;
    } else if (c == 0xED) {
      n = 3;
      hi = 0x9F;
    } else if (c >= 0xEE && c <= 0xEF) {
      n = 3;
    } else if (c == 0xF0) {
      n = 4;
      lo = 0x90;
    } else if (c >= 0xF1 && c <= 0xF3) {
      n = 4;
    } else if (c == 0xF4) {
      n = 4;
      hi = 0x8F;
    } else {
      return false;
    }
    if (i + n > s.size()) return false;
    if (b(i + 1) < lo || b(i + 1) > hi) return false;
    for (size_t k = 2; k < n; ++k) {
      if (b(i + k) < 0x80 || b(i + k) > 0xBF) return false;
    }
    i += n;
  }
  return true;
}

std::string Repeat(std::string_view piece, size_t times) {
  std::string out;
  for (size_t i = 0; i < times; ++i) out.append(piece);
  return out;
}

// --- Utf8Prefix ---------------------------------------------------------

TEST(Utf8Prefix, ShortTextIsReturnedWhole) {
  EXPECT_EQ(Utf8Prefix("", 0), "");
  EXPECT_EQ(Utf8Prefix("abc", 3), "abc");
  EXPECT_EQ(Utf8Prefix("abc", 100), "abc");
  // Invalid bytes are not its concern when nothing is cut.
  EXPECT_EQ(Utf8Prefix("a\xFF\x80", 3), "a\xFF\x80");
}

TEST(Utf8Prefix, AsciiIsCutAtTheLimit) {
  EXPECT_EQ(Utf8Prefix("abcdef", 4), "abcd");
  EXPECT_EQ(Utf8Prefix("abcdef", 0), "");
}

TEST(Utf8Prefix, NeverEndsInsideASequence) {
  const std::string euro = "\xE2\x82\xAC";  // U+20AC, 3 bytes
  const std::string text = "a" + euro + "b";
  EXPECT_EQ(Utf8Prefix(text, 1), "a");
  EXPECT_EQ(Utf8Prefix(text, 2), "a");
  EXPECT_EQ(Utf8Prefix(text, 3), "a");
  EXPECT_EQ(Utf8Prefix(text, 4), "a" + euro);
  const std::string smile = "\xF0\x9F\x98\x80";  // U+1F600, 4 bytes
  EXPECT_EQ(Utf8Prefix(smile + smile, 7), smile);
  EXPECT_EQ(Utf8Prefix(smile + smile, 8), smile + smile);
  EXPECT_EQ(Utf8Prefix("\xC3\xA9\xC3\xA9", 3), "\xC3\xA9");
}

TEST(Utf8Prefix, StrayContinuationBytesBeforeTheCutAreLeftAlone) {
  // Only the cut point is looked at: a run of stray continuation bytes is
  // not one sequence, so the cut stays at the limit (it used to back up
  // over the whole run and return nothing).
  const std::string stray = Repeat("\x80", 100);
  EXPECT_EQ(Utf8Prefix(stray, 50).size(), 50u);
  EXPECT_EQ(Utf8Prefix("ab" + stray, 50).size(), 50u);
  // A lead byte followed by more continuation bytes than it takes: the
  // sequence ends before the cut.
  EXPECT_EQ(Utf8Prefix("\xC3\xA9\x80\x80\x80\x80", 4), "\xC3\xA9\x80\x80");
}

TEST(Utf8Prefix, RandomBytesKeepTheContract) {
  std::mt19937 rng(7);
  for (int round = 0; round < 2000; ++round) {
    std::string text(rng() % 24, '\0');
    for (char& c : text) c = static_cast<char>(rng() % 256);
    const size_t max = rng() % 26;
    const std::string_view cut = Utf8Prefix(text, max);
    ASSERT_LE(cut.size(), max);
    ASSERT_EQ(cut, std::string_view(text).substr(0, cut.size()));
    if (text.size() <= max) {
      ASSERT_EQ(cut.size(), text.size());
    } else {
      // At most one (incomplete) character of at most 3 bytes is dropped.
      ASSERT_GE(cut.size() + 3, max) << "max " << max;
    }
    // Valid text stays valid when cut.
    if (IsValidUtf8(text)) {
      ASSERT_TRUE(IsValidUtf8(cut));
    }
  }
}

// --- SafeUtf8 -----------------------------------------------------------

TEST(SafeUtf8, ValidTextWithinTheLimitIsUnchanged) {
  EXPECT_EQ(SafeUtf8("", 10), "");
  EXPECT_EQ(SafeUtf8("hello", 5), "hello");
  const std::string mixed = "h\xC3\xA9llo \xE2\x82\xAC \xF0\x9F\x98\x80";
  EXPECT_EQ(SafeUtf8(mixed, 100), mixed);
  // Control characters are valid UTF-8: SafeUtf8 keeps them.
  EXPECT_EQ(SafeUtf8("a\nb\x1B[2J", 100), "a\nb\x1B[2J");
  EXPECT_EQ(SafeUtf8("\0x"s, 10), "\0x"s);
}

TEST(SafeUtf8, EachInvalidByteBecomesAReplacementCharacter) {
  const std::string r(kFFFD);
  EXPECT_EQ(SafeUtf8("a\xFF"
                     "b",
                     100),
            "a" + r + "b");
  EXPECT_EQ(SafeUtf8("\x80", 100), r);                  // stray
  EXPECT_EQ(SafeUtf8("\xC0\xAF", 100), r + r);          // overlong '/'
  EXPECT_EQ(SafeUtf8("\xE0\x80\xAF", 100), r + r + r);  // overlong
  EXPECT_EQ(SafeUtf8("\xF0\x80\x80\xAF", 100), r + r + r + r);
  EXPECT_EQ(SafeUtf8("\xED\xA0\x80", 100), r + r + r);          // U+D800
  EXPECT_EQ(SafeUtf8("\xED\xBF\xBF", 100), r + r + r);          // U+DFFF
  EXPECT_EQ(SafeUtf8("\xF4\x90\x80\x80", 100), r + r + r + r);  // >U+10FFFF
  EXPECT_EQ(SafeUtf8("\xF5\x80\x80\x80", 100), r + r + r + r);
  EXPECT_EQ(SafeUtf8("\xF8\x88\x80\x80\x80", 100), Repeat(r, 5));
  EXPECT_EQ(SafeUtf8("x\xE2\x82", 100), "x" + r + r);  // cut short
  EXPECT_EQ(SafeUtf8("\xE2\x82x", 100), r + r + "x");
  // The boundaries that are valid stay.
  EXPECT_EQ(SafeUtf8("\xC2\x80", 100), "\xC2\x80");                  // U+0080
  EXPECT_EQ(SafeUtf8("\xED\x9F\xBF", 100), "\xED\x9F\xBF");          // U+D7FF
  EXPECT_EQ(SafeUtf8("\xEE\x80\x80", 100), "\xEE\x80\x80");          // U+E000
  EXPECT_EQ(SafeUtf8("\xF4\x8F\xBF\xBF", 100), "\xF4\x8F\xBF\xBF");  // max
}

TEST(SafeUtf8, LongTextIsCutOnACharacterBoundaryWithAMarker) {
  EXPECT_EQ(SafeUtf8("abcdefgh", 7), "abcd...");
  EXPECT_EQ(SafeUtf8("abcdefgh", 8), "abcdefgh");
  EXPECT_EQ(SafeUtf8("abcd", 3), "...");
  // The marker counts within the limit, and never splits a character.
  const std::string euro = "\xE2\x82\xAC";
  EXPECT_EQ(SafeUtf8(euro + euro + euro, 8), euro + "...");
  EXPECT_EQ(SafeUtf8(euro + euro + euro, 6), euro + "...");
  EXPECT_EQ(SafeUtf8(euro + euro + euro, 5), "...");
  // Replacements count at their encoded size.
  EXPECT_EQ(SafeUtf8("\xFF\xFF\xFF", 8), std::string(kFFFD) + "...");
}

TEST(SafeUtf8, BelowThreeBytesThereIsNoMarker) {
  EXPECT_EQ(SafeUtf8("abcd", 0), "");
  EXPECT_EQ(SafeUtf8("abcd", 1), "a");
  EXPECT_EQ(SafeUtf8("abcd", 2), "ab");
  EXPECT_EQ(SafeUtf8("\xC3\xA9\xC3\xA9", 2), "\xC3\xA9");
  EXPECT_EQ(SafeUtf8("\xE2\x82\xAC", 2), "");
}

TEST(SafeUtf8, HugeInputCostsOnlyTheLimit) {
  const std::string big(8 << 20, 'x');
  const std::string out = SafeUtf8(big, 4096);
  EXPECT_EQ(out.size(), 4096u);
  EXPECT_TRUE(out.ends_with("..."));
}

TEST(SafeUtf8, RandomBytesComeOutValidAndWithinTheLimit) {
  std::mt19937 rng(11);
  for (int round = 0; round < 3000; ++round) {
    std::string text(rng() % 40, '\0');
    // Bias towards bytes that make sequences.
    for (char& c : text) {
      const uint32_t r = rng();
      c = static_cast<char>(r % 3 == 0 ? 0x80 + (r >> 8) % 64 : r % 256);
    }
    const size_t max = rng() % 48;
    const std::string out = SafeUtf8(text, max);
    ASSERT_LE(out.size(), max);
    ASSERT_TRUE(IsValidUtf8(out));
    if (IsValidUtf8(text) && text.size() <= max) {
      ASSERT_EQ(out, text);
    }
  }
}

// --- EscapeForLog -------------------------------------------------------

TEST(EscapeForLog, PlainTextIsUnchanged) {
  EXPECT_EQ(EscapeForLog("player 7 joined", 100), "player 7 joined");
  EXPECT_EQ(EscapeForLog("h\xC3\xA9 \xE2\x82\xAC", 100),
            "h\xC3\xA9 \xE2\x82\xAC");
}

TEST(EscapeForLog, OneGuestLineStaysOneLine) {
  // A guest forging another shard's panic on a line of its own.
  const std::string out =
      EscapeForLog("ok\n[shard other] panic: boom\r\n", 100);
  EXPECT_EQ(out, "ok\\n[shard other] panic: boom\\r\\n");
  EXPECT_EQ(out.find('\n'), std::string::npos);
  EXPECT_EQ(out.find('\r'), std::string::npos);
}

TEST(EscapeForLog, ControlCharactersAreEscaped) {
  EXPECT_EQ(EscapeForLog("\x1B[2J\x1B]0;pwned\x07", 100),
            "\\x1B[2J\\x1B]0;pwned\\x07");
  EXPECT_EQ(EscapeForLog("a\tb", 100), "a\\tb");
  EXPECT_EQ(EscapeForLog("\0"s, 100), "\\x00");
  EXPECT_EQ(EscapeForLog("\x7F", 100), "\\x7F");
  EXPECT_EQ(EscapeForLog("\x1F", 100), "\\x1F");
  EXPECT_EQ(EscapeForLog(" ~", 100), " ~");
  // C1 controls (U+0080..U+009F; U+009B is a one-character CSI).
  EXPECT_EQ(EscapeForLog("\xC2\x9B"
                         "31m",
                         100),
            "\\u{9B}31m");
  EXPECT_EQ(EscapeForLog("\xC2\x80\xC2\x9F", 100), "\\u{80}\\u{9F}");
  // U+00A0 and above are not controls.
  EXPECT_EQ(EscapeForLog("\xC2\xA0\xC2\xA9", 100), "\xC2\xA0\xC2\xA9");
}

TEST(EscapeForLog, BackslashesAreEscapedSoEscapesCannotBeForged) {
  EXPECT_EQ(EscapeForLog("a\\nb", 100), "a\\\\nb");
  EXPECT_NE(EscapeForLog("a\\nb", 100), EscapeForLog("a\nb", 100));
}

TEST(EscapeForLog, InvalidUtf8IsReplacedBeforeEscaping) {
  // A raw C1 byte (0x9B, the 8-bit CSI) is not valid UTF-8: it becomes
  // U+FFFD rather than reaching the terminal.
  EXPECT_EQ(EscapeForLog("\x9B"
                         "31m",
                         100),
            std::string(kFFFD) + "31m");
  // An overlong NUL (C0 80) must not come out as a raw NUL or a newline.
  EXPECT_EQ(EscapeForLog("\xC0\x8A", 100),
            std::string(kFFFD) + std::string(kFFFD));
}

TEST(EscapeForLog, TheLimitAppliesBeforeEscaping) {
  const std::string out = EscapeForLog(Repeat("\n", 1000), 10);
  EXPECT_EQ(out, Repeat("\\n", 7) + "...");
  // The escapes grow the text by at most 5x the limit.
  const std::string worst = EscapeForLog(Repeat("\x01", 1000), 100);
  EXPECT_LE(worst.size(), 500u);
}

TEST(EscapeForLog, RandomBytesNeverLeaveAControlCharacter) {
  std::mt19937 rng(13);
  for (int round = 0; round < 3000; ++round) {
    std::string text(rng() % 40, '\0');
    for (char& c : text) c = static_cast<char>(rng() % 256);
    const size_t max = rng() % 48;
    const std::string out = EscapeForLog(text, max);
    ASSERT_TRUE(IsValidUtf8(out));
    ASSERT_LE(out.size(), 5 * max);
    for (size_t i = 0; i < out.size(); ++i) {
      const uint8_t b = static_cast<uint8_t>(out[i]);
      ASSERT_FALSE(b < 0x20 || b == 0x7F) << "at " << i;
      if (b == 0xC2 && i + 1 < out.size()) {
        ASSERT_GE(static_cast<uint8_t>(out[i + 1]), 0xA0) << "C1 at " << i;
      }
    }
  }
}

}  // namespace
}  // namespace tessera
