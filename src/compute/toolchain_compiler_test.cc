// The real compiler: C++ modules through the app builder's recipe (the
// wasm32 toolchain that configuring requires), Rust through cargo.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "app/build_test_support.h"
#include "compute/source_compiler.h"
#include "compute/templates.h"
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

TEST_F(ToolchainCompilerTest, AModuleWithoutTheComputeAbiFails) {
  // Compiles and links, but registers no entry points.
  VersionRecord v = Version(
      Language::kCpp, {{"main.cc",
                        "extern \"C\" __attribute__((export_name(\"f\"))) int "
                        "f() { return 1; }\n"}});
  CompileResult r = compiler_->Compile(v);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.log.find("is not a tessera_compute_v1 module"), std::string::npos)
      << r.log;
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

TEST_F(ToolchainCompilerTest, CompilesARustModule) {
  VersionRecord v = Version(Language::kRust, testing::RustModule());
  ASSERT_TRUE(
      CheckSources(v.language, v.files, v.sdk_version, v.abi_version).ok());
  CompileResult r = compiler_->Compile(v);
  ASSERT_TRUE(r.ok) << r.log;
  EXPECT_EQ(r.wasm, root_ / "work" / "artifacts" / (v.source_hash + ".wasm"));
  EXPECT_EQ(r.size_bytes, static_cast<int64_t>(fs::file_size(r.wasm)));
  EXPECT_EQ(app::testing::ReadFile(r.wasm).substr(0, 4),
            std::string("\0asm", 4));
  EXPECT_NE(r.log.find("Compiling my-module v0.1.0"), std::string::npos)
      << r.log;
  // cargo's Cargo.lock is not left among the sources.
  EXPECT_FALSE(
      fs::exists(root_ / "work" / "src" / v.source_hash / "Cargo.lock"));
}

TEST_F(ToolchainCompilerTest, ARustFailureCarriesRustcsErrorVerbatim) {
  SourceFiles files = testing::RustModule();
  files["src/lib.rs"] += "\nfn broken() -> u32 {\n    undefined_thing\n}\n";
  CompileResult r = compiler_->Compile(Version(Language::kRust, files));
  ASSERT_FALSE(r.ok);
  EXPECT_NE(r.log.find("error[E0425]: cannot find value `undefined_thing` in "
                       "this scope"),
            std::string::npos)
      << r.log;
  EXPECT_NE(r.log.find("src/lib.rs:20:5"), std::string::npos) << r.log;
  EXPECT_EQ(r.log.find(root_.string()), std::string::npos) << r.log;
}

// Every bundled template (computeDeployTemplate) and example module passes
// the deploy rules; the C++ ones compile.
TEST_F(ToolchainCompilerTest, BundledTemplatesAndExamplesPassTheRules) {
  Result<fs::path> dir = FindTemplatesDir();
  ASSERT_TRUE(dir.ok()) << dir.status().ToString();
  Result<std::vector<TemplateInfo>> templates = ListTemplates(*dir);
  ASSERT_TRUE(templates.ok()) << templates.status().ToString();
  ASSERT_GE(templates->size(), 3u);
  std::vector<std::pair<std::string, SourceFiles>> modules;
  for (const TemplateInfo& info : *templates) {
    Result<SourceFiles> files = LoadTemplate(*dir, info.name);
    ASSERT_TRUE(files.ok()) << files.status().ToString();
    EXPECT_EQ(DetectLanguage(*files), info.language) << info.name;
    modules.emplace_back("template " + info.name, *files);
  }
  const fs::path examples =
      fs::path(TESSERA_SOURCE_DIR) / "examples" / "compute" / "compute";
  for (const char* name : {"world-sim", "shop"}) {
    SourceFiles files;
    const fs::path root = examples / name;
    for (auto it = fs::recursive_directory_iterator(root);
         it != fs::recursive_directory_iterator(); ++it) {
      const std::string rel = fs::relative(it->path(), root).string();
      if (rel == "target" || rel[0] == '.' || rel == "Cargo.lock") {
        if (it->is_directory()) it.disable_recursion_pending();
        continue;
      }
      if (it->is_regular_file() &&
          (rel.ends_with(".rs") || rel.ends_with(".cc") ||
           rel.ends_with(".h") || rel == "Cargo.toml")) {
        files[rel] = app::testing::ReadFile(it->path());
      }
    }
    modules.emplace_back(std::string("example ") + name, files);
  }
  for (const auto& [label, files] : modules) {
    const Language language = DetectLanguage(files);
    Status rules = CheckSources(language, files, compute_abi::kSdkVersion,
                                compute_abi::kAbiVersion);
    EXPECT_TRUE(rules.ok()) << label << ": " << rules.ToString();
    // The Rust ones are built by compute_rust_test (app::BuildCrate, the
    // same recipe); compiling them again here would double the cost.
    if (!rules.ok() || language == Language::kRust) continue;
    CompileResult r = compiler_->Compile(Version(language, files));
    EXPECT_TRUE(r.ok) << label << ":\n" << r.log;
    EXPECT_GT(r.size_bytes, 0) << label;
  }
}

}  // namespace
}  // namespace tessera::compute
