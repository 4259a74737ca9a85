// libFuzzer target: realm patches in MessagePack with interned keys
// (src/realm/patch_codec.cc), as a connection or the patch log hands them
// over. The input is decoded twice on one KeyTable (so the second pass
// meets the keys the first one learnt, as a connection's next frame does).
// Checks what must hold whatever the bytes:
//  - a refusal is kInvalidArgument or kResourceExhausted, has a message,
//    and leaves the KeyTable as it was;
//  - an accepted patch re-encodes (fresh table) to bytes that decode to the
//    same patch, and encoding that again gives the same bytes;
//  - its JSON form is valid JSON text that parses back to the same patch;
//  - ApplyPatch on a small document either succeeds or leaves it unchanged.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>

#include "realm/patch.h"

namespace {

using namespace tessera;
using namespace tessera::realm;

void Check(bool ok) {
  if (!ok) std::abort();
}

std::span<const uint8_t> AsBytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

void CheckAccepted(const Patch& patch) {
  KeyTable enc;
  const std::string bytes = EncodePatch(patch, &enc);
  KeyTable dec;
  Result<Patch> again =
      DecodePatch(AsBytes(bytes), &dec,
                  DecodeLimits{.max_ops = 1 << 20,
                               .max_bytes = 1 << 30,
                               .max_key_length = 1 << 20,
                               .max_depth = 64,
                               .max_expanded_leaves = 1 << 30});
  Check(again.ok());
  Check(*again == patch);
  Check(dec.size() == enc.size());
  KeyTable enc2;
  Check(EncodePatch(*again, &enc2) == bytes);

  const std::string text = PatchToJson(patch).dump();
  const Json parsed = Json::parse(text, nullptr, false);
  Check(!parsed.is_discarded());
  Result<Patch> from_json = PatchFromJson(parsed);
  Check(from_json.ok());
  Check(*from_json == patch);

  Json doc = Json::parse(R"({"a":{"b":[1,2,{"c":null}]},"l":[],"s":"x"})");
  const Json before = doc;
  Status applied = ApplyPatch(patch, &doc);
  if (!applied.ok()) {
    Check(applied.code() == StatusCode::kInvalidArgument);
    Check(doc == before);
  } else {
    Check(doc.is_object());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> bytes(data, size);
  KeyTable keys;
  for (int pass = 0; pass < 2; ++pass) {
    const size_t known = keys.size();
    Result<Patch> patch = DecodePatch(bytes, &keys);
    if (!patch.ok()) {
      const StatusCode code = patch.status().code();
      Check(code == StatusCode::kInvalidArgument ||
            code == StatusCode::kResourceExhausted);
      Check(!patch.status().message().empty());
      Check(keys.size() == known);
      continue;
    }
    CheckAccepted(*patch);
  }
  return 0;
}
