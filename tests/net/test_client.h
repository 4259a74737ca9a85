// The tests' names for the client library (src/net/client): the blocking
// protocol-v1 WebSocket client and the HTTP client, as used by the tests
// of the in-process server (tests/net), the end-to-end tests of the real
// binary (tests/e2e) and bench/net.
#ifndef TESSERA_TESTS_NET_TEST_CLIENT_H_
#define TESSERA_TESTS_NET_TEST_CLIENT_H_

#include "net/client/blocking_client.h"
#include "net/client/http_client.h"
#include "net/client/url.h"

namespace tessera::net::testing {

using TestClient = client::BlockingClient;
using client::ClientEvent;
using client::ClientOptions;
using client::CloseInfo;
using client::HttpCall;
using client::HttpConnection;
using HttpResult = client::HttpResponse;
using client::PercentEncode;

}  // namespace tessera::net::testing

#endif  // TESSERA_TESTS_NET_TEST_CLIENT_H_
