// What http_client.cc and ws_client.cc share (internal to the library):
// the plain and TLS byte streams, the client side of TLS setup, and how a
// failed step becomes a Status.
#ifndef TESSERA_NET_CLIENT_STREAMS_H_
#define TESSERA_NET_CLIENT_STREAMS_H_

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/ssl.hpp>
#include <string>
#include <string_view>

#include "common/status.h"

namespace tessera::net::client::internal {

using PlainStream = boost::beast::tcp_stream;
using TlsStream = boost::beast::ssl_stream<boost::beast::tcp_stream>;

// A `Stream` over TCP, or over TLS with `tls` when `kTls`.
template <typename Stream, bool kTls>
Stream MakeStream(boost::asio::io_context& ioc,
                  boost::asio::ssl::context* tls) {
  if constexpr (kTls) {
    return Stream(ioc, *tls);
  } else {
    (void)tls;
    return Stream(ioc);
  }
}

// Sets SNI and the certificate's host-name check for `host` on `stream`,
// before its handshake. Returns the error, if any.
inline boost::beast::error_code PrepareTls(TlsStream& stream,
                                           const std::string& host) {
  if (!SSL_set_tlsext_host_name(stream.native_handle(), host.c_str())) {
    return boost::beast::error_code(static_cast<int>(::ERR_get_error()),
                                    boost::asio::error::get_ssl_category());
  }
  stream.set_verify_callback(boost::asio::ssl::host_name_verification(host));
  return {};
}

// kDeadlineExceeded "<step>: timed out" for a stream deadline, else kIo
// "<step>: <message>".
inline Status StepFailed(std::string_view step,
                         const boost::beast::error_code& ec) {
  if (ec == boost::beast::error::timeout) {
    return Status(StatusCode::kDeadlineExceeded,
                  std::string(step) + ": timed out");
  }
  return IoError(std::string(step) + ": " + ec.message());
}

}  // namespace tessera::net::client::internal

#endif  // TESSERA_NET_CLIENT_STREAMS_H_
