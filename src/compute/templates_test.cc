// The bundled-template loader (compute/templates.h) on scratch directories,
// and the templates this repository ships (sdk/compute-templates).
#include "compute/templates.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "compute/module_instance.h"
#include "tessera/compute_abi.h"
#include "wasm/loader.h"

namespace tessera::compute {
namespace {

namespace fs = std::filesystem;

void WriteFile(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

class TemplatesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tessera_templates_test_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    WriteFile(dir_ / "zeta/template.json",
              R"({"description":"Z module","language":"cpp"})");
    WriteFile(dir_ / "zeta/zeta.cc", "int z;\n");
    WriteFile(dir_ / "alpha/template.json",
              R"({"description":"A module","language":"rust","extra":1})");
    WriteFile(dir_ / "alpha/Cargo.toml", "[package]\n");
    WriteFile(dir_ / "alpha/src/lib.rs", "// lib\n");
    WriteFile(dir_ / "alpha/src/sim/weather.rs", "// weather\n");
    // Build leftovers and dot-files are not template files.
    WriteFile(dir_ / "alpha/target/release/x.wasm", "junk");
    WriteFile(dir_ / "alpha/Cargo.lock", "junk");
    WriteFile(dir_ / "alpha/.swp", "junk");
    // A directory without template.json is not a template.
    WriteFile(dir_ / "notes/readme.txt", "hi");
    WriteFile(dir_ / "README.md", "templates");
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
};

TEST_F(TemplatesTest, ListsTemplatesByName) {
  Result<std::vector<TemplateInfo>> list = ListTemplates(dir_);
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].name, "alpha");
  EXPECT_EQ((*list)[0].description, "A module");
  EXPECT_EQ((*list)[0].language, Language::kRust);
  EXPECT_EQ((*list)[1].name, "zeta");
  EXPECT_EQ((*list)[1].language, Language::kCpp);
}

TEST_F(TemplatesTest, LoadsTheFilesWithoutTemplateJsonOrLeftovers) {
  TemplateInfo info;
  Result<SourceFiles> files = LoadTemplate(dir_, "alpha", &info);
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  EXPECT_EQ(info.name, "alpha");
  EXPECT_EQ(info.description, "A module");
  SourceFiles want = {{"Cargo.toml", "[package]\n"},
                      {"src/lib.rs", "// lib\n"},
                      {"src/sim/weather.rs", "// weather\n"}};
  EXPECT_EQ(*files, want);
}

TEST_F(TemplatesTest, AnUnknownNameIsNotFoundNamingTheTemplates) {
  for (const char* name : {"gamma", "../alpha", "notes", ""}) {
    Result<SourceFiles> files = LoadTemplate(dir_, name);
    ASSERT_FALSE(files.ok()) << name;
    EXPECT_EQ(files.status().code(), StatusCode::kNotFound);
    EXPECT_NE(files.status().message().find("(templates: alpha, zeta)"),
              std::string::npos)
        << files.status().message();
  }
}

