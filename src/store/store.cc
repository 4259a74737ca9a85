#include "store/store.h"

#include <utility>

#include "store/sqlite_compute_store.h"
#include "store/sqlite_data_store.h"
#include "store/sqlite_store.h"
#include "store/store_url.h"

namespace tessera::store {

Result<std::unique_ptr<Store>> OpenStore(const std::string& url) {
  Result<StoreUrl> parsed = ParseStoreUrl(url);
  if (!parsed.ok()) return parsed.status();
  Result<std::unique_ptr<SqliteStore>> store = SqliteStore::Open(parsed->path);
  if (!store.ok()) return store.status();
  return std::unique_ptr<Store>(std::move(store).value());
}

Result<std::unique_ptr<compute::ComputeStore>> OpenComputeStore(
    const std::string& url) {
  Result<StoreUrl> parsed = ParseStoreUrl(url);
  if (!parsed.ok()) return parsed.status();
  Result<std::unique_ptr<SqliteComputeStore>> store =
      SqliteComputeStore::Open(parsed->path);
  if (!store.ok()) return store.status();
  return std::unique_ptr<compute::ComputeStore>(std::move(store).value());
}

Result<std::unique_ptr<data::DataStore>> OpenDataStore(const std::string& url) {
  Result<StoreUrl> parsed = ParseStoreUrl(url);
  if (!parsed.ok()) return parsed.status();
  Result<std::unique_ptr<SqliteDataStore>> store =
      SqliteDataStore::Open(parsed->path);
  if (!store.ok()) return store.status();
  return std::unique_ptr<data::DataStore>(std::move(store).value());
}

}  // namespace tessera::store
