// Helpers for the store tests: a scratch directory and self-checking
// payloads.
#ifndef TESSERA_STORE_TEST_UTIL_H_
#define TESSERA_STORE_TEST_UTIL_H_

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <cstdint>
#include <filesystem>
#include <string>

namespace tessera::store::testing {

// Waits for child `pid` (retrying interrupted waits) and returns its wait
// status: what the crash tests read after their SIGKILL.
inline int WaitFor(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  return status;
}

// A fresh directory under the test temp dir, removed with its contents.
class ScratchDir {
 public:
  ScratchDir() {
    std::string tmpl = ::testing::TempDir() + "tessera_store_XXXXXX";
    char* made = mkdtemp(tmpl.data());
    EXPECT_NE(made, nullptr) << "mkdtemp " << tmpl;
    path_ = tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// `size` bytes starting with `seq` (8 bytes, little-endian) followed by a
// pseudo-random stream seeded by it, so a torn or mixed-up value is caught
// by CheckPayload.
inline std::string Payload(uint64_t seq, size_t size) {
  std::string out(size < 8 ? 8 : size, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(seq >> (8 * i));
  uint64_t x = seq * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 8; i < out.size(); ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    out[i] = static_cast<char>(x);
  }
  return out;
}

// The sequence number of a Payload, or -1 if `bytes` is not one.
inline int64_t CheckPayload(const std::string& bytes) {
  if (bytes.size() < 8) return -1;
  uint64_t seq = 0;
  for (int i = 0; i < 8; ++i) {
    seq |= uint64_t{static_cast<unsigned char>(bytes[i])} << (8 * i);
  }
  return Payload(seq, bytes.size()) == bytes ? static_cast<int64_t>(seq) : -1;
}

}  // namespace tessera::store::testing

#endif  // TESSERA_STORE_TEST_UTIL_H_