TEST_F(TemplatesTest, ABrokenTemplateJsonIsInvalid) {
  const struct {
    const char* json;
    const char* says;
  } cases[] = {
      {"{", "not a JSON object"},
      {"[]", "not a JSON object"},
      {R"({"language":"rust"})", "\"description\" must be a string"},
      {R"({"description":"d","language":"go"})",
       "\"language\" must be \"rust\" or \"cpp\""},
      {R"({"description":"d"})", "\"language\" must be"},
  };
  for (const auto& c : cases) {
    WriteFile(dir_ / "zeta/template.json", c.json);
    Result<std::vector<TemplateInfo>> list = ListTemplates(dir_);
    ASSERT_FALSE(list.ok()) << c.json;
    EXPECT_EQ(list.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(list.status().message().find("zeta/template.json: "),
              std::string::npos)
        << list.status().message();
    EXPECT_NE(list.status().message().find(c.says), std::string::npos)
        << list.status().message();
    EXPECT_FALSE(LoadTemplate(dir_, "alpha").ok());
  }
}

TEST_F(TemplatesTest, AMissingDirectoryIsAnIoError) {
  Result<std::vector<TemplateInfo>> list = ListTemplates(dir_ / "missing");
  ASSERT_FALSE(list.ok());
  EXPECT_EQ(list.status().code(), StatusCode::kIo);
}

TEST_F(TemplatesTest, TheEnvironmentNamesTheDirectory) {
  ASSERT_EQ(::setenv("TESSERA_COMPUTE_TEMPLATES_DIR", dir_.c_str(), 1), 0);
  Result<fs::path> found = FindTemplatesDir();
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  EXPECT_EQ(*found, dir_);
  ASSERT_EQ(
      ::setenv("TESSERA_COMPUTE_TEMPLATES_DIR", (dir_ / "missing").c_str(), 1),
      0);
  found = FindTemplatesDir();
  EXPECT_EQ(found.status().code(), StatusCode::kNotFound);
  EXPECT_NE(found.status().message().find("is not a directory"),
            std::string::npos);
  ::unsetenv("TESSERA_COMPUTE_TEMPLATES_DIR");
}

// The templates this repository ships, found in the source tree.
TEST(BundledTemplatesTest, CounterCropWeatherAndEcho) {
  ::unsetenv("TESSERA_COMPUTE_TEMPLATES_DIR");
  Result<fs::path> dir = FindTemplatesDir();
  ASSERT_TRUE(dir.ok()) << dir.status().ToString();
  Result<std::vector<TemplateInfo>> list = ListTemplates(*dir);
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  std::vector<std::string> names;
  for (const TemplateInfo& t : *list) {
    names.push_back(t.name + ":" + LanguageName(t.language));
    EXPECT_FALSE(t.description.empty()) << t.name;
  }
  EXPECT_EQ(names,
            (std::vector<std::string>{"counter:rust", "crop-weather:rust",
                                      "echo:cpp", "keyed-grant:cpp"}));
  for (const char* rust : {"counter", "crop-weather"}) {
    Result<SourceFiles> files = LoadTemplate(*dir, rust);
    ASSERT_TRUE(files.ok()) << files.status().ToString();
    ASSERT_TRUE(files->count("Cargo.toml")) << rust;
    EXPECT_TRUE(files->count("src/lib.rs")) << rust;
    EXPECT_NE(files->at("Cargo.toml").find("tessera-compute-sdk"),
              std::string::npos)
        << rust;
    for (const auto& [path, text] : *files) {
      EXPECT_TRUE(
          path == "Cargo.toml" ||
          (path.rfind("src/", 0) == 0 && path.substr(path.size() - 3) == ".rs"))
          << rust << ": " << path;
    }
  }
  Result<SourceFiles> echo = LoadTemplate(*dir, "echo");
  ASSERT_TRUE(echo.ok()) << echo.status().ToString();
  for (const auto& [path, text] : *echo) {
    EXPECT_TRUE(path.size() > 3 && (path.substr(path.size() - 3) == ".cc" ||
                                    path.substr(path.size() - 2) == ".h"))
        << path;
    EXPECT_NE(text.find("tessera/compute.h"), std::string::npos) << path;
  }
}

// Every bundled template, and the world-sim example crate, is a deploy the
// source rules accept (what computeDeployTemplate and the manifest's boot
// sync upload).
TEST(BundledTemplatesTest, PassTheSourceRules) {
  ::unsetenv("TESSERA_COMPUTE_TEMPLATES_DIR");
  Result<fs::path> dir = FindTemplatesDir();
  ASSERT_TRUE(dir.ok()) << dir.status().ToString();
  Result<std::vector<TemplateInfo>> list = ListTemplates(*dir);
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  for (const TemplateInfo& t : *list) {
    Result<SourceFiles> files = LoadTemplate(*dir, t.name);
    ASSERT_TRUE(files.ok()) << files.status().ToString();
    EXPECT_EQ(DetectLanguage(*files), t.language) << t.name;
    EXPECT_TRUE(IsValidModuleName(t.name)) << t.name;
    Status s = CheckSources(t.language, *files, compute_abi::kSdkVersion,
                            compute_abi::kAbiVersion);
    EXPECT_TRUE(s.ok()) << t.name << ": " << s.ToString();
  }
  // The example crate, loaded like a template from its parent directory.
  const fs::path examples =
      fs::path(TESSERA_SOURCE_DIR) / "examples/compute/compute";
  SourceFiles world;
  for (const char* f : {"Cargo.toml", "src/lib.rs", "src/world.rs"}) {
    std::ifstream in(examples / "world-sim" / f, std::ios::binary);
    ASSERT_TRUE(in) << f;
    world[f] = std::string((std::istreambuf_iterator<char>(in)),
                           std::istreambuf_iterator<char>());
  }
  Status s = CheckSources(Language::kRust, world, compute_abi::kSdkVersion,
                          compute_abi::kAbiVersion);
  EXPECT_TRUE(s.ok()) << s.ToString();
  // The SDK's features, and rand without its default features (what the
  // SDK README and the crate builder's hint recommend), are deployable.
  SourceFiles featured = world;
  featured["Cargo.toml"] =
      "[package]\nname = \"m\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"
      "[lib]\ncrate-type = [\"cdylib\"]\n[dependencies]\n"
      "tessera-compute-sdk = { version = \"0.1.0\", features = [\"json\", "
      "\"rand\"] }\n"
      "rand = { version = \"0.8\", default-features = false, features = "
      "[\"std_rng\", \"small_rng\"] }\n";
  s = CheckSources(Language::kRust, featured, compute_abi::kSdkVersion,
                   compute_abi::kAbiVersion);
  EXPECT_TRUE(s.ok()) << s.ToString();
}

// Host calls for a module that only logs.
class LogOnlyCalls : public HostCalls {
 public:
  int64_t NowMs() override { return 0; }
  void FillRandom(std::span<uint8_t> out) override {
    for (uint8_t& b : out) b = 0;
  }
  HostCallResult GetState(std::string*) override {
    return HostCallResult::Error(compute_abi::kErrNoState, "none");
  }
  HostCallResult SetState(std::string_view) override {
    return HostCallResult::Ok();
  }
  HostCallResult EmitEvent(std::string_view, std::string_view) override {
    return HostCallResult::Ok();
  }
  HostCallResult EmitChannel(std::string_view, std::string_view) override {
    return HostCallResult::Ok();
  }
  HostCallResult EmitSpatial(std::string_view, float, float, float,
                             std::string_view) override {
    return HostCallResult::Ok();
  }
  void Log(int level, std::string_view text) override {
    logs.push_back(std::to_string(level) + " " + std::string(text));
  }
  std::vector<std::string> logs;
};

// The C++ echo template, built with the guest recipe, runs: invoke returns
// the invoke input as received.
TEST(BundledTemplatesTest, EchoRunsAndEchoes) {
  std::ifstream in(TESSERA_ECHO_TEMPLATE_WASM, std::ios::binary);
  ASSERT_TRUE(in) << TESSERA_ECHO_TEMPLATE_WASM;
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                   std::istreambuf_iterator<char>());
  wasm::LoadOptions options;
  options.check = ComputeCheckOptions(64);
  options.cache_dir = TESSERA_TEMPLATES_TEST_CACHE;
  fs::create_directories(options.cache_dir);
  auto module = wasm::LoadModule(bytes, options);
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  auto echo = ComputeInstance::Create(*module, InstanceOptions(), {});
  ASSERT_TRUE(echo.ok()) << echo.status().ToString();
  LogOnlyCalls calls;
  const CallLimits limits{100'000'000, 5'000};
  CallOutcome init = (*echo)->Init(calls, limits);
  ASSERT_TRUE(init.ok) << init.error;
  EXPECT_EQ(calls.logs, std::vector<std::string>{"1 echo init"});
  const std::string input = nlohmann::json{
      {"export", "anything"},
      {"params", {{"n", 1}}},
      {"callerUserId", "u7"}}.dump();
  CallOutcome out = (*echo)->Invoke(input, calls, limits);
  ASSERT_TRUE(out.ok) << out.error;
  EXPECT_EQ(out.output, input);
  EXPECT_TRUE((*echo)->Tick(500, calls, limits).ok);
}

}  // namespace
}  // namespace tessera::compute
