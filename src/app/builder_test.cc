#include "app/builder.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
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

// The builder runs the wasm32 toolchain that configuring requires; a test
// that needs it fails without it.
constexpr const char* kNoToolchain =
    "no wasm32 toolchain (clang++ --target=wasm32-wasi, wasm-ld, the wasi "
    "sysroot under /usr): run scripts/install-deps";

bool HaveWasmToolchain() {
  static const bool have =
      std::system(
          "clang++ --target=wasm32-wasi --sysroot=/usr -fsyntax-only "
          "-x c++ /dev/null >/dev/null 2>&1 && "
          "wasm-ld --version >/dev/null 2>&1 && "
          "test -f /usr/lib/wasm32-wasi/crt1-reactor.o && "
          "test -f /usr/lib/wasm32-wasi/libc++.a && "
          "test -f \"$(clang --target=wasm32-wasi --sysroot=/usr "
          "-print-libgcc-file-name)\"") == 0;
  return have;
}

// Builds in a temporary app directory against a small fake SDK, so these
// tests depend only on the toolchain, not on the real SDK's contents.
class BuilderTest : public testing::ScratchBuildTest {
 protected:
  void SetUp() override {
    MakeRoot("tessera_builder_test");
    WriteFile(sdk_ / "include/tessera/abi.h", "#pragma once\n");
    WriteFile(sdk_ / "include/tessera/fake_sdk.h",
              "#pragma once\nint SdkBonus();\n");
    WriteFile(sdk_ / "src/stubs.cc", "int SdkBonus() { return 7; }\n");
    WriteFile(sdk_ / "src/cstub.c", "int CBonus(void) { return 1; }\n");
    WriteFile(app_ / "guest/add.cc",
              "#include \"add.h\"\n"
              "#include \"tessera/fake_sdk.h\"\n"
              "extern \"C\" int CBonus();\n"
              "extern \"C\" __attribute__((export_name(\"add\"))) int\n"
              "add(int a, int b) { return a + b + kBase + SdkBonus() + "
              "CBonus(); }\n");
    WriteFile(app_ / "guest/add.h", "#pragma once\nconstexpr int kBase = 1;\n");
    options_.sdk_dir = sdk_;
  }

  Manifest Load(const std::string& json) {
    WriteFile(app_ / "tessera.json", json);
    Result<Manifest> m = LoadManifest(app_);
    EXPECT_TRUE(m.ok()) << m.status().ToString();
    return m.ok() ? *m : Manifest{};
  }

  Manifest OneKind() {
    return Load(R"({"name":"t","shards":[{"name":"adder","source":"guest"}]})");
  }

  Status Build(const Manifest& m) {
    progress_.str("");
    return BuildKinds(m, options_, progress_);
  }

  // Makes `file` look edited just after the module was built. (Only just:
  // the rebuild, which takes far longer than 10 ms, must come out newer.)
  void TouchAfterOutput(const fs::path& file, const Manifest& m) {
    fs::last_write_time(file, fs::last_write_time(m.kinds[0].output) +
                                  std::chrono::milliseconds(10));
  }

  std::ostringstream progress_;
};

TEST_F(BuilderTest, BuildsThenSkipsWhenUpToDate) {
  ASSERT_TRUE(HaveWasmToolchain()) << kNoToolchain;
  Manifest m = OneKind();
  Status s = Build(m);
  ASSERT_TRUE(s.ok()) << s.ToString() << "\n" << progress_.str();

  const std::string out = progress_.str();
  EXPECT_NE(out.find("[1/4] adder: compiling add.cc\n"), std::string::npos)
      << out;
  EXPECT_NE(out.find("adder: compiling sdk/stubs.cc\n"), std::string::npos)
      << out;
  EXPECT_NE(out.find("adder: compiling sdk/cstub.c\n"), std::string::npos)
      << out;
  EXPECT_NE(out.find("[4/4] adder: linking adder.wasm\n"), std::string::npos)
      << out;
  EXPECT_NE(out.find("adder: built .tessera/build/adder.wasm ("),
            std::string::npos)
      << out;
  const std::string wasm = ReadFile(app_ / ".tessera/build/adder.wasm");
  ASSERT_GE(wasm.size(), 8u);
  EXPECT_EQ(wasm.substr(0, 4), std::string("\0asm", 4));
  EXPECT_NE(wasm.find("add"), std::string::npos);  // the export name
  EXPECT_FALSE(fs::exists(app_ / ".tessera/build/adder.wasm.tmp"));

  // Nothing changed: skipped.
  ASSERT_TRUE(Build(m).ok());
  EXPECT_EQ(progress_.str(), "adder: up to date (.tessera/build/adder.wasm)\n");

  // A header the source includes changed: rebuilt.
  TouchAfterOutput(app_ / "guest/add.h", m);
  ASSERT_TRUE(Build(m).ok());
  EXPECT_NE(progress_.str().find("adder: built"), std::string::npos)
      << progress_.str();
  ASSERT_TRUE(Build(m).ok());
  EXPECT_NE(progress_.str().find("up to date"), std::string::npos);

  // An SDK header changed: rebuilt.
  TouchAfterOutput(sdk_ / "include/tessera/fake_sdk.h", m);
  ASSERT_TRUE(Build(m).ok());
  EXPECT_NE(progress_.str().find("adder: built"), std::string::npos);

  // A new source file (older than the output) still rebuilds.
  WriteFile(app_ / "guest/more.cpp", "int More() { return 2; }\n");
  fs::last_write_time(
      app_ / "guest/more.cpp",
      fs::last_write_time(m.kinds[0].output) - std::chrono::seconds(10));
  ASSERT_TRUE(Build(m).ok());
  EXPECT_NE(progress_.str().find("adder: compiling more.cpp"),
            std::string::npos)
      << progress_.str();

  // --force rebuilds regardless.
  options_.force = true;
  ASSERT_TRUE(Build(m).ok());
  EXPECT_NE(progress_.str().find("adder: built"), std::string::npos);
}

