// The real compiler: C++ modules through the app builder's recipe (the
// wasm32 toolchain that configuring requires), Rust through cargo.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "app/build_test_support.h"
#include "compute/source_compiler.h"
#include "compute/test_modules.h"
#include "tessera/compute_abi.h"

namespace tessera::compute {
namespace {

namespace fs = std::filesystem;

VersionRecord Version(Language language, SourceFiles files) {
  VersionRecord v;
  v.module_id = 1;
  v.version_no = 1;
  v.language = language;
  v.sdk_version = compute_abi::kSdkVersion;
  v.abi_version = compute_abi::kAbiVersion;
  v.source_hash = SourceHash(language, v.sdk_version, files);
  v.files = std::move(files);
  return v;
}

class ToolchainCompilerTest : public app::testing::ScratchBuildTest {
 protected:
  void SetUp() override {
    MakeRoot("tessera_compute_compiler_test");
    ToolchainOptions options;
    options.work_dir = root_ / "work";
    compiler_ = MakeToolchainCompiler(options);
  }
  std::unique_ptr<SourceCompiler> compiler_;
};

TEST_F(ToolchainCompilerTest, CompilesACppModule) {
  VersionRecord v = Version(Language::kCpp, testing::CppModule());
  CompileResult r = compiler_->Compile(v);
  ASSERT_TRUE(r.ok) << r.log;
  EXPECT_EQ(r.wasm, root_ / "work" / "artifacts" / (v.source_hash + ".wasm"));
  EXPECT_EQ(r.size_bytes, static_cast<int64_t>(fs::file_size(r.wasm)));
  EXPECT_EQ(app::testing::ReadFile(r.wasm).substr(0, 4),
            std::string("\0asm", 4));
  EXPECT_NE(r.log.find("built"), std::string::npos) << r.log;
  // The sources were written where the header says.
  EXPECT_EQ(app::testing::ReadFile(root_ / "work" / "src" / v.source_hash /
                                   "module.cc"),
            v.files.at("module.cc"));
  // No temporary file is left beside the module.
  EXPECT_FALSE(fs::exists(r.wasm.string() + ".tmp"));
}

TEST_F(ToolchainCompilerTest, KeepsWarningsOfASuccessfulCompile) {
  SourceFiles files = testing::CppModule();
  files["extra.cc"] =
      "int Extra() {\n  int unused_value = 3;\n  return 1;\n}\n";
  CompileResult r = compiler_->Compile(Version(Language::kCpp, files));
  ASSERT_TRUE(r.ok) << r.log;
  EXPECT_NE(r.log.find("extra.cc:2:7: warning: unused variable "
                       "'unused_value'"),
            std::string::npos)
      << r.log;
}

TEST_F(ToolchainCompilerTest, AFailedCompileCarriesTheCompilerErrorVerbatim) {
  SourceFiles files = testing::CppModule();
  files["broken.cc"] =
      "int Broken() {\n  return 1;\n}\nint More() { return undefined_thing; "
      "}\n";
  VersionRecord v = Version(Language::kCpp, files);
  CompileResult r = compiler_->Compile(v);
  ASSERT_FALSE(r.ok);
  EXPECT_NE(r.log.find("broken.cc:4:21: error: use of undeclared identifier "
                       "'undefined_thing'"),
            std::string::npos)
      << r.log;
  // The server's directories are not in what the deployer sees.
  EXPECT_EQ(r.log.find(root_.string()), std::string::npos) << r.log;
  EXPECT_FALSE(
      fs::exists(root_ / "work" / "artifacts" / (v.source_hash + ".wasm")));
}

TEST_F(ToolchainCompilerTest, RefusesSourcesThatBreakTheRules) {
  VersionRecord v =
      Version(Language::kCpp, {{"main.cc", "#include <unistd.h>\n"}});
  CompileResult r = compiler_->Compile(v);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.log.find("main.cc:1"), std::string::npos) << r.log;
  EXPECT_FALSE(fs::exists(root_ / "work" / "src" / v.source_hash));
}

}  // namespace
}  // namespace tessera::compute
