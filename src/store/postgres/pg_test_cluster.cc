#include "store/postgres/pg_test_cluster.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pwd.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "common/subprocess.h"

namespace tessera::store::pg {

namespace {

constexpr const char* kBinDir = "/usr/lib/postgresql/15/bin";

// The argv prefix that runs a server program: as the postgres user when we
// are root (the server refuses to run as root).
std::vector<std::string> AsServerUser() {
  if (geteuid() != 0) return {};
  return {"/usr/sbin/runuser", "-u", "postgres", "--"};
}

std::string Bin(const char* program) {
  return std::string(kBinDir) + "/" + program;
}

// A TCP port on 127.0.0.1 that was free a moment ago.
Result<int> FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return IoError(std::string("socket: ") + strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const std::string error = strerror(errno);
    close(fd);
    return IoError("bind a free port: " + error);
  }
  close(fd);
  return static_cast<int>(ntohs(addr.sin_port));
}

// The last lines of the file at `path` (the server's log), for messages.
std::string Tail(const std::string& path) {
  std::ifstream in(path);
  std::stringstream all;
  all << in.rdbuf();
  std::string text = all.str();
  if (text.size() > 1500) text = "..." + text.substr(text.size() - 1500);
  return text;
}

Status Run(const std::vector<std::string>& command, const std::string& log) {
  std::vector<std::string> argv = AsServerUser();
  argv.insert(argv.end(), command.begin(), command.end());
  Result<ProcessResult> ran = RunProcess(argv);
  if (!ran.ok()) return ran.status();
  if (ran->exit_code != 0) {
    return IoError(JoinCommand(argv) + " failed (" +
                   std::to_string(ran->exit_code) + "): " + ran->output +
                   (log.empty() ? "" : "\nserver log: " + Tail(log)));
  }
  return Status::Ok();
}

}  // namespace

Status PgTestCluster::StartReaper() {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    return IoError(std::string("pipe: ") + strerror(errno));
  }
  std::vector<std::string> stop = AsServerUser();
  // The shell reads until the pipe closes, then stops the server (if it
  // runs) and removes the directory.
  std::string script = "cat >/dev/null; ";
  for (const std::string& word : stop) script += word + " ";
  script += Bin("pg_ctl") + " -D " + dir_ +
            "/data -m immediate stop >/dev/null 2>&1; rm -rf " + dir_;
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return IoError(std::string("fork: ") + strerror(errno));
  }
  if (pid == 0) {
    // Only async-signal-safe calls until exec.
    setsid();  // a Ctrl-C of the tests does not stop the cleanup
    dup2(fds[0], 0);
    execl("/bin/sh", "sh", "-c", script.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[0]);
  reaper_ = pid;
  reaper_pipe_ = fds[1];
  return Status::Ok();
}

Result<std::unique_ptr<PgTestCluster>> PgTestCluster::Start() {
  if (access(Bin("initdb").c_str(), X_OK) != 0) {
    return Status(StatusCode::kUnavailable,
                  std::string("no PostgreSQL server programs in ") + kBinDir +
                      " (install postgresql-15)");
  }
  std::string tmpl = "/dev/shm/tessera-pg-XXXXXX";
  if (access("/dev/shm", W_OK) != 0) tmpl = "/tmp/tessera-pg-XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr) {
    return IoError("mkdtemp " + tmpl + ": " + strerror(errno));
  }
  std::unique_ptr<PgTestCluster> cluster(new PgTestCluster());
  cluster->dir_ = tmpl;
  TESSERA_RETURN_IF_ERROR(cluster->StartReaper());
  if (geteuid() == 0) {
    const passwd* pw = getpwnam("postgres");
    if (pw == nullptr) {
      return Status(StatusCode::kUnavailable, "no postgres user");
    }
    if (chown(cluster->dir_.c_str(), pw->pw_uid, pw->pw_gid) != 0) {
      return IoError("chown " + cluster->dir_ + ": " + strerror(errno));
    }
  }
  const std::string data = cluster->dir_ + "/data";
  const std::string log = cluster->dir_ + "/log";
  TESSERA_RETURN_IF_ERROR(
      Run({Bin("initdb"), "-D", data, "-U", "test", "-A", "trust", "-E", "UTF8",
           "--locale=C", "--no-sync", "--no-instructions"},
          ""));
  // A port taken between FreePort and the server's bind: try another.
  Status started;
  for (int attempt = 0; attempt < 3; ++attempt) {
    Result<int> port = FreePort();
    if (!port.ok()) return port.status();
    cluster->port_ = *port;
    started = Run({Bin("pg_ctl"), "-D", data, "-l", log, "-w", "-t", "30", "-o",
                   "-p " + std::to_string(*port) + " -k " + cluster->dir_ +
                       " -c listen_addresses=127.0.0.1 -c fsync=off"
                       " -c synchronous_commit=off -c full_page_writes=off",
                   "start"},
                  log);
    if (started.ok()) break;
  }
  TESSERA_RETURN_IF_ERROR(started);
  Result<std::unique_ptr<PgConn>> admin = PgConn::Connect(cluster->url());
  if (!admin.ok()) return admin.status();
  cluster->admin_ = std::move(admin).value();
  return cluster;
}

PgTestCluster::~PgTestCluster() {
  admin_.reset();
  if (reaper_pipe_ >= 0) close(reaper_pipe_);
  if (reaper_ > 0) {
    int status = 0;
    while (waitpid(reaper_, &status, 0) < 0 && errno == EINTR) {
    }
  }
}

std::string PgTestCluster::UrlOf(std::string_view database) const {
  return "postgresql://test@127.0.0.1:" + std::to_string(port_) + "/" +
         std::string(database);
}

Result<std::string> PgTestCluster::NewDatabase() {
  const std::string name = "t" + std::to_string(++databases_);
  TESSERA_RETURN_IF_ERROR(
      admin_->RunScript("CREATE DATABASE " + name, "create database " + name));
  return UrlOf(name);
}

PgTestCluster* SharedPgTestCluster(Status* error) {
  // Destroyed (the server stopped) at exit; the reaper covers the exits
  // that run no destructors.
  static Status start_error;
  static std::unique_ptr<PgTestCluster> cluster = [] {
    Result<std::unique_ptr<PgTestCluster>> started = PgTestCluster::Start();
    if (!started.ok()) {
      start_error = started.status();
      return std::unique_ptr<PgTestCluster>();
    }
    return std::move(started).value();
  }();
  if (cluster == nullptr && error != nullptr) *error = start_error;
  return cluster.get();
}

}  // namespace tessera::store::pg
