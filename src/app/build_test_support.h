// Test-only helpers shared by the builder tests (builder_test.cc and
// crate_builder_test.cc): files written and read whole, and a fixture
// holding a scratch root with an app/ and an sdk/ directory below it.
#ifndef TESSERA_APP_BUILD_TEST_SUPPORT_H_
#define TESSERA_APP_BUILD_TEST_SUPPORT_H_

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "app/builder.h"

namespace tessera::app::testing {

// Writes `text` to `path`, creating the directories above it.
inline void WriteFile(const std::filesystem::path& path,
                      const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

// The whole file ("" if it cannot be read).
inline std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A fresh <tmp>/<name>_<pid> (root_) with app_ and sdk_ paths below it,
// removed after each test.
class ScratchBuildTest : public ::testing::Test {
 protected:
  void MakeRoot(const std::string& name) {
    root_ = std::filesystem::temp_directory_path() /
            (name + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(root_);
    app_ = root_ / "app";
    sdk_ = root_ / "sdk";
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  std::filesystem::path root_, app_, sdk_;
  BuildOptions options_;
};

}  // namespace tessera::app::testing

#endif  // TESSERA_APP_BUILD_TEST_SUPPORT_H_
