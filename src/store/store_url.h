// Parsing the store URL (TESSERA_DATABASE_URL, --database).
#ifndef TESSERA_STORE_STORE_URL_H_
#define TESSERA_STORE_STORE_URL_H_

#include <string>

#include "common/status.h"

namespace tessera::store {

struct StoreUrl {
  enum class Backend { kSqlite, kPostgres };
  Backend backend = Backend::kSqlite;
  std::string path;  // kSqlite: the SQLite file
  // kPostgres: the URL for libpq, its scheme in lower case; and the same
  // with the password (if any) replaced by "***", for messages.
  std::string url;
  std::string redacted;
};

// "sqlite:PATH", "sqlite://PATH" (so "sqlite:///abs/x.db" is absolute) or a
// plain path -> kSqlite; "postgres://..." or "postgresql://..." (any case)
// -> kPostgres (libpq's URI form: user, password, host, port, database,
// ?sslmode=... and the like). Messages never echo the URL beyond its
// scheme, as it may carry a password.
// Errors: kInvalidArgument for other schemes and an empty path.
Result<StoreUrl> ParseStoreUrl(const std::string& url);

// `url` with the password of its userinfo ("user:password@") replaced by
// "***"; a URL without one comes back as it is.
std::string RedactStoreUrl(const std::string& url);

}  // namespace tessera::store

#endif  // TESSERA_STORE_STORE_URL_H_
