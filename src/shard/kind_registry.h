// The shard kinds a host can run: name -> limits + compiled module.
//
// Thread-safety: all methods may be called from any thread. Entries are
// immutable once added; Find hands out shared ownership, so a kind stays
// alive while a shard of it runs. Replace (a hot reload) puts a new entry
// in the name's place: shards started after it get the new module, those
// running keep theirs until ShardHost::Reload swaps them.
#ifndef TESSERA_SHARD_KIND_REGISTRY_H_
#define TESSERA_SHARD_KIND_REGISTRY_H_

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "common/thread_annotations.h"
#include "shard/shard_types.h"

namespace tessera::wasm {
class CompiledModule;
}

namespace tessera::shard {

struct KindEntry {
  KindConfig config;
  // Loaded with the kind's memory cap (memory_mb * 16 pages).
  std::shared_ptr<const wasm::CompiledModule> module;
  // Which build of the module this is (the server's short hash of the
  // .wasm); reported per shard. May be empty.
  std::string version;
};

class KindRegistry {
 public:
  // Errors: kInvalidArgument for an empty name or a null module,
  // kAlreadyExists if the name is taken.
  Status Add(KindConfig config,
             std::shared_ptr<const wasm::CompiledModule> module,
             std::string version = "");
  // Gives the registered kind `name` a new module (same config). Errors:
  // kNotFound, kInvalidArgument for a null module.
  Result<std::shared_ptr<const KindEntry>> Replace(
      std::string_view name, std::shared_ptr<const wasm::CompiledModule> module,
      std::string version);
  // nullptr if unknown.
  std::shared_ptr<const KindEntry> Find(std::string_view name) const;
  std::vector<std::string> Names() const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<const KindEntry>, std::less<>> kinds_
      GUARDED_BY(mu_);
};

}  // namespace tessera::shard

#endif  // TESSERA_SHARD_KIND_REGISTRY_H_
