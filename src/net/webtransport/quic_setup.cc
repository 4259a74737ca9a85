#include "net/webtransport/quic_setup.h"

#include <gnutls/crypto.h>
#include <ngtcp2/ngtcp2_crypto_gnutls.h>

#include <string>

#include "net/webtransport/dev_cert.h"

namespace tessera::net::wt {

Result<gnutls_session_t> MakeServerTlsSession(const TlsIdentity& identity) {
  gnutls_session_t tls = nullptr;
  int rv = gnutls_init(&tls, GNUTLS_SERVER | GNUTLS_ENABLE_EARLY_DATA |
                                 GNUTLS_NO_END_OF_EARLY_DATA);
  static const char kPriority[] =
      "NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:+AES-128-GCM:+AES-256-GCM:"
      "+CHACHA20-POLY1305:%DISABLE_TLS13_COMPAT_MODE";
  static const gnutls_datum_t kAlpn = {
      reinterpret_cast<unsigned char*>(const_cast<char*>("h3")), 2};
  if (rv == 0) rv = gnutls_priority_set_direct(tls, kPriority, nullptr);
  if (rv == 0) rv = ngtcp2_crypto_gnutls_configure_server_session(tls);
  if (rv == 0) {
    rv = gnutls_credentials_set(
        tls, GNUTLS_CRD_CERTIFICATE,
        static_cast<gnutls_certificate_credentials_t>(identity.credentials()));
  }
  if (rv == 0) {
    rv = gnutls_alpn_set_protocols(tls, &kAlpn, 1, GNUTLS_ALPN_MANDATORY);
  }
  if (rv != 0) {
    if (tls != nullptr) gnutls_deinit(tls);
    return Internal(std::string("gnutls: ") + gnutls_strerror(rv));
  }
  return tls;
}

ngtcp2_transport_params ServerTransportParams(const ngtcp2_cid& original_dcid,
                                              int64_t idle_timeout_ms) {
  ngtcp2_transport_params params;
  ngtcp2_transport_params_default(&params);
  params.initial_max_streams_bidi = 16;
  params.initial_max_streams_uni = 16;
  params.initial_max_stream_data_bidi_local = 256 * 1024;
  params.initial_max_stream_data_bidi_remote = 256 * 1024;
  params.initial_max_stream_data_uni = 256 * 1024;
  params.initial_max_data = 1024 * 1024;
  params.max_idle_timeout =
      static_cast<ngtcp2_duration>(idle_timeout_ms) * NGTCP2_MILLISECONDS;
  params.max_datagram_frame_size = 65535;
  params.original_dcid = original_dcid;
  params.stateless_reset_token_present = 1;
  (void)gnutls_rnd(GNUTLS_RND_RANDOM, params.stateless_reset_token,
                   sizeof params.stateless_reset_token);
  return params;
}

}  // namespace tessera::net::wt
