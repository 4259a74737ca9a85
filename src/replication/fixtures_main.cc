// replication_fixtures: writes the fixtures shared with the TypeScript
// client (tests/fixtures/replication, and with --lagcomp
// tests/fixtures/lagcomp) and the fuzzers' seed corpora.
//
//   replication_fixtures [--lagcomp] --out DIR
//                                       write <name>.frames.bin, <name>.json
//   replication_fixtures [--lagcomp] --check DIR
//                                       regenerate into a temporary
//                                       directory; fail unless DIR's files
//                                       are byte-identical
//   replication_fixtures --corpus DIR   write DIR/replication_changes/* and
//                                       DIR/entities_payload/*
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "replication/fixture_scenarios.h"
#include "replication/lagcomp_fixtures.h"

namespace fs = std::filesystem;
using tessera::Result;
using tessera::replication::FixtureScenario;

namespace {

bool WriteFile(const fs::path& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(f);
}

bool ReadFile(const fs::path& path, std::string* bytes) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  std::ostringstream s;
  s << f.rdbuf();
  *bytes = s.str();
  return true;
}

// File name -> contents, of the lag compensation fixtures.
bool GenerateLagcomp(std::map<std::string, std::string>* files) {
  Result<std::vector<tessera::replication::LagcompScenario>> all =
      tessera::replication::BuildLagcompScenarios();
  if (!all.ok()) {
    std::fprintf(stderr, "replication_fixtures: %s\n",
                 all.status().ToString().c_str());
    return false;
  }
  for (const tessera::replication::LagcompScenario& s : *all) {
    (*files)[s.frames.name + ".json"] = tessera::replication::LagcompJson(s);
    (*files)[s.frames.name + ".frames.bin"] =
        tessera::replication::FramesBin(s.frames);
  }
  return true;
}

// File name -> contents.
bool Generate(bool lagcomp, std::map<std::string, std::string>* files) {
  if (lagcomp) return GenerateLagcomp(files);
  Result<std::vector<FixtureScenario>> all =
      tessera::replication::BuildFixtureScenarios();
  if (!all.ok()) {
    std::fprintf(stderr, "replication_fixtures: %s\n",
                 all.status().ToString().c_str());
    return false;
  }
  for (const FixtureScenario& s : *all) {
    Result<std::string> json = tessera::replication::FixtureJson(s);
    if (!json.ok()) {
      std::fprintf(stderr, "replication_fixtures: %s\n",
                   json.status().ToString().c_str());
      return false;
    }
    (*files)[s.name + ".json"] = *json;
    (*files)[s.name + ".frames.bin"] = tessera::replication::FramesBin(s);
  }
  return true;
}

int Out(bool lagcomp, const fs::path& dir) {
  std::map<std::string, std::string> files;
  if (!Generate(lagcomp, &files)) return 1;
  fs::create_directories(dir);
  for (const auto& [name, bytes] : files) {
    if (!WriteFile(dir / name, bytes)) {
      std::fprintf(stderr, "cannot write %s\n", (dir / name).c_str());
      return 1;
    }
  }
  std::printf("wrote %zu files to %s\n", files.size(), dir.c_str());
  return 0;
}

int Check(bool lagcomp, const fs::path& dir) {
  const fs::path tmp = fs::temp_directory_path() /
                       ("replication_fixtures_" + std::to_string(::getpid()));
  if (Out(lagcomp, tmp) != 0) return 1;
  int bad = 0;
  std::set<std::string> generated;
  for (const auto& entry : fs::directory_iterator(tmp)) {
    const std::string name = entry.path().filename().string();
    generated.insert(name);
    std::string want;
    std::string got;
    ReadFile(entry.path(), &want);
    if (!ReadFile(dir / name, &got)) {
      std::fprintf(stderr, "missing: %s\n", (dir / name).c_str());
      ++bad;
    } else if (got != want) {
      std::fprintf(stderr, "differs from the generator's output: %s\n",
                   (dir / name).c_str());
      ++bad;
    }
  }
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    const bool fixture = name.ends_with(".json") || name.ends_with(".bin");
    if (fixture && !generated.contains(name)) {
      std::fprintf(stderr, "stale (not generated): %s\n", entry.path().c_str());
      ++bad;
    }
  }
  fs::remove_all(tmp);
  if (bad > 0) {
    std::fprintf(stderr,
                 "%d fixture file(s) out of date; regenerate with "
                 "replication_fixtures %s--out %s\n",
                 bad, lagcomp ? "--lagcomp " : "", dir.c_str());
    return 1;
  }
  std::printf("fixtures in %s are up to date\n", dir.c_str());
  return 0;
}

int Corpus(const fs::path& dir) {
  const std::pair<const char*, std::vector<std::pair<std::string, std::string>>>
      corpora[] = {
          {"replication_changes", tessera::replication::ChangeListSeeds()},
          {"entities_payload", tessera::replication::PayloadSeeds()},
      };
  for (const auto& [sub, seeds] : corpora) {
    fs::create_directories(dir / sub);
    for (const auto& [name, bytes] : seeds) {
      if (!WriteFile(dir / sub / name, bytes)) return 1;
    }
    std::printf("wrote %zu seeds to %s\n", seeds.size(), (dir / sub).c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  bool lagcomp = false;
  if (argc == 4 && std::strcmp(argv[1], "--lagcomp") == 0) {
    lagcomp = true;
    --argc;
    ++argv;
    if (std::strcmp(argv[1], "--corpus") == 0) argc = 0;  // not with it
  }
  if (argc == 3 && std::strcmp(argv[1], "--out") == 0)
    return Out(lagcomp, argv[2]);
  if (argc == 3 && std::strcmp(argv[1], "--check") == 0)
    return Check(lagcomp, argv[2]);
  if (argc == 3 && std::strcmp(argv[1], "--corpus") == 0) {
    return Corpus(argv[2]);
  }
  std::fprintf(stderr,
               "usage: replication_fixtures [--lagcomp] --out DIR | "
               "[--lagcomp] --check DIR | --corpus DIR\n");
  return 2;
}
