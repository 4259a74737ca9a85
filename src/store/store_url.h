// Parsing the store URL (TESSERA_DATABASE_URL, --database).
#ifndef TESSERA_STORE_STORE_URL_H_
#define TESSERA_STORE_STORE_URL_H_

#include <string>

#include "common/status.h"

namespace tessera::store {

struct StoreUrl {
  enum class Backend { kSqlite };
  Backend backend = Backend::kSqlite;
  std::string path;  // the SQLite file
};

// "sqlite:PATH", "sqlite://PATH" (so "sqlite:///abs/x.db" is absolute) or a
// plain path -> kSqlite. Messages never echo the URL beyond its scheme, as
// it may carry a password.
// Errors: kFailedPrecondition for postgres:// and postgresql:// (not yet
// supported); kInvalidArgument for other schemes and an empty path.
Result<StoreUrl> ParseStoreUrl(const std::string& url);

}  // namespace tessera::store

#endif  // TESSERA_STORE_STORE_URL_H_
