// Tests only: a throwaway PostgreSQL cluster (docs/store.md "PostgreSQL"),
// started by the test binary itself: initdb into a fresh directory under
// /dev/shm (fsync off, trust authentication for the user "test"), a
// postmaster on a free 127.0.0.1 port with its socket in that directory.
// Run as root, the server programs run as the postgres user (runuser).
//
// A reaper process holds the read end of a pipe whose write end only this
// process has: when the cluster object goes, or the test binary dies
// (SIGKILL and a crash included), the pipe closes and the reaper stops the
// postmaster (pg_ctl -m immediate) and removes the directory, so no
// server and no files outlive the tests.
#ifndef TESSERA_STORE_POSTGRES_PG_TEST_CLUSTER_H_
#define TESSERA_STORE_POSTGRES_PG_TEST_CLUSTER_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"
#include "store/postgres/pg_conn.h"

namespace tessera::store::pg {

class PgTestCluster {
 public:
  // Starts a cluster. Errors: kUnavailable when the PostgreSQL server
  // programs are missing; kIo with the tail of the server's log otherwise.
  static Result<std::unique_ptr<PgTestCluster>> Start();
  // Stops the server and removes its directory (waits for the reaper).
  ~PgTestCluster();
  PgTestCluster(const PgTestCluster&) = delete;
  PgTestCluster& operator=(const PgTestCluster&) = delete;

  int port() const { return port_; }
  const std::string& dir() const { return dir_; }
  // postgresql://test@127.0.0.1:<port>/<database>
  std::string UrlOf(std::string_view database) const;
  // The URL of the "postgres" database.
  std::string url() const { return UrlOf("postgres"); }

  // Creates a new, empty database (t1, t2, ...) and returns its URL.
  Result<std::string> NewDatabase();

 private:
  PgTestCluster() = default;
  // The reaper: forked once the directory exists.
  Status StartReaper();

  std::string dir_;
  int port_ = 0;
  pid_t reaper_ = -1;
  int reaper_pipe_ = -1;  // the write end
  int databases_ = 0;
  std::unique_ptr<PgConn> admin_;
};

// The test binary's one cluster, started at the first call and stopped at
// exit; null (and `error` set, if given) when it could not start.
PgTestCluster* SharedPgTestCluster(Status* error = nullptr);

}  // namespace tessera::store::pg

#endif  // TESSERA_STORE_POSTGRES_PG_TEST_CLUSTER_H_
