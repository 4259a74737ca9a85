// The deploy-time source rules: one test per refusal, each checking the
// code and that the message names what was refused.
#include <gtest/gtest.h>

#include <string>

#include "compute/cargo_toml.h"
#include "compute/source_compiler.h"
#include "tessera/compute_abi.h"

namespace tessera::compute {
namespace {

constexpr char kCargo[] =
    "[package]\n"
    "name = \"my-module\"\n"
    "version = \"0.1.0\"\n"
    "edition = \"2021\"\n"
    "\n"
    "[lib]\n"
    "crate-type = [\"cdylib\"]\n"
    "\n"
    "[dependencies]\n"
    "tessera-compute-sdk = \"0.1.0\"\n";

SourceFiles Rust(std::string cargo = kCargo) {
  return {{"Cargo.toml", std::move(cargo)},
          {"src/lib.rs", "pub fn f() -> u32 { 1 }\n"}};
}

SourceFiles Cpp() {
  return {{"main.cc",
           "#include <tessera/compute.h>\n#include <vector>\n"
           "#include \"util.h\"\nint f() { return 1; }\n"},
          {"util.h", "#pragma once\n#include <cstdint>\n"}};
}

Status CheckRust(const SourceFiles& files) {
  return CheckSources(Language::kRust, files, "0.1.0",
                      compute_abi::kAbiVersion);
}
Status CheckCpp(const SourceFiles& files) {
  return CheckSources(Language::kCpp, files, "0.1.0", compute_abi::kAbiVersion);
}

// Refused as invalid, with every `needle` in the message.
void ExpectRefused(const Status& s,
                   std::initializer_list<const char*> needles) {
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  for (const char* needle : needles) {
    EXPECT_NE(s.message().find(needle), std::string::npos)
        << "\"" << needle << "\" not in: " << s.message();
  }
}

std::string WithCargo(const std::string& extra) {
  return std::string(kCargo) + extra;
}

TEST(SourceRules, AcceptsTheStarterModules) {
  EXPECT_TRUE(CheckRust(Rust()).ok()) << CheckRust(Rust()).ToString();
  EXPECT_TRUE(CheckCpp(Cpp()).ok()) << CheckCpp(Cpp()).ToString();
  SourceFiles rich = Rust(WithCargo(
      "serde = { version = \"1\", features = [\"derive\"] }\n"
      "rand = { version = \"0.8\", default-features = false }  # comment\n"
      "\n[dependencies.serde_json]\nversion = \"1\"\nfeatures = [\n"
      "  \"std\",  # inside an array\n]\n"));
  rich["src/sim/weather.rs"] =
      "// 'a \"quoted\" /* text\nfn w<'a>(x: &'a str) -> char { let _ = "
      "r#\"env!\"#; 'x' }\n";
  EXPECT_TRUE(CheckRust(rich).ok()) << CheckRust(rich).ToString();
}

TEST(SourceRules, RefusesTooManyFiles) {
  SourceFiles files = Cpp();
  for (int i = 0; i < 31; ++i) files["h" + std::to_string(i) + ".h"] = "";
  ExpectRefused(CheckCpp(files), {"33 files", "32"});
}

TEST(SourceRules, RefusesAFileOver256KiB) {
  SourceFiles files = Cpp();
  files["big.h"] = std::string(256 * 1024 + 1, ' ');
  ExpectRefused(CheckCpp(files), {"big.h", "256 KiB"});
}

TEST(SourceRules, RefusesMoreThan1MiBInAll) {
  SourceFiles files = Cpp();
  for (int i = 0; i < 5; ++i) {
    files["f" + std::to_string(i) + ".h"] = std::string(250 * 1024, ' ');
  }
  ExpectRefused(CheckCpp(files), {"1 MiB"});
}

TEST(SourceRules, RefusesNoFiles) { ExpectRefused(CheckCpp({}), {"no files"}); }

TEST(SourceRules, RefusesDotDotPaths) {
  SourceFiles files = Cpp();
  files["../escape.h"] = "";
  ExpectRefused(CheckCpp(files), {"../escape.h", ".."});
}

TEST(SourceRules, RefusesAbsolutePaths) {
  SourceFiles files = Cpp();
  files["/etc/x.h"] = "";
  ExpectRefused(CheckCpp(files), {"/etc/x.h", "absolute"});
}

TEST(SourceRules, RefusesBackslashPaths) {
  SourceFiles files = Cpp();
  files["dir\\x.h"] = "";
  ExpectRefused(CheckCpp(files), {"dir\\x.h", "backslash"});
}

TEST(SourceRules, RefusesHiddenFiles) {
  SourceFiles files = Cpp();
  files["dir/.hidden.h"] = "";
  ExpectRefused(CheckCpp(files), {"dir/.hidden.h", "hidden"});
}

TEST(SourceRules, RefusesOddPaths) {
  for (const char* path : {"a//b.h", "./a.h", "a/", "sp ace.h", ""}) {
    SourceFiles files = Cpp();
    files[path] = "";
    EXPECT_FALSE(CheckCpp(files).ok()) << path;
  }
}

TEST(SourceRules, RefusesNonUtf8Files) {
  SourceFiles files = Cpp();
  files["bad.h"] = "\xff\xfe";
  ExpectRefused(CheckCpp(files), {"bad.h", "UTF-8"});
}

TEST(SourceRules, RustRequiresCargoToml) {
  ExpectRefused(CheckRust({{"src/lib.rs", ""}}), {"Cargo.toml"});
}

TEST(SourceRules, RustRequiresLibRs) {
  ExpectRefused(CheckRust({{"Cargo.toml", kCargo}, {"src/main.rs", ""}}),
                {"src/lib.rs"});
}

TEST(SourceRules, RustRefusesFilesOutsideSrc) {
  SourceFiles files = Rust();
  files["README.md"] = "";
  ExpectRefused(CheckRust(files), {"README.md", "src/**.rs"});
  files = Rust();
  files["src/data.txt"] = "";
  ExpectRefused(CheckRust(files), {"src/data.txt"});
}

TEST(SourceRules, RustRefusesBuildRsAnywhere) {
  SourceFiles files = Rust();
  files["build.rs"] = "fn main() {}";
  ExpectRefused(CheckRust(files), {"build.rs"});
  files = Rust();
  files["src/build.rs"] = "fn main() {}";
  ExpectRefused(CheckRust(files), {"src/build.rs", "build scripts"});
}

TEST(SourceRules, RustRefusesCargoLock) {
  SourceFiles files = Rust();
  files["Cargo.lock"] = "";
  ExpectRefused(CheckRust(files), {"Cargo.lock"});
}

TEST(SourceRules, RustRefusesOtherSections) {
  for (const char* section :
       {"[features]", "[dev-dependencies]", "[workspace]", "[patch.crates-io]",
        "[profile.release]", "[target.wasm32-unknown-unknown.dependencies]",
        "[[bin]]", "[package.metadata.x]"}) {
    ExpectRefused(CheckRust(Rust(WithCargo(std::string(section) + "\n"))),
                  {section, "Cargo.toml:11", "[package], [lib]"});
  }
}

TEST(SourceRules, RustRefusesBuildDependencies) {
  ExpectRefused(
      CheckRust(Rust(WithCargo("[build-dependencies]\nserde = \"1\"\n"))),
      {"Cargo.toml:11", "[build-dependencies]"});
}

TEST(SourceRules, RustRefusesThePackageBuildKey) {
  std::string cargo = kCargo;
  cargo.insert(cargo.find("edition"), "build = \"gen.rs\"\n");
  ExpectRefused(CheckRust(Rust(cargo)), {"Cargo.toml:4", "build"});
}

TEST(SourceRules, RustRefusesUnknownPackageKeys) {
  std::string cargo = kCargo;
  cargo.insert(cargo.find("edition"), "links = \"z\"\n");
  ExpectRefused(CheckRust(Rust(cargo)), {"Cargo.toml:4", "`links`"});
}

TEST(SourceRules, RustRefusesDependenciesOffTheAllowlist) {
  ExpectRefused(CheckRust(Rust(WithCargo("tokio = \"1\"\n"))),
                {"Cargo.toml:11", "`tokio`", "serde_json"});
  ExpectRefused(
      CheckRust(Rust(WithCargo("[dependencies.reqwest]\nversion = \"1\"\n"))),
      {"Cargo.toml:11", "`reqwest`"});
}

TEST(SourceRules, RustRefusesPathDependencies) {
  ExpectRefused(CheckRust(Rust(WithCargo("serde = { path = \"../x\" }\n"))),
                {"Cargo.toml:11", "`serde`", "path"});
  ExpectRefused(
      CheckRust(Rust(WithCargo("[dependencies.rand]\npath = \"/tmp/r\"\n"))),
      {"Cargo.toml:12", "`rand`", "path"});
}

TEST(SourceRules, RustRefusesGitDependencies) {
  ExpectRefused(
      CheckRust(Rust(WithCargo("rand = { git = \"https://x/rand\" }\n"))),
      {"Cargo.toml:11", "`rand`", "git"});
}

TEST(SourceRules, RustRefusesRegistryAndRenamedDependencies) {
  ExpectRefused(CheckRust(Rust(WithCargo(
                    "serde = { version = \"1\", registry = \"evil\" }\n"))),
                {"`registry`"});
  ExpectRefused(CheckRust(Rust(WithCargo(
                    "serde = { version = \"1\", package = \"evil\" }\n"))),
                {"`package`"});
}

TEST(SourceRules, RustRequiresCdylib) {
  std::string cargo = kCargo;
  cargo.replace(cargo.find("\"cdylib\""), 8, "\"rlib\"");
  ExpectRefused(CheckRust(Rust(cargo)), {"Cargo.toml:7", "cdylib"});
  cargo = kCargo;
  cargo.erase(cargo.find("[lib]"),
              cargo.find("[dependencies]") - cargo.find("[lib]"));
  ExpectRefused(CheckRust(Rust(cargo)), {"crate-type", "cdylib"});
}

TEST(SourceRules, RustRefusesALibPathElsewhere) {
  std::string cargo = kCargo;
  cargo.insert(cargo.find("crate-type"), "path = \"/etc/x.rs\"\n");
  ExpectRefused(CheckRust(Rust(cargo)), {"Cargo.toml:7", "path"});
}

TEST(SourceRules, RustRefusesTomlItCannotRead) {
  for (const char* extra :
       {"serde = 1.5\n", "x = \"\"\"multi\"\"\"\n", "serde.version = \"1\"\n",
        "serde = \"1\"\nserde = \"2\"\n", "serde = { version = \"1\",\n}\n",
        "serde = \"unterminated\n", "= \"1\"\n"}) {
    ExpectRefused(CheckRust(Rust(WithCargo(extra))), {"Cargo.toml:1"});
  }
  ExpectRefused(CheckRust(Rust(WithCargo("[dependencies]\n"))),
                {"Cargo.toml:11", "twice"});
  ExpectRefused(CheckRust(Rust("name = \"x\"\n" + std::string(kCargo))),
                {"Cargo.toml:1", "outside a section"});
}

TEST(SourceRules, RustRefusesFileAndEnvironmentMacros) {
  for (const char* code :
       {"const S: &str = include_str!(\"/etc/passwd\");",
        "const B: &[u8] = include_bytes!(\"/etc/passwd\");",
        "include!(\"/etc/x.rs\");", "const T: &str = env!(\"HOME\");",
        "const T: Option<&str> = option_env!(\"SECRET\");",
        "use std::include_str as grab;", "m!(env);",
        "const T: &str = r#env!(\"HOME\");"}) {
    SourceFiles files = Rust();
    files["src/lib.rs"] = std::string("// ok\n") + code + "\n";
    ExpectRefused(CheckRust(files), {"src/lib.rs:2"});
  }
}

TEST(SourceRules, RustRefusesThePathAttribute) {
  for (const char* code : {"#[path = \"/etc/x.rs\"] mod x;",
                           "#[cfg_attr(all(), path = \"/x.rs\")] mod x;",
                           "macro_rules! m { ($a:ident) => { #[$a = \"/x\"] "
                           "mod x; } }"}) {
    SourceFiles files = Rust();
    files["src/lib.rs"] = code;
    ExpectRefused(CheckRust(files), {"src/lib.rs:1"});
  }
  SourceFiles files = Rust();
  files["src/lib.rs"] = "fn f(path: &str) -> Vec<&str> { vec![path] }\n";
  EXPECT_TRUE(CheckRust(files).ok()) << CheckRust(files).ToString();
}

TEST(SourceRules, CppRefusesOtherFileTypes) {
  SourceFiles files = Cpp();
  files["x.cpp"] = "";
  ExpectRefused(CheckCpp(files), {"x.cpp", ".cc and .h"});
}

TEST(SourceRules, CppNeedsACcFile) {
  ExpectRefused(CheckCpp({{"a.h", ""}}), {".cc"});
}

TEST(SourceRules, CppRefusesCcFilesInDirectories) {
  SourceFiles files = Cpp();
  files["sub/b.cc"] = "";
  ExpectRefused(CheckCpp(files), {"sub/b.cc", "top level"});
}

TEST(SourceRules, CppRefusesSystemHeaders) {
  for (const char* inc :
       {"#include <unistd.h>", "  #  include <sys/socket.h>",
        "#include <thread>", "#include <tessera/../../../etc/passwd>",
        "%:include <fstream>", "/* c */ #include <pthread.h>",
        "#\\\ninclude <unistd.h>"}) {
    SourceFiles files = Cpp();
    files["main.cc"] = std::string("int a;\n") + inc + "\n";
    ExpectRefused(CheckCpp(files), {"main.cc:2", "not allowed"});
  }
}

TEST(SourceRules, CppRefusesQuotedIncludesOfOtherFiles) {
  for (const char* inc :
       {"#include \"missing.h\"", "#include \"../util.h\"",
        "#include \"/etc/passwd\"", "#include \"tessera/../../x.h\""}) {
    SourceFiles files = Cpp();
    files["main.cc"] = std::string("int a;\n") + inc + "\n";
    ExpectRefused(CheckCpp(files), {"main.cc:2"});
  }
  SourceFiles files = Cpp();
  files["detail/a.h"] = "#include \"../util.h\"\n#include \"b.h\"\n";
  files["detail/b.h"] = "#include \"tessera/compute.h\"\n";
  EXPECT_TRUE(CheckCpp(files).ok()) << CheckCpp(files).ToString();
}

TEST(SourceRules, CppRefusesComputedAndOtherIncludes) {
  for (const char* inc :
       {"#define H <unistd.h>\n#include H", "#include_next <vector>",
        "#import <vector>", "#embed \"/etc/passwd\""}) {
    SourceFiles files = Cpp();
    files["main.cc"] = inc;
    ExpectRefused(CheckCpp(files), {"main.cc:", "not allowed"});
  }
}

TEST(SourceRules, CppRefusesInlineAssembly) {
  SourceFiles files = Cpp();
  files["main.cc"] = "int a;\nasm(\".incbin \\\"/etc/passwd\\\"\");\n";
  ExpectRefused(CheckCpp(files), {"main.cc:2", "asm"});
}

TEST(SourceRules, CppRefusesHasInclude) {
  SourceFiles files = Cpp();
  files["main.cc"] = "int a;\n#if __has_include(</etc/passwd>)\n#endif\n";
  ExpectRefused(CheckCpp(files), {"main.cc:2", "__has_include"});
}

TEST(SourceRules, CppIgnoresIncludesInCommentsAndLiterals) {
  SourceFiles files = Cpp();
  files["main.cc"] =
      "// #include <unistd.h>\n/* \n#include <unistd.h>\n*/\n"
      "const char* s = \"#include <unistd.h> /*\";\n"
      "const char* r = R\"x(\n#include <unistd.h>\n)x\";\n"
      "int n = 1'000'000; char c = '\"';\n";
  EXPECT_TRUE(CheckCpp(files).ok()) << CheckCpp(files).ToString();
  // A string holding "/*" does not hide a later directive.
  files["main.cc"] = "const char* s = \"/*\";\n#include <unistd.h>\n// */\n";
  ExpectRefused(CheckCpp(files), {"main.cc:2"});
  files["main.cc"] =
      "int n = 1'0; const char* s = \"/*\";\n#include <unistd.h>\n";
  ExpectRefused(CheckCpp(files), {"main.cc:2"});
}

TEST(SourceRules, RefusesUnsupportedSdkVersions) {
  for (const char* v : {"0.0.9", "9.0.0", "0.1", "0.1.0-beta", "01.1.0", ""}) {
    ExpectRefused(
        CheckSources(Language::kCpp, Cpp(), v, compute_abi::kAbiVersion),
        {"sdkVersion", compute_abi::kSdkVersion});
  }
}

TEST(SourceRules, RefusesOtherAbiVersions) {
  ExpectRefused(CheckSources(Language::kCpp, Cpp(), "0.1.0",
                             compute_abi::kAbiVersion + 1),
                {"abiVersion"});
}

TEST(SourceRules, ModuleNamesAreCrateShaped) {
  EXPECT_TRUE(IsValidModuleName("world-sim"));
  EXPECT_TRUE(IsValidModuleName("a_1"));
  EXPECT_TRUE(IsValidModuleName(std::string(128, 'a')));
  EXPECT_FALSE(IsValidModuleName(std::string(129, 'a')));
  EXPECT_FALSE(IsValidModuleName(""));
  EXPECT_FALSE(IsValidModuleName("1abc"));
  EXPECT_FALSE(IsValidModuleName("Abc"));
  EXPECT_FALSE(IsValidModuleName("a.b"));
  EXPECT_FALSE(IsValidModuleName("-a"));
}

TEST(SourceRules, DetectsTheLanguage) {
  EXPECT_EQ(DetectLanguage(Rust()), Language::kRust);
  EXPECT_EQ(DetectLanguage(Cpp()), Language::kCpp);
}

TEST(SourceRules, HashesTheCanonicalSource) {
  const std::string h = SourceHash(Language::kCpp, "0.1.0", Cpp());
  EXPECT_EQ(h.size(), 64u);
  EXPECT_EQ(h, SourceHash(Language::kCpp, "0.1.0", Cpp()));
  EXPECT_NE(h, SourceHash(Language::kRust, "0.1.0", Cpp()));
  EXPECT_NE(h, SourceHash(Language::kCpp, "0.1.1", Cpp()));
  SourceFiles moved = Cpp();
  // The same bytes split differently between path and content differ.
  SourceFiles a = {{"a.h", "bc"}}, b = {{"a.hb", "c"}};
  EXPECT_NE(SourceHash(Language::kCpp, "0.1.0", a),
            SourceHash(Language::kCpp, "0.1.0", b));
  moved["util.h"] += " ";
  EXPECT_NE(h, SourceHash(Language::kCpp, "0.1.0", moved));
}

TEST(CargoToml, ReadsTheSubset) {
  Result<std::vector<TomlTable>> t = ParseCargoToml(
      "[a]\nk = 'lit'\nn = -1_000\nb = true\narr = [1, [2], {x = "
      "\"\\u00e9\"}]\n"
      "[ \"q\" . r ]\n[[s]]\n",
      "T");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->size(), 4u);
  const TomlTable& a = (*t)[1];
  EXPECT_EQ(a.path, std::vector<std::string>{"a"});
  EXPECT_EQ(a.entries[0].second.str, "lit");
  EXPECT_EQ(a.entries[1].second.integer, -1000);
  EXPECT_TRUE(a.entries[2].second.boolean);
  ASSERT_EQ(a.entries[3].second.array.size(), 3u);
  EXPECT_EQ(a.entries[3].second.array[2].table[0].second.str, "\xc3\xa9");
  EXPECT_EQ((*t)[2].path, (std::vector<std::string>{"q", "r"}));
  EXPECT_TRUE((*t)[3].array);
  EXPECT_EQ((*t)[3].line, 7);
}

TEST(CargoToml, RefusesDeepNesting) {
  std::string deep = "x = " + std::string(100, '[') + std::string(100, ']');
  Result<std::vector<TomlTable>> t = ParseCargoToml(deep, "T");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("T:1"), std::string::npos);
}

}  // namespace
}  // namespace tessera::compute
