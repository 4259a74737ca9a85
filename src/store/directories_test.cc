#include "store/directories.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "store/test_util.h"

namespace tessera::store {
namespace {

namespace fs = std::filesystem;
using testing::ScratchDir;

TEST(DirectoriesTest, CreatesMissingAncestors) {
  ScratchDir dir;
  std::string file = dir.File("a/b/c/store.db");
  ASSERT_TRUE(CreateParentDirectories(file).ok());
  EXPECT_TRUE(fs::is_directory(dir.File("a/b/c")));
  EXPECT_FALSE(fs::exists(file));
  // Existing directories and bare file names are fine.
  EXPECT_TRUE(CreateParentDirectories(file).ok());
  EXPECT_TRUE(CreateParentDirectories("store.db").ok());
}

TEST(DirectoriesTest, ParentThatIsAFileIsAnIoError) {
  ScratchDir dir;
  std::ofstream(dir.File("plain")) << "x";
  std::string file = dir.File("plain/sub/store.db");
  Status st = CreateParentDirectories(file);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kIo);
  EXPECT_NE(st.message().find(file), std::string::npos) << st.message();
}

}  // namespace
}  // namespace tessera::store
