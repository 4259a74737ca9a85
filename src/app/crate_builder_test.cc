// BuildKinds on crate kinds (app/crate_builder.h), with Debian's Rust
// toolchain, which configuring requires (sdk/rust/TesseraRustGuest.cmake),
// against a small fake SDK crate so only the toolchain matters.
#include "app/crate_builder.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "app/build_test_support.h"

namespace tessera::app {
namespace {

namespace fs = std::filesystem;
using testing::ReadFile;
using testing::WriteFile;

class CrateBuilderTest : public testing::ScratchBuildTest {
 protected:
  void SetUp() override {
    MakeRoot("tessera_crate_builder_test");
    WriteFile(sdk_ / "Cargo.toml",
              "[package]\nname = \"tessera-shard-guest\"\nversion = "
              "\"0.1.0\"\nedition = \"2021\"\n");
    WriteFile(sdk_ / "src/lib.rs", "pub fn bonus() -> i32 { 7 }\n");
    WriteFile(app_ / "tessera.json",
              R"({"name":"a","shards":[{"name":"adder","crate":"adder"}]})");
    Crate("tessera-shard-guest = \"0.1\"\n",
          "#[no_mangle]\npub extern \"C\" fn add(a: i32, b: i32) -> i32 "
          "{ a + b + tessera_shard_guest::bonus() }\n");
    options_.rust_sdk_dir = sdk_;
  }

  void Crate(const std::string& deps, const std::string& lib) {
    WriteFile(app_ / "adder/Cargo.toml",
              "[package]\nname = \"adder\"\nversion = \"0.1.0\"\nedition = "
              "\"2021\"\n[lib]\ncrate-type = [\"cdylib\"]\n[dependencies]\n" +
                  deps);
    WriteFile(app_ / "adder/src/lib.rs", lib);
  }

  Status Build(std::string* progress) {
    Result<Manifest> m = LoadManifest(app_);
    if (!m.ok()) return m.status();
    std::ostringstream out;
    Status s = BuildKinds(*m, options_, out);
    *progress = out.str();
    return s;
  }
};

TEST_F(CrateBuilderTest, BuildsTheCdylibThenIsUpToDate) {
  std::string progress;
  Status s = Build(&progress);
  ASSERT_TRUE(s.ok()) << s.ToString() << "\n" << progress;
  const fs::path wasm = app_ / ".tessera/build/adder.wasm";
  ASSERT_TRUE(fs::is_regular_file(wasm)) << progress;
  std::ifstream in(wasm, std::ios::binary);
  char magic[4] = {};
  in.read(magic, 4);
  EXPECT_EQ(std::string(magic, 4), std::string("\0asm", 4));
  EXPECT_NE(progress.find("adder: cargo build --release"), std::string::npos)
      << progress;
  EXPECT_NE(progress.find("Compiling adder v0.1.0"), std::string::npos)
      << progress;
  EXPECT_NE(progress.find("adder: built .tessera/build/adder.wasm ("),
            std::string::npos)
      << progress;
  // The release profile and Debian's registry come from our cargo config.
  const std::string config =
      ReadFile(app_ / ".tessera/build/cargo-home/config.toml");
  EXPECT_NE(config.find("panic = \"abort\""), std::string::npos);
  EXPECT_NE(config.find("directory = \"/usr/share/cargo/registry\""),
            std::string::npos);

  ASSERT_TRUE(Build(&progress).ok());
  EXPECT_EQ(progress, "adder: up to date (.tessera/build/adder.wasm)\n");

  // Touching a source rebuilds.
  WriteFile(app_ / "adder/src/lib.rs",
            "#[no_mangle]\npub extern \"C\" fn add(a: i32, b: i32) -> i32 "
            "{ a - b }\n");
  fs::last_write_time(app_ / "adder/src/lib.rs",
                      fs::last_write_time(wasm) + std::chrono::seconds(2));
  ASSERT_TRUE(Build(&progress).ok()) << progress;
  EXPECT_NE(progress.find("adder: built"), std::string::npos) << progress;
}

TEST_F(CrateBuilderTest, ADependencyDebianLacksIsNamed) {
  Crate("tessera-shard-guest = \"0.1\"\nsurely-not-packaged-xyz = \"1\"\n", "");
  std::string progress;
  Status s = Build(&progress);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("adder: cargo build failed"), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("the crate depends on `surely-not-packaged-xyz`, "
                             "which Debian does not package"),
            std::string::npos)
      << s.message();
}

TEST_F(CrateBuilderTest, RandWithDefaultFeaturesGetsAHint) {
  Crate("rand = \"0.8\"\n", "pub fn f() -> u32 { 1 }\n");
  std::string progress;
  Status s = Build(&progress);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("cargo build failed (/usr/bin/cargo exited with "
                             "status 101): a dependency pulls in `getrandom`"),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("default-features = false"), std::string::npos);
  // cargo's own error follows, verbatim.
  EXPECT_NE(s.message().find("you may need to enable the \"js\" feature"),
            std::string::npos)
      << s.message();
}

TEST_F(CrateBuilderTest, CompilerErrorsPassThroughVerbatim) {
  Crate("", "pub fn f() -> i32 { undefined_name }\n");
  std::string progress;
  Status s = Build(&progress);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("error[E0425]: cannot find value "
                             "`undefined_name` in this scope"),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("src/lib.rs:1:"), std::string::npos)
      << s.message();
  EXPECT_FALSE(fs::exists(app_ / ".tessera/build/adder.wasm"));
}

TEST_F(CrateBuilderTest, MissingCargoTomlIsNotFound) {
  fs::remove(app_ / "adder/Cargo.toml");
  std::string progress;
  Status s = Build(&progress);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_NE(s.message().find("adder/Cargo.toml does not exist"),
            std::string::npos)
      << s.message();
}

