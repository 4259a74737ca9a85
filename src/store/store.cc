#include "store/store.h"

#include <filesystem>
#include <utility>

#include "store/postgres/pg_compute_store.h"
#include "store/postgres/pg_data_store.h"
#include "store/postgres/pg_machine_store.h"
#include "store/postgres/pg_realm_store.h"
#include "store/postgres/pg_store.h"
#include "store/sqlite_compute_store.h"
#include "store/sqlite_data_store.h"
#include "store/sqlite_realm_store.h"
#include "store/sqlite_store.h"
#include "store/store_url.h"

namespace tessera::store {

namespace {

// A PostgreSQL store's open, its error naming the database (without the
// password): "database postgres://u:***@host/db: postgres: cannot connect:
// ...".
template <typename Base, typename Backend>
Result<std::unique_ptr<Base>> InDatabase(
    const StoreUrl& url, Result<std::unique_ptr<Backend>> opened) {
  if (opened.ok()) return std::unique_ptr<Base>(std::move(opened).value());
  return Status(opened.status().code(),
                "database " + url.redacted + ": " + opened.status().message());
}

}  // namespace

Result<std::unique_ptr<Store>> OpenStore(const std::string& url) {
  Result<StoreUrl> parsed = ParseStoreUrl(url);
  if (!parsed.ok()) return parsed.status();
  if (parsed->backend == StoreUrl::Backend::kPostgres) {
    return InDatabase<Store>(*parsed, PgStore::Open(parsed->url));
  }
  Result<std::unique_ptr<SqliteStore>> store = SqliteStore::Open(parsed->path);
  if (!store.ok()) return store.status();
  return std::unique_ptr<Store>(std::move(store).value());
}

Result<std::unique_ptr<compute::ComputeStore>> OpenComputeStore(
    const std::string& url) {
  Result<StoreUrl> parsed = ParseStoreUrl(url);
  if (!parsed.ok()) return parsed.status();
  if (parsed->backend == StoreUrl::Backend::kPostgres) {
    return InDatabase<compute::ComputeStore>(*parsed,
                                             PgComputeStore::Open(parsed->url));
  }
  Result<std::unique_ptr<SqliteComputeStore>> store =
      SqliteComputeStore::Open(parsed->path);
  if (!store.ok()) return store.status();
  return std::unique_ptr<compute::ComputeStore>(std::move(store).value());
}

Result<std::unique_ptr<data::DataStore>> OpenDataStore(const std::string& url) {
  Result<StoreUrl> parsed = ParseStoreUrl(url);
  if (!parsed.ok()) return parsed.status();
  if (parsed->backend == StoreUrl::Backend::kPostgres) {
    return InDatabase<data::DataStore>(*parsed, PgDataStore::Open(parsed->url));
  }
  Result<std::unique_ptr<SqliteDataStore>> store =
      SqliteDataStore::Open(DataFilePath(parsed->path));
  if (!store.ok()) return store.status();
  return std::unique_ptr<data::DataStore>(std::move(store).value());
}

namespace {

// "<stem><suffix><ext>" beside `store_path`; ":memory:" unchanged.
std::string SiblingFilePath(const std::string& store_path,
                            std::string_view suffix) {
  if (store_path == ":memory:") return store_path;
  const std::filesystem::path path(store_path);
  std::filesystem::path file = path.stem();
  file += suffix;
  file += path.extension();
  return (path.parent_path() / file).string();
}

}  // namespace

std::string DataFilePath(const std::string& store_path) {
  return SiblingFilePath(store_path, "-data");
}

Result<std::unique_ptr<realm::RealmStore>> OpenRealmStore(
    const std::string& url) {
  Result<StoreUrl> parsed = ParseStoreUrl(url);
  if (!parsed.ok()) return parsed.status();
  if (parsed->backend == StoreUrl::Backend::kPostgres) {
    return InDatabase<realm::RealmStore>(*parsed,
                                         PgRealmStore::Open(parsed->url));
  }
  Result<std::unique_ptr<SqliteRealmStore>> store =
      SqliteRealmStore::Open(RealmFilePath(parsed->path));
  if (!store.ok()) return store.status();
  return std::unique_ptr<realm::RealmStore>(std::move(store).value());
}

Result<std::unique_ptr<cluster::MachineStore>> OpenMachineStore(
    const std::string& url, int64_t dead_after_ms) {
  Result<StoreUrl> parsed = ParseStoreUrl(url);
  if (!parsed.ok()) return parsed.status();
  if (parsed->backend != StoreUrl::Backend::kPostgres) {
    return Status(StatusCode::kFailedPrecondition,
                  "a cluster of machines needs a postgres:// database; "
                  "SQLite serves one machine");
  }
  pg::PgMachineStoreOptions options;
  options.dead_after_ms = dead_after_ms;
  return InDatabase<cluster::MachineStore>(
      *parsed, pg::PgMachineStore::Open(parsed->url, options));
}

std::string RealmFilePath(const std::string& store_path) {
  return SiblingFilePath(store_path, "-realms");
}

}  // namespace tessera::store
