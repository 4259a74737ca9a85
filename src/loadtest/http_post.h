// One asynchronous HTTP/1.1 POST of a JSON body (http:// or https://), for
// the bots' join requests. Beast stays inside http_post.cc.
//
// Threading: call on the io_context's thread; `done` runs there.
#ifndef TESSERA_LOADTEST_HTTP_POST_H_
#define TESSERA_LOADTEST_HTTP_POST_H_

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <functional>
#include <string>

#include "common/status.h"
#include "loadtest/url.h"

namespace boost::asio::ssl {
class context;
}  // namespace boost::asio::ssl

namespace tessera::loadtest {

struct HttpReply {
  int status = 0;
  std::string body;
};

// POSTs `body` (application/json) to `url` at `endpoint` (its resolved
// address), over TLS when `tls` is set (it must outlive the call). `done`
// gets the reply of any status, kDeadlineExceeded after `timeout`, or kIo
// naming the step that failed.
void AsyncPostJson(boost::asio::io_context& ioc, boost::asio::ssl::context* tls,
                   const boost::asio::ip::tcp::endpoint& endpoint,
                   const Url& url, std::string body,
                   std::chrono::milliseconds timeout,
                   std::function<void(Result<HttpReply>)> done);

}  // namespace tessera::loadtest

#endif  // TESSERA_LOADTEST_HTTP_POST_H_
