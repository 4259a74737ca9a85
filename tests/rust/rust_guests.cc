#include "rust_guests.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <vector>

#include "shard/shard_abi.h"

namespace tessera::shard::rust_test {

std::shared_ptr<const wasm::CompiledModule> Load(const std::string& path,
                                                 uint32_t memory_mb) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << path << " was not built";
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  wasm::LoadOptions options;
  options.check = ShardCheckOptions(memory_mb);
  options.fuel = true;
  options.cache_dir = TESSERA_RUST_TEST_CACHE;
  auto module = wasm::LoadModule(bytes, options);
  EXPECT_TRUE(module.ok()) << path << ": " << module.status().ToString();
  return module.ok() ? *module : nullptr;
}

KindConfig Kind(const std::string& name, Codec codec) {
  KindConfig kind;
  kind.name = name;
  kind.codec = codec;
  return kind;
}

std::string Encode(Codec codec, const nlohmann::json& value) {
  if (codec == Codec::kJson) return value.dump();
  std::vector<uint8_t> b = nlohmann::json::to_msgpack(value);
  return std::string(b.begin(), b.end());
}

}  // namespace tessera::shard::rust_test