TEST_F(BuilderTest, CompileErrorIsPassedThroughVerbatim) {
  ASSERT_TRUE(HaveWasmToolchain()) << kNoToolchain;
  WriteFile(app_ / "guest/bad.cc", "int F() {\n  return oops;\n}\n");
  Manifest m = OneKind();
  Status s = Build(m);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  const std::string bad = (app_ / "guest/bad.cc").string();
  EXPECT_EQ(s.message().rfind("adder: compiling " + bad +
                                  " failed (clang++ exited with status 1):\n",
                              0),
            0u)
      << s.message();
  EXPECT_NE(s.message().find(bad + ":2:10: error: use of undeclared "
                                   "identifier 'oops'"),
            std::string::npos)
      << s.message();
  EXPECT_FALSE(fs::exists(m.kinds[0].output));

  // Fixed: the next build succeeds.
  WriteFile(app_ / "guest/bad.cc", "int F() { return 1; }\n");
  s = Build(m);
  EXPECT_TRUE(s.ok()) << s.ToString();
}

TEST_F(BuilderTest, LinkErrorNamesTheKind) {
  ASSERT_TRUE(HaveWasmToolchain()) << kNoToolchain;
  WriteFile(app_ / "guest/undefined.cc",
            "int Missing();\nint G() { return Missing(); }\n"
            "extern \"C\" __attribute__((export_name(\"g\"))) int g() "
            "{ return G(); }\n");
  Status s = Build(OneKind());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("adder: linking "), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("Missing"), std::string::npos) << s.message();
}

TEST_F(BuilderTest, OneFailingKindDoesNotStopAnother) {
  ASSERT_TRUE(HaveWasmToolchain()) << kNoToolchain;
  WriteFile(app_ / "broken/x.cc", "this is not C++\n");
  Manifest m = Load(R"({"name":"t","shards":[
      {"name":"adder","source":"guest"},{"name":"broken","source":"broken"}]})");
  Status s = Build(m);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message().rfind("broken: compiling ", 0), 0u) << s.message();
  EXPECT_TRUE(fs::exists(m.kinds[0].output));
  EXPECT_FALSE(fs::exists(m.kinds[1].output));
}

TEST_F(BuilderTest, MissingSourcesAndPrebuiltModules) {
  Manifest m = Load(R"({"name":"t","shards":[{"name":"k","source":"nope"}]})");
  Status s = Build(m);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "k: source directory " + (app_ / "nope").string() +
                             " does not exist");

  fs::create_directories(app_ / "empty");
  m = Load(R"({"name":"t","shards":[{"name":"k","source":"empty"}]})");
  s = Build(m);
  EXPECT_EQ(s.message(),
            "k: no .cc or .cpp files in " + (app_ / "empty").string());

  m = Load(R"({"name":"t","shards":[{"name":"k","wasm":"k.wasm"}]})");
  s = Build(m);
  EXPECT_EQ(s.message(), "k: prebuilt module " + (app_ / "k.wasm").string() +
                             " does not exist");
  WriteFile(app_ / "k.wasm", std::string("\0asm\1\0\0\0", 8));
  s = Build(m);
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(progress_.str(), "k: prebuilt (k.wasm)\n");

  options_.only_kinds = {"k"};
  s = Build(m);
  EXPECT_EQ(s.message(),
            "k: is a prebuilt module (\"wasm\"), not built from source");
  options_.only_kinds = {"zz"};
  s = Build(m);
  EXPECT_EQ(s.message(), "no shard kind \"zz\" in the manifest");
}

TEST_F(BuilderTest, MissingToolIsReported) {
  options_.cxx = options_.cc = "tessera-no-such-compiler";
  Status s = Build(OneKind());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kIo);
  EXPECT_NE(s.message().find("cannot run `tessera-no-such-compiler`"),
            std::string::npos)
      << s.message();
}

