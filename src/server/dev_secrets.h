// Dev-mode secrets: a ticket secret and an admin token generated once per
// app directory and kept in <app>/.tessera/dev-secrets.json (mode 0600),
// so `tessera dev` keeps its token across restarts and `tessera ticket`
// for the same app mints tickets the dev server accepts. Never used by
// `tessera serve`.
#ifndef TESSERA_SERVER_DEV_SECRETS_H_
#define TESSERA_SERVER_DEV_SECRETS_H_

#include <filesystem>
#include <string>

#include "common/status.h"

namespace tessera::server {

inline constexpr char kDevSecretsFile[] = ".tessera/dev-secrets.json";

struct DevSecrets {
  std::string ticket_secret;
  std::string admin_token;
};

std::filesystem::path DevSecretsPath(const std::filesystem::path& app_dir);

// Reads the app's dev secrets. Errors: kNotFound if the file is missing,
// kInvalidArgument if it is malformed, kIo if unreadable.
Result<DevSecrets> ReadDevSecrets(const std::filesystem::path& app_dir);

// Reads them, or generates and writes new ones (creating .tessera/) when
// the file is missing. Errors: as ReadDevSecrets (not kNotFound), kIo when
// the file cannot be written. One process at a time per app directory.
Result<DevSecrets> LoadOrCreateDevSecrets(const std::filesystem::path& app_dir);

}  // namespace tessera::server

#endif  // TESSERA_SERVER_DEV_SECRETS_H_
