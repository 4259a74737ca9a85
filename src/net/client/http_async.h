// The asynchronous side of the HTTP client (http_client.h): one request on
// its own connection, http:// or https://, on an io_context.
//
// Threading: call on the io_context's thread; `done` runs there, once.
#ifndef TESSERA_NET_CLIENT_HTTP_ASYNC_H_
#define TESSERA_NET_CLIENT_HTTP_ASYNC_H_

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <functional>

#include "common/status.h"
#include "net/client/http_client.h"
#include "net/client/tls_context.h"
#include "net/client/url.h"

namespace tessera::net::client {

// Sends `request` to `url` at `endpoint` (its resolved address; `url`
// gives the Host header and the name TLS checks), over TLS when `tls` is
// set (it must outlive the call). `done` gets the response of any status,
// kDeadlineExceeded after `timeout`, or kIo naming the step that failed
// ("connect", "tls", "send", "receive").
void AsyncHttpCall(boost::asio::io_context& ioc, boost::asio::ssl::context* tls,
                   const boost::asio::ip::tcp::endpoint& endpoint,
                   const Url& url, HttpRequest request,
                   std::chrono::milliseconds timeout,
                   std::function<void(Result<HttpResponse>)> done);

}  // namespace tessera::net::client

#endif  // TESSERA_NET_CLIENT_HTTP_ASYNC_H_
