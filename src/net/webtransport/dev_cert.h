// The TLS identity of the WebTransport port. For development: a fresh
// ECDSA P-256 key and a self-signed certificate for localhost valid for
// less than 14 days, the kind a browser accepts by hash
// (`serverCertificateHashes`) without any certificate authority. Made with
// GnuTLS when the server starts.
#ifndef TESSERA_NET_WEBTRANSPORT_DEV_CERT_H_
#define TESSERA_NET_WEBTRANSPORT_DEV_CERT_H_

#include <cstdint>
#include <memory>
#include <string>

#include "common/status.h"

namespace tessera::net::wt {

// Browsers accept certificates by hash only for validity periods up to 14
// days; tessera's development certificate is valid for 10.
inline constexpr int64_t kDevCertValiditySecs = 10 * 24 * 3600;

class TlsIdentity {
 public:
  // A new key and certificate, valid from a minute before `unix_now_secs`
  // for `valid_secs` (<= 14 days). Errors: kInvalidArgument for a longer
  // validity, kInternal when GnuTLS fails.
  static Result<std::unique_ptr<TlsIdentity>> MakeDevelopment(
      int64_t unix_now_secs, int64_t valid_secs = kDevCertValiditySecs);
  ~TlsIdentity();
  TlsIdentity(const TlsIdentity&) = delete;
  TlsIdentity& operator=(const TlsIdentity&) = delete;

  // The gnutls_certificate_credentials_t for the server's sessions.
  void* credentials() const { return credentials_; }
  // SHA-256 of the certificate's DER bytes (32 bytes).
  const std::string& sha256() const { return sha256_; }
  const std::string& der() const { return der_; }
  int64_t not_after_unix() const { return not_after_; }

 private:
  TlsIdentity() = default;
  void* credentials_ = nullptr;
  std::string der_;
  std::string sha256_;
  int64_t not_after_ = 0;
};

}  // namespace tessera::net::wt

#endif  // TESSERA_NET_WEBTRANSPORT_DEV_CERT_H_
