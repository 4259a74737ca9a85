// JSON request values converted to a shard kind's codec (params, inputs),
// the same conversion `tessera run` applies. Pure functions; any thread.
#ifndef TESSERA_SERVER_CODEC_JSON_H_
#define TESSERA_SERVER_CODEC_JSON_H_

#include <nlohmann/json.hpp>
#include <string>

#include "shard/shard_types.h"

namespace tessera::server {

// MessagePack (nlohmann's to_msgpack) or compact JSON text.
std::string EncodeForCodec(const nlohmann::json& value, shard::Codec codec);

// Params as stored and passed to init: empty bytes for an absent or null
// value ("no params"), otherwise EncodeForCodec.
std::string EncodeParams(const nlohmann::json* value, shard::Codec codec);

const char* CodecName(shard::Codec codec);

}  // namespace tessera::server

#endif  // TESSERA_SERVER_CODEC_JSON_H_
