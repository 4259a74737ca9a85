#include "net/base64url.h"

#include <gtest/gtest.h>

#include <random>

namespace tessera::net {
namespace {

TEST(Base64Url, Rfc4648VectorsWithoutPadding) {
  const std::pair<const char*, const char*> vectors[] = {
      {"", ""},
      {"f", "Zg"},
      {"fo", "Zm8"},
      {"foo", "Zm9v"},
      {"foob", "Zm9vYg"},
      {"fooba", "Zm9vYmE"},
      {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, encoded] : vectors) {
    EXPECT_EQ(Base64UrlEncode(plain), encoded);
    EXPECT_EQ(Base64UrlDecode(encoded), plain);
  }
  // The URL-safe alphabet: '-' and '_' instead of '+' and '/'.
  EXPECT_EQ(Base64UrlEncode("\xfb\xff"), "-_8");
  EXPECT_EQ(Base64UrlDecode("-_8"), "\xfb\xff");
}

TEST(Base64Url, DecodingIsStrict) {
  for (const char* bad : {"Zg==", "Zg=", "Z", "Zm9vY", "+/8", "Zm9v\n", " Zm9v",
                          "Zm 9v", "Zm9v.", "Zh", "Zm9"}) {
    EXPECT_EQ(Base64UrlDecode(bad), std::nullopt) << bad;
  }
  EXPECT_EQ(Base64UrlDecode(std::string_view("Zm\0v", 4)), std::nullopt);
}

TEST(Base64, TheStandardAlphabetWithOrWithoutPadding) {
  const std::pair<const char*, const char*> vectors[] = {
      {"", ""},
      {"f", "Zg=="},
      {"fo", "Zm8="},
      {"foo", "Zm9v"},
      {"foob", "Zm9vYg=="},
      {"fooba", "Zm9vYmE="},
      {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, encoded] : vectors) {
    EXPECT_EQ(Base64Decode(encoded), plain) << encoded;
    EXPECT_EQ(Base64Encode(plain), encoded) << plain;
    std::string unpadded = encoded;
    while (!unpadded.empty() && unpadded.back() == '=') unpadded.pop_back();
    EXPECT_EQ(Base64Decode(unpadded), plain) << unpadded;
  }
  EXPECT_EQ(Base64Decode("+/8="), "\xfb\xff");
  EXPECT_EQ(Base64Encode("\xfb\xff"), "+/8=");
  for (const char* bad : {"-_8=", "Zg=", "Zg===", "Z===", "Zm9vYg=", "Zm8==",
                          "Zh==", "Zm9v====", "=", "Zm=9", " Zm9v"}) {
    EXPECT_EQ(Base64Decode(bad), std::nullopt) << bad;
  }
}

TEST(Base64Url, RoundTripsEveryLength) {
  std::mt19937 rng(5);
  for (size_t n = 0; n < 200; ++n) {
    std::string bytes(n, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    const std::string text = Base64UrlEncode(bytes);
    EXPECT_EQ(text.size(), (n * 4 + 2) / 3);
    EXPECT_EQ(Base64UrlDecode(text), bytes);
  }
}

}  // namespace
}  // namespace tessera::net
