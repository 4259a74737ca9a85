#include "server/codec_json.h"

#include <cstdint>
#include <vector>

namespace tessera::server {

using json = nlohmann::json;

std::string EncodeForCodec(const json& value, shard::Codec codec) {
  if (codec == shard::Codec::kJson) {
    return value.dump(-1, ' ', false, json::error_handler_t::replace);
  }
  std::vector<uint8_t> bytes = json::to_msgpack(value);
  return std::string(bytes.begin(), bytes.end());
}

std::string EncodeParams(const json* value, shard::Codec codec) {
  if (value == nullptr || value->is_null()) return std::string();
  return EncodeForCodec(*value, codec);
}

const char* CodecName(shard::Codec codec) {
  return codec == shard::Codec::kJson ? "json" : "msgpack";
}

}  // namespace tessera::server
