// The realm protocol's sessions (docs/protocol.md "Realms
// (tessera.realm.v1)"): WebSockets at /realm/<kind>/<key>, served by a
// realm::RealmHost. The realm service registers factory() on the router
// under kRealmPathPrefix.
#ifndef TESSERA_NET_REALM_SESSIONS_H_
#define TESSERA_NET_REALM_SESSIONS_H_

#include <memory>

#include "realm/host.h"
#include "realm/kind.h"

namespace tessera::net {

class SessionFactory;

inline constexpr char kRealmPathPrefix[] = "/realm/";

// WebSocket close codes of realm connections beyond the shared ones
// (connections.h).
inline constexpr int kCloseInsufficientSecurity = 4012;
inline constexpr int kCloseLimitsExceeded = 4013;

class RealmSessions {
 public:
  // `host` is not owned and must outlive every session. `floor`: the
  // deployment's security floor, which raises (never lowers) each kind's.
  RealmSessions(realm::RealmHost& host, realm::SecurityFloor floor);
  ~RealmSessions();
  RealmSessions(const RealmSessions&) = delete;
  RealmSessions& operator=(const RealmSessions&) = delete;

  const SessionFactory& factory() const { return *factory_; }

 private:
  std::unique_ptr<SessionFactory> factory_;
};

}  // namespace tessera::net

#endif  // TESSERA_NET_REALM_SESSIONS_H_
