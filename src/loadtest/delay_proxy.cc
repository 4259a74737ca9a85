#include "loadtest/delay_proxy.h"

#include <algorithm>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <cstring>
#include <deque>
#include <random>
#include <string>
#include <vector>

namespace tessera::loadtest {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

std::chrono::microseconds DrawDelay(const DelayProxyOptions& options,
                                    std::mt19937_64& rng) {
  auto offset = options.delay;
  if (options.jitter.count() > 0) {
    std::uniform_int_distribution<int64_t> jitter(-options.jitter.count(),
                                                  options.jitter.count());
    offset += std::chrono::microseconds(jitter(rng));
  }
  return std::max(offset, std::chrono::microseconds(0));
}

// One proxied connection: two pipes, client -> target and target -> client.
class DelayProxy::Link : public std::enable_shared_from_this<Link> {
 public:
  Link(tcp::socket client, const DelayProxyOptions& options, uint64_t seed)
      : options_(options),
        client_(std::move(client)),
        server_(client_.get_executor()),
        rng_(seed),
        up_(client_, server_),
        down_(server_, client_) {}

  void Start() {
    server_.async_connect(options_.target, [self = shared_from_this()](
                                               boost::system::error_code ec) {
      if (ec) return self->Abort();
      boost::system::error_code ignored;
      self->client_.set_option(tcp::no_delay(true), ignored);
      self->server_.set_option(tcp::no_delay(true), ignored);
      self->Read(self->up_);
      self->Read(self->down_);
    });
  }

  // Drops both sockets now (any thread: posts to the link's executor).
  void Close() {
    asio::post(client_.get_executor(),
               [self = shared_from_this()] { self->Abort(); });
  }

 private:
  static constexpr size_t kReadBytes = 64 * 1024;
  // Smaller reads are copied out, so the read buffer can be reused.
  static constexpr size_t kCopyBelow = 4 * 1024;
  // The most chunks written at once (one gather write).
  static constexpr size_t kMaxGather = 32;

  struct Chunk {
    std::unique_ptr<char[]> data;
    size_t size = 0;
    Clock::time_point release;
  };
  struct Pipe {
    Pipe(tcp::socket& from, tcp::socket& to)
        : from(from), to(to), timer(from.get_executor()) {}
    tcp::socket& from;
    tcp::socket& to;
    asio::steady_timer timer;
    std::unique_ptr<char[]> reading;  // the buffer of the pending read
    std::deque<Chunk> queue;
    size_t in_write = 0;  // chunks at the queue's front being written
    Clock::time_point last_release;
    bool writing = false;
    bool eof = false;
  };

  Clock::time_point ReleaseTime(Pipe& pipe, Clock::time_point now) {
    const Clock::time_point release =
        std::max(now + DrawDelay(options_, rng_), pipe.last_release);
    pipe.last_release = release;
    return release;
  }

  void Read(Pipe& pipe) {
    if (!pipe.reading) pipe.reading.reset(new char[kReadBytes]);
    pipe.from.async_read_some(
        asio::buffer(pipe.reading.get(), kReadBytes),
        [self = shared_from_this(), &pipe](boost::system::error_code ec,
                                           size_t n) {
          if (ec) {
            pipe.eof = true;
            if (!pipe.writing) self->Flush(pipe);
            return;
          }
          Chunk chunk;
          chunk.size = n;
          chunk.release = self->ReleaseTime(pipe, Clock::now());
          if (n < kCopyBelow) {
            chunk.data.reset(new char[n]);
            std::memcpy(chunk.data.get(), pipe.reading.get(), n);
          } else {
            chunk.data = std::move(pipe.reading);
          }
          pipe.queue.push_back(std::move(chunk));
          if (!pipe.writing) self->Flush(pipe);
          self->Read(pipe);
        });
  }