// A compute module's crate, built with BuildCrate: the compute SDK is
// patched in, the shard SDK (not named) is not.
TEST_F(CrateBuilderTest, BuildCratePatchesTheComputeSdk) {
  const fs::path compute_sdk = root_ / "compute-sdk";
  WriteFile(compute_sdk / "Cargo.toml",
            "[package]\nname = \"tessera-compute-sdk\"\nversion = "
            "\"0.1.0\"\nedition = \"2021\"\n");
  WriteFile(compute_sdk / "src/lib.rs", "pub fn seven() -> i32 { 7 }\n");
  options_.rust_compute_sdk_dir = compute_sdk;
  const fs::path crate = root_ / "module";
  WriteFile(crate / "Cargo.toml",
            "[package]\nname = \"my-module\"\nversion = \"0.1.0\"\n"
            "edition = \"2021\"\n[lib]\ncrate-type = [\"cdylib\"]\n"
            "[dependencies]\ntessera-compute-sdk = \"0.1.0\"\n");
  WriteFile(crate / "src/lib.rs",
            "#[no_mangle]\npub extern \"C\" fn f() -> i32 { "
            "tessera_compute_sdk::seven() }\n");
  CrateBuildSpec spec;
  spec.name = "my-module";
  spec.crate_dir = crate;
  spec.output = root_ / "out/module.wasm";
  spec.build_dir = root_ / "work";
  std::ostringstream progress;
  Status s = BuildCrate(spec, options_, progress);
  ASSERT_TRUE(s.ok()) << s.ToString() << "\n" << progress.str();
  EXPECT_EQ(ReadFile(spec.output).substr(0, 4), std::string("\0asm", 4));
  EXPECT_NE(progress.str().find("my-module: built " + spec.output.string()),
            std::string::npos)
      << progress.str();
  EXPECT_EQ(progress.str().find("was not used in the crate graph"),
            std::string::npos)
      << progress.str();
  const std::string config = ReadFile(root_ / "work/cargo-home/config.toml");
  EXPECT_NE(config.find("tessera-compute-sdk = { path = \"" +
                        fs::absolute(compute_sdk).string() + "\" }"),
            std::string::npos)
      << config;
  EXPECT_EQ(config.find("tessera-shard-guest"), std::string::npos) << config;

  // Up to date until the SDK crate changes.
  progress.str("");
  ASSERT_TRUE(BuildCrate(spec, options_, progress).ok());
  EXPECT_EQ(progress.str(),
            "my-module: up to date (" + spec.output.string() + ")\n");
  fs::last_write_time(
      compute_sdk / "src/lib.rs",
      fs::last_write_time(spec.output) + std::chrono::seconds(2));
  progress.str("");
  ASSERT_TRUE(BuildCrate(spec, options_, progress).ok()) << progress.str();
  EXPECT_NE(progress.str().find("my-module: built"), std::string::npos)
      << progress.str();
}

TEST_F(CrateBuilderTest, AMissingComputeSdkIsNotFound) {
  options_.rust_compute_sdk_dir = root_ / "nowhere";
  CrateBuildSpec spec;
  spec.name = "m";
  spec.crate_dir = root_ / "module";
  WriteFile(spec.crate_dir / "Cargo.toml",
            "[package]\nname = \"m\"\nversion = \"0.1.0\"\n"
            "[dependencies]\ntessera-compute-sdk = \"0.1.0\"\n");
  spec.output = root_ / "m.wasm";
  spec.build_dir = root_ / "work";
  std::ostringstream progress;
  Status s = BuildCrate(spec, options_, progress);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_NE(s.message().find("nowhere is not a tessera Rust SDK crate"),
            std::string::npos)
      << s.message();
}

TEST_F(CrateBuilderTest, FindsTheComputeSdkByEnvironmentOrBesideTheShardSdk) {
  const fs::path rust = root_ / "rust";
  for (const char* crate : {"tessera-shard-guest", "tessera-compute-sdk"}) {
    WriteFile(rust / crate / "Cargo.toml", "[package]\n");
    WriteFile(rust / crate / "src/lib.rs", "\n");
  }
  ASSERT_EQ(::setenv("TESSERA_RUST_COMPUTE_SDK_DIR",
                     (rust / "tessera-compute-sdk").c_str(), 1),
            0);
  Result<fs::path> found = FindRustComputeSdkDir();
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  EXPECT_EQ(*found, rust / "tessera-compute-sdk");
  ASSERT_EQ(::setenv("TESSERA_RUST_COMPUTE_SDK_DIR", root_.c_str(), 1), 0);
  found = FindRustComputeSdkDir();
  EXPECT_EQ(found.status().code(), StatusCode::kNotFound);
  EXPECT_NE(
      found.status().message().find("is not the tessera-compute-sdk crate"),
      std::string::npos)
      << found.status().message();
  ::unsetenv("TESSERA_RUST_COMPUTE_SDK_DIR");
  // Beside $TESSERA_RUST_SDK_DIR (a trailing slash too).
  const std::string shard = (rust / "tessera-shard-guest").string() + "/";
  ASSERT_EQ(::setenv("TESSERA_RUST_SDK_DIR", shard.c_str(), 1), 0);
  found = FindRustComputeSdkDir();
  ::unsetenv("TESSERA_RUST_SDK_DIR");
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  EXPECT_EQ(*found, rust / "tessera-compute-sdk");
  // Neither set: the source tree's.
  found = FindRustComputeSdkDir();
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  EXPECT_EQ(found->filename(), "tessera-compute-sdk");
  EXPECT_TRUE(fs::is_regular_file(*found / "src/lib.rs"));
}

}  // namespace
}  // namespace tessera::app
