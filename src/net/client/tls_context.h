// The TLS context the clients take for https:// and wss://
// (boost::asio::ssl::context), declared without its heavy header.
#ifndef TESSERA_NET_CLIENT_TLS_CONTEXT_H_
#define TESSERA_NET_CLIENT_TLS_CONTEXT_H_

namespace boost::asio::ssl {
class context;
}  // namespace boost::asio::ssl

#endif  // TESSERA_NET_CLIENT_TLS_CONTEXT_H_
