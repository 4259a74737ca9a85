// Server: the acceptor, the io threads and the shared ServerContext; HTTP
// work is in http_session.cc, WebSocket connections in ws_connection.cc
// with the shard protocol in shard_session.cc, the fan-out of ticks in
// hub.cc and shard_fanout.cc.
//
// Threading: options.io_threads threads, each running its own io_context
// (connections are spread over them at accept). The
// acceptor lives on its own strand, each connection on its own strand. The
// controlling thread calls Start/Stop; Stop waits for the sessions to
// close, stops the io_context, joins the threads, shuts the hub down and
// destroys the io_context (releasing whatever sessions remain) in that
// order, so no handler runs after Stop returns.
#include "net/server.h"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <chrono>
#include <cstdio>
#include <exception>
#include <future>
#include <optional>
#include <thread>

#include "net/http_session.h"
#include "net/hub.h"
#include "net/server_context.h"
#include "net/webtransport/dev_cert.h"
#include "net/webtransport/wt_server.h"
#include "net/webtransport/wt_shard_acceptor.h"
#include "shard/kind_registry.h"

namespace tessera::net {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

// ---- ServerContext (declared in server_context.h) ----

bool ServerContext::Stopping(int* code, std::string* reason) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (!stopping_) return false;
  if (code != nullptr) *code = stop_code_;
  if (reason != nullptr) *reason = stop_reason_;
  return true;
}

void ServerContext::BeginStop(int code, std::string reason) {
  std::lock_guard<std::mutex> lock(mu_);
  stopping_ = true;
  stop_code_ = code;
  stop_reason_ = std::move(reason);
}

void ServerContext::AddSession(const TopicSubscriber* key,
                               std::weak_ptr<TopicSubscriber> session) {
  std::lock_guard<std::mutex> lock(mu_);
  if (sessions_.emplace(key, std::move(session)).second) {
    live_sessions_.fetch_add(1);
    metrics.connections->Add(1);
  }
}

void ServerContext::RemoveSession(const TopicSubscriber* key) {
  std::lock_guard<std::mutex> lock(mu_);
  if (sessions_.erase(key) > 0) {
    live_sessions_.fetch_sub(1);
    metrics.connections->Add(-1);
  }
}

size_t ServerContext::CloseAllSessions(int code, const std::string& reason) {
  std::vector<std::shared_ptr<TopicSubscriber>> live;
  {
    std::lock_guard<std::mutex> lock(mu_);
    live.reserve(sessions_.size());
    for (const auto& [key, weak] : sessions_) {
      if (auto s = weak.lock()) live.push_back(std::move(s));
    }
  }
  for (const auto& s : live) s->PostClose(code, reason);
  return live.size();
}

std::function<std::optional<shard::KindConfig>(std::string_view kind)>
FindKindIn(const shard::KindRegistry* kinds) {
  return [kinds](std::string_view name) -> std::optional<shard::KindConfig> {
    if (kinds == nullptr) return std::nullopt;
    std::shared_ptr<const shard::KindEntry> entry = kinds->Find(name);
    if (entry == nullptr) return std::nullopt;
    return entry->config;
  };
}

// ---- Server ----

struct Server::Impl {
  enum class State { kNew, kRunning, kStopped };

  Impl(ServerOptions opts, std::string secret, const Router& router,
       ShardGateway* shards, Metrics* metrics_in)
      : options(std::move(opts)),
        own_metrics(metrics_in == nullptr ? std::make_unique<Metrics>()
                                          : nullptr),
        iocs(MakeContexts(options.io_threads)),
        hub(std::make_unique<Hub>(*iocs.front())),
        ctx(options, std::move(secret), router, shards,
            metrics_in != nullptr ? *metrics_in : *own_metrics, *hub),
        shard_link(ctx.fanout, ctx.metrics,
                   [this] { return ctx.live_sessions(); }) {}

  // One single-threaded io_context per io thread: a connection lives on
  // one of them (round robin at accept), so posting a tick's frames to its
  // sessions wakes each thread once per batch instead of handing every
  // handler between threads.
  static std::vector<std::unique_ptr<asio::io_context>> MakeContexts(int n) {
    std::vector<std::unique_ptr<asio::io_context>> out;
    for (int i = 0; i < std::max(n, 1); ++i) {
      out.push_back(std::make_unique<asio::io_context>(1));
    }
    return out;
  }
  asio::io_context& NextContext() {
    return *iocs[next_context++ % iocs.size()];
  }