  // Writes the queue's chunks, each at its release time (those due
  // together in one write); passes the end of stream on once the queue is
  // empty.
  void Flush(Pipe& pipe) {
    if (aborted_) return;
    if (pipe.queue.empty()) {
      pipe.writing = false;
      if (pipe.eof) {
        boost::system::error_code ignored;
        pipe.to.shutdown(tcp::socket::shutdown_send, ignored);
        if (up_.eof && down_.eof && up_.queue.empty() && down_.queue.empty()) {
          Abort();
        }
      }
      return;
    }
    pipe.writing = true;
    pipe.timer.expires_at(pipe.queue.front().release);
    pipe.timer.async_wait([self = shared_from_this(),
                           &pipe](boost::system::error_code ec) {
      if (ec || self->aborted_) return;
      const Clock::time_point now = Clock::now();
      std::vector<asio::const_buffer> buffers;
      for (const Chunk& chunk : pipe.queue) {
        if (buffers.size() == kMaxGather ||
            (!buffers.empty() && chunk.release > now)) {
          break;
        }
        buffers.emplace_back(chunk.data.get(), chunk.size);
      }
      pipe.in_write = buffers.size();
      asio::async_write(pipe.to, buffers,
                        [self, &pipe](boost::system::error_code ec, size_t) {
                          if (ec) return self->Abort();
                          for (; pipe.in_write > 0; --pipe.in_write) {
                            pipe.queue.pop_front();
                          }
                          self->Flush(pipe);
                        });
    });
  }

  void Abort() {
    if (aborted_) return;
    aborted_ = true;
    boost::system::error_code ignored;
    up_.timer.cancel();
    down_.timer.cancel();
    client_.close(ignored);
    server_.close(ignored);
  }

  const DelayProxyOptions options_;
  tcp::socket client_;
  tcp::socket server_;
  std::mt19937_64 rng_;
  Pipe up_;
  Pipe down_;
  bool aborted_ = false;
};

DelayProxy::DelayProxy(std::vector<asio::io_context*> iocs,
                       DelayProxyOptions options)
    : iocs_(std::move(iocs)), options_(options), acceptor_(*iocs_.front()) {}

DelayProxy::~DelayProxy() = default;

Result<std::unique_ptr<DelayProxy>> DelayProxy::Start(
    std::vector<asio::io_context*> iocs, DelayProxyOptions options) {
  if (iocs.empty()) return InvalidArgument("the proxy needs an io_context");
  if (options.delay.count() < 0 || options.jitter.count() < 0) {
    return InvalidArgument("the network delay and jitter must be >= 0");
  }
  std::unique_ptr<DelayProxy> proxy(new DelayProxy(std::move(iocs), options));
  boost::system::error_code ec;
  const tcp::endpoint local(asio::ip::make_address("127.0.0.1"), 0);
  proxy->acceptor_.open(local.protocol(), ec);
  if (!ec) proxy->acceptor_.bind(local, ec);
  if (!ec)
    proxy->acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (!ec) proxy->endpoint_ = proxy->acceptor_.local_endpoint(ec);
  if (ec) return IoError("the delay proxy cannot listen: " + ec.message());
  asio::post(*proxy->iocs_.front(), [p = proxy.get()] { p->Accept(); });
  return proxy;
}

void DelayProxy::Accept() {
  const uint64_t n = connections_.load();
  asio::io_context& ioc = *iocs_[n % iocs_.size()];
  acceptor_.async_accept(
      ioc, [this, &ioc](boost::system::error_code ec, tcp::socket socket) {
        if (ec == asio::error::operation_aborted || !acceptor_.is_open())
          return;
        if (!ec) {
          const uint64_t index = connections_.fetch_add(1);
          auto link = std::make_shared<Link>(std::move(socket), options_,
                                             options_.seed * 1000003 + index);
          {
            std::lock_guard<std::mutex> lock(mu_);
            if (!accepting_) return;
            std::erase_if(links_, [](const std::weak_ptr<Link>& l) {
              return l.expired();
            });
            links_.push_back(link);
          }
          asio::post(ioc, [link] { link->Start(); });
        }
        Accept();
      });
}

void DelayProxy::StopAccepting() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!accepting_) return;
    accepting_ = false;
  }
  asio::post(*iocs_.front(), [this] {
    boost::system::error_code ignored;
    acceptor_.close(ignored);
  });
}

void DelayProxy::Stop() {
  StopAccepting();
  std::vector<std::weak_ptr<Link>> links;
  {
    std::lock_guard<std::mutex> lock(mu_);
    links.swap(links_);
  }
  for (const auto& weak : links) {
    if (auto link = weak.lock()) link->Close();
  }
}

}  // namespace tessera::loadtest
