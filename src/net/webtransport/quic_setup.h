// What a new server QUIC connection is set up with: its GnuTLS session
// (TLS 1.3 only, ALPN "h3" required, the port's certificate, configured
// for ngtcp2's crypto callbacks) and its transport parameters.
#ifndef TESSERA_NET_WEBTRANSPORT_QUIC_SETUP_H_
#define TESSERA_NET_WEBTRANSPORT_QUIC_SETUP_H_

#include <gnutls/gnutls.h>
#include <ngtcp2/ngtcp2.h>

#include <cstdint>

#include "common/status.h"

namespace tessera::net::wt {

class TlsIdentity;

// A new session the caller frees with gnutls_deinit. Errors: kInternal
// with GnuTLS's text.
Result<gnutls_session_t> MakeServerTlsSession(const TlsIdentity& identity);

// The limits tessera offers a browser: a few streams, 256 KiB per stream,
// 1 MiB per connection, datagrams (without max_datagram_frame_size > 0 a
// browser sends none), a fresh stateless reset token.
ngtcp2_transport_params ServerTransportParams(const ngtcp2_cid& original_dcid,
                                              int64_t idle_timeout_ms);

}  // namespace tessera::net::wt

#endif  // TESSERA_NET_WEBTRANSPORT_QUIC_SETUP_H_