  void DoAccept();
  void RunIo(asio::io_context& ioc);
  Status StartWebTransport();

  const ServerOptions options;
  std::unique_ptr<Metrics> own_metrics;
  std::vector<std::unique_ptr<asio::io_context>> iocs;
  size_t next_context = 0;   // on the acceptor's strand
  std::unique_ptr<Hub> hub;  // before ctx, which refers to it
  ServerContext ctx;
  ShardConnections shard_link;  // the shards' events in, Connections out
  std::unique_ptr<tcp::acceptor> acceptor;           // on its own strand
  std::unique_ptr<asio::steady_timer> accept_retry;  // same strand
  std::vector<asio::executor_work_guard<asio::io_context::executor_type>> work;
  std::vector<std::thread> threads;
  // The WebTransport port, on the first io context.
  std::unique_ptr<wt::TlsIdentity> wt_tls;
  std::unique_ptr<wt::ShardWtAcceptor> wt_acceptor;
  std::unique_ptr<wt::WtServer> wt_server;
  uint16_t port = 0;
  State state = State::kNew;
};

void Server::Impl::DoAccept() {
  // On the acceptor's strand.
  acceptor->async_accept(
      asio::make_strand(NextContext()),
      [this](boost::system::error_code ec, tcp::socket socket) {
        if (!acceptor->is_open()) return;  // Stop
        if (ec) {
          if (ec == asio::error::operation_aborted) return;
          // E.g. out of file descriptors: back off instead of spinning.
          accept_retry->expires_after(std::chrono::milliseconds(50));
          accept_retry->async_wait([this](boost::system::error_code wait_ec) {
            if (!wait_ec && acceptor->is_open()) DoAccept();
          });
          return;
        }
        boost::system::error_code opt_ec;
        socket.set_option(tcp::no_delay(true), opt_ec);
        if (options.socket_send_buffer_bytes > 0) {
          socket.set_option(asio::socket_base::send_buffer_size(
                                options.socket_send_buffer_bytes),
                            opt_ec);
        }
        RunHttpSession(ctx, std::move(socket));
        DoAccept();
      });
}

Status Server::Impl::StartWebTransport() {
  Result<std::unique_ptr<wt::TlsIdentity>> tls =
      wt::TlsIdentity::MakeDevelopment(ctx.UnixNow());
  if (!tls.ok()) return tls.status();
  wt_tls = std::move(tls).value();
  wt_acceptor =
      std::make_unique<wt::ShardWtAcceptor>(ctx, iocs.front()->get_executor());
  wt::WtServer::Options wt_options;
  wt_options.host = options.host;
  wt_options.port = static_cast<uint16_t>(options.webtransport_port);
  wt_server = std::make_unique<wt::WtServer>(*iocs.front(), wt_options, *wt_tls,
                                             *wt_acceptor);
  Status started = wt_server->Start();
  if (!started.ok()) {
    wt_server.reset();
    wt_acceptor.reset();
    wt_tls.reset();
  }
  return started;
}

void Server::Impl::RunIo(asio::io_context& ioc) {
  for (;;) {
    try {
      ioc.run();
      return;
    } catch (const std::exception& e) {
      // A handler must not throw; keep serving the other connections.
      std::fprintf(stderr, "tessera: io thread caught: %s\n", e.what());
    }
  }
}

Server::Server(ServerOptions options, std::string ticket_secret,
               const Router& router, ShardGateway* shards, Metrics* metrics)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(ticket_secret),
                                   router, shards, metrics)) {}

Server::~Server() { Stop(); }

