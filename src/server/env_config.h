// Reading server settings from the environment (TESSERA_*), for the CLI's
// `dev` and `serve`: flags win over the environment, the environment over
// defaults. Reads getenv; call before starting threads.
#ifndef TESSERA_SERVER_ENV_CONFIG_H_
#define TESSERA_SERVER_ENV_CONFIG_H_

#include <cstdint>
#include <optional>
#include <string>

#include "common/status.h"

namespace tessera::server {

inline constexpr char kEnvHost[] = "TESSERA_HOST";
inline constexpr char kEnvPort[] = "TESSERA_PORT";
inline constexpr char kEnvTicketSecret[] = "TESSERA_SHARD_TICKET_SECRET";
inline constexpr char kEnvAdminToken[] = "TESSERA_ADMIN_TOKEN";
inline constexpr char kEnvDatabaseUrl[] = "TESSERA_DATABASE_URL";
inline constexpr char kEnvSaveSecs[] = "TESSERA_SHARD_SAVE_SECS";
inline constexpr char kEnvCapacity[] = "TESSERA_SHARD_CAPACITY";
inline constexpr char kEnvIoThreads[] = "TESSERA_IO_THREADS";
// Compute (docs/compute.md): scoped API tokens ("scope=token,...") and the
// server-wide policy ceilings (a JSON object of policy fields).
inline constexpr char kEnvApiTokens[] = "TESSERA_API_TOKENS";
inline constexpr char kEnvComputeCeilings[] = "TESSERA_COMPUTE_CEILINGS";

// The variable's value, or nullopt when unset or empty.
std::optional<std::string> EnvString(const char* name);

// `flag` if set, else the variable, else `fallback`.
std::string Setting(const std::optional<std::string>& flag, const char* env,
                    const std::string& fallback);

// As Setting, parsed as an integer in [min, max]. Errors: kInvalidArgument
// naming the variable or flag (`flag_name`) and the accepted range.
Result<int64_t> IntSetting(const std::optional<int64_t>& flag,
                           const char* flag_name, const char* env,
                           int64_t fallback, int64_t min, int64_t max);

}  // namespace tessera::server

#endif  // TESSERA_SERVER_ENV_CONFIG_H_