// The real SDK's runtime sources keep libc's WASI imports out of a guest
// that uses libc++ and stdio.
TEST_F(BuilderTest, QuickBuildCompilesOnlyTheShardAgainstAPrecompiledSdk) {
  ASSERT_TRUE(HaveWasmToolchain()) << kNoToolchain;
  Manifest m = OneKind();
  options_.quick = true;
  Status s = Build(m);
  ASSERT_TRUE(s.ok()) << s.ToString() << "\n" << progress_.str();
  const fs::path quick = QuickOutput(m, m.kinds[0]);
  EXPECT_EQ(quick, app_ / ".tessera/build/quick/adder.wasm");
  EXPECT_EQ(ReadFile(quick).substr(0, 4), std::string("\0asm", 4));
  EXPECT_FALSE(fs::exists(m.kinds[0].output));  // the kind's own: untouched
  EXPECT_TRUE(fs::exists(app_ / ".tessera/build/obj-quick/pch/sdk.pch"));
  const std::string commands =
      ReadFile(app_ / ".tessera/build/obj-quick/adder/commands.txt");
  EXPECT_NE(commands.find(" -O0 "), std::string::npos) << commands;
  EXPECT_NE(commands.find("-include-pch"), std::string::npos) << commands;

  ASSERT_TRUE(Build(m).ok());
  EXPECT_EQ(progress_.str(),
            "adder: up to date (.tessera/build/quick/adder.wasm)\n");

  // An edit: the shard's file alone is compiled, the SDK's objects kept.
  fs::last_write_time(app_ / "guest/add.cc", fs::last_write_time(quick) +
                                                 std::chrono::milliseconds(10));
  ASSERT_TRUE(Build(m).ok());
  const std::string out = progress_.str();
  EXPECT_NE(out.find("[1/2] adder: compiling add.cc\n"), std::string::npos)
      << out;
  EXPECT_EQ(out.find("compiling sdk/"), std::string::npos) << out;
  EXPECT_NE(out.find("adder: built .tessera/build/quick/adder.wasm"),
            std::string::npos)
      << out;

  // The optimised build is separate and still complete.
  options_.quick = false;
  ASSERT_TRUE(Build(m).ok());
  EXPECT_NE(progress_.str().find("adder: compiling sdk/stubs.cc"),
            std::string::npos);
  EXPECT_TRUE(fs::exists(m.kinds[0].output));
}

TEST_F(BuilderTest, RealSdkLeavesOnlyTheTesseraImport) {
  ASSERT_TRUE(HaveWasmToolchain()) << kNoToolchain;
  Result<fs::path> sdk = FindSdkDir();
  ASSERT_TRUE(sdk.ok()) << sdk.status().ToString();
  options_.sdk_dir = *sdk;
  WriteFile(app_ / "real/real.cc",
            "#include <cstdio>\n#include <string>\n#include <vector>\n"
            "#include \"tessera/abi.h\"\n"
            "extern \"C\" __attribute__((export_name(\"f\"))) int f(int n) {\n"
            "  std::vector<std::string> v(n, \"x\");\n"
            "  std::printf(\"%d\\n\", n);\n"
            "  return static_cast<int>(v.size()) + tessera::abi::kVersion;\n"
            "}\n");
  Manifest m =
      Load(R"({"name":"t","shards":[{"name":"real","source":"real"}]})");
  Status s = Build(m);
  ASSERT_TRUE(s.ok()) << s.ToString() << "\n" << progress_.str();
  const std::string wasm = ReadFile(m.kinds[0].output);
  EXPECT_NE(wasm.find("tessera_v1"), std::string::npos);
  EXPECT_EQ(wasm.find("wasi_snapshot_preview1"), std::string::npos);
  EXPECT_NE(wasm.find("_initialize"), std::string::npos);  // reactor model
}

TEST_F(BuilderTest, FindSdkDirHonoursEnvironment) {
  ::setenv("TESSERA_SDK_DIR", sdk_.c_str(), 1);
  Result<fs::path> found = FindSdkDir();
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  EXPECT_EQ(*found, sdk_);

  ::setenv("TESSERA_SDK_DIR", (root_ / "nope").c_str(), 1);
  found = FindSdkDir();
  EXPECT_EQ(found.status().code(), StatusCode::kNotFound);
  EXPECT_NE(found.status().message().find("TESSERA_SDK_DIR="),
            std::string::npos);
  ::unsetenv("TESSERA_SDK_DIR");

  // A source-tree layout: the SDK's headers in <tree>/sdk/cpp/include, the
  // ABI header in <tree>/include (shared with the host).
  const fs::path tree = root_ / "tree";
  WriteFile(tree / "include/tessera/abi.h", "#pragma once\n");
  WriteFile(tree / "sdk/cpp/include/tessera/shard_sdk.h", "#pragma once\n");
  ::setenv("TESSERA_SDK_DIR", (tree / "sdk/cpp").c_str(), 1);
  found = FindSdkDir();
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  EXPECT_EQ(*found, tree / "sdk/cpp");
  ::unsetenv("TESSERA_SDK_DIR");

  // Without the variable, the source tree's SDK is found, with the ABI
  // header in the repository's include/.
  found = FindSdkDir();
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  EXPECT_TRUE(fs::exists(*found / "include/tessera/shard_sdk.h"));
  EXPECT_TRUE(fs::exists(*found / "../../include/tessera/abi.h"));
}

}  // namespace
}  // namespace tessera::app