Status Server::Start() {
  Impl& im = *impl_;
  if (im.state != Impl::State::kNew) {
    return Status(StatusCode::kFailedPrecondition,
                  "the server was already started");
  }
  const std::string where =
      im.options.host + ":" + std::to_string(im.options.port);
  boost::system::error_code ec;
  tcp::endpoint endpoint;
  asio::ip::address address = asio::ip::make_address(im.options.host, ec);
  if (!ec) {
    endpoint = tcp::endpoint(address, im.options.port);
  } else {
    tcp::resolver resolver(*im.iocs.front());
    auto results =
        resolver.resolve(im.options.host, std::to_string(im.options.port), ec);
    if (ec || results.empty()) {
      return IoError("cannot resolve " + where + ": " +
                     (ec ? ec.message() : "no address"));
    }
    endpoint = results.begin()->endpoint();
  }
  auto strand = asio::make_strand(*im.iocs.front());
  im.acceptor = std::make_unique<tcp::acceptor>(strand);
  im.accept_retry = std::make_unique<asio::steady_timer>(strand);
  auto fail = [&](const char* what) {
    Status s = IoError(std::string("cannot ") + what + " " + where + ": " +
                       ec.message());
    im.accept_retry.reset();
    im.acceptor.reset();
    return s;
  };
  if (im.acceptor->open(endpoint.protocol(), ec)) return fail("open");
  if (im.acceptor->set_option(tcp::acceptor::reuse_address(true), ec)) {
    return fail("configure");
  }
  if (im.acceptor->bind(endpoint, ec)) return fail("bind");
  if (im.acceptor->listen(asio::socket_base::max_listen_connections, ec)) {
    return fail("listen on");
  }
  im.port = im.acceptor->local_endpoint(ec).port();
  if (im.options.webtransport_port >= 0) {
    if (Status wt = im.StartWebTransport(); !wt.ok()) {
      im.accept_retry.reset();
      im.acceptor.reset();
      return wt;
    }
  }
  im.state = Impl::State::kRunning;
  for (auto& ioc : im.iocs) im.work.push_back(asio::make_work_guard(*ioc));
  asio::post(strand, [&im] { im.DoAccept(); });
  for (auto& ioc : im.iocs) {
    im.threads.emplace_back([&im, &ioc = *ioc] { im.RunIo(ioc); });
  }
  return Status::Ok();
}

uint16_t Server::port() const { return impl_->port; }

uint16_t Server::webtransport_port() const {
  return impl_->wt_server ? impl_->wt_server->port() : 0;
}

std::string Server::webtransport_cert_sha256() const {
  return impl_->wt_tls ? impl_->wt_tls->sha256() : std::string();
}

void Server::Stop(int code, std::string_view reason) {
  Impl& im = *impl_;
  if (im.state == Impl::State::kStopped) return;
  const bool was_running = im.state == Impl::State::kRunning;
  im.state = Impl::State::kStopped;
  im.ctx.BeginStop(code, std::string(reason));
  if (was_running) {
    asio::post(im.acceptor->get_executor(), [&im] {
      boost::system::error_code ec;
      im.acceptor->close(ec);
      im.accept_retry->cancel();
    });
    im.ctx.CloseAllSessions(code, std::string(reason));
    // Give clients the time to answer the close frames.
    const int64_t deadline_us =
        im.ctx.clock.NowUs() +
        std::max<int64_t>(im.options.stop_timeout_ms, 0) * 1000;
    while (im.ctx.live_sessions() > 0 && im.ctx.clock.NowUs() < deadline_us) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (im.wt_server) {
      // On its io thread: the close packets go out before it stops.
      std::promise<void> done;
      asio::post(*im.iocs.front(), [&] {
        im.wt_server->Stop(static_cast<uint32_t>(code), reason);
        done.set_value();
      });
      done.get_future().wait();
    }
    im.work.clear();
    for (auto& ioc : im.iocs) ioc->stop();
    for (std::thread& t : im.threads) t.join();
    im.threads.clear();
  }
  im.wt_server.reset();
  im.wt_acceptor.reset();
  // Release the hub's sessions and strands, then every pending handler,
  // while the context they use is alive.
  im.hub->Shutdown();
  im.accept_retry.reset();
  im.acceptor.reset();
  // The first context first: the hub's jobs on it may hold connections of
  // the others; a connection's own handlers only hold connections of its
  // own context.
  for (auto& ioc : im.iocs) ioc.reset();
  im.iocs.clear();
}

ShardConnections& Server::shards() { return impl_->shard_link; }

}  // namespace tessera::net
