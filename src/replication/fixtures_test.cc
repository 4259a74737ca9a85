// The fixtures shared with the TypeScript client: the reference decoder
// reproduces every frame's decoded state as the JSON gives it, and the
// .frames.bin files hold the same payloads.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "replication/bit_io.h"
#include "replication/decoder.h"

namespace tessera::replication {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

std::string Unhex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  return out;
}

std::vector<std::string> Scenarios() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(TESSERA_REPLICATION_FIXTURES)) {
    const std::string name = e.path().filename().string();
    if (name.ends_with(".json")) out.push_back(name.substr(0, name.size() - 5));
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(FixturesTest, AllScenariosArePresent) {
  EXPECT_EQ(Scenarios(), (std::vector<std::string>{
                             "basic", "budget", "late_join", "reuse", "y_up"}));
}

TEST(FixturesTest, DecoderReproducesEveryFrame) {
  for (const std::string& name : Scenarios()) {
    SCOPED_TRACE(name);
    const fs::path dir = TESSERA_REPLICATION_FIXTURES;
    const nlohmann::json doc =
        nlohmann::json::parse(ReadFile(dir / (name + ".json")));
    const std::string bin = ReadFile(dir / (name + ".frames.bin"));
    ByteReader bin_reader(bin);
    Decoder d;
    for (const nlohmann::json& frame : doc.at("frames")) {
      const uint64_t tick = frame.at("tick").get<uint64_t>();
      SCOPED_TRACE("tick " + std::to_string(tick));
      const std::string payload =
          Unhex(frame.at("payload_hex").get<std::string>());
      uint64_t bin_tick = 0;
      uint32_t len = 0;
      std::string_view bin_payload;
      ASSERT_TRUE(bin_reader.U64(&bin_tick) && bin_reader.U32(&len) &&
                  bin_reader.Bytes(len, &bin_payload));
      EXPECT_EQ(bin_tick, tick);
      EXPECT_EQ(bin_payload, payload);

      Status s = d.Apply(payload);
      if (frame.at("ignored").get<bool>()) {
        EXPECT_TRUE(Decoder::Ignored(s)) << s.ToString();
      } else {
        ASSERT_TRUE(s.ok()) << s.ToString();
      }
      EXPECT_EQ(d.entered(), frame.at("entered").get<std::vector<uint64_t>>());
      EXPECT_EQ(d.left(), frame.at("left").get<std::vector<uint64_t>>());
      const nlohmann::json& entities = frame.at("entities");
      ASSERT_EQ(d.entities().size(), entities.size());
      for (size_t i = 0; i < entities.size(); ++i) {
        const DecodedEntity& e = d.entities()[i];
        const nlohmann::json& want = entities[i];
        EXPECT_EQ(e.id, want.at("id").get<uint64_t>());
        const auto q = want.at("q").get<std::vector<int64_t>>();
        ASSERT_EQ(q.size(), 3u);
        for (int a = 0; a < 3; ++a) {
          EXPECT_EQ(e.q[a], q[a]);
          EXPECT_EQ(d.Coordinate(e, a),
                    want.at(std::string(1, "xyz"[a])).get<double>());
        }
        const nlohmann::json& comps = want.at("components");
        ASSERT_EQ(e.components.size(), comps.size());
        for (const DecodedComponent& c : e.components) {
          EXPECT_EQ(c.bytes,
                    Unhex(comps.at(std::to_string(c.id)).get<std::string>()));
        }
      }
    }
    EXPECT_TRUE(bin_reader.AtEnd());
  }
}

}  // namespace
}  // namespace tessera::replication
