#include "net/webtransport/dev_cert.h"

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

#include <cstring>

namespace tessera::net::wt {
namespace {

constexpr int64_t kMaxHashValiditySecs = 14 * 24 * 3600;

Status Failed(const char* what, int rv) {
  return Internal(std::string("development certificate: ") + what + ": " +
                  gnutls_strerror(rv));
}

// Frees what GnuTLS allocated, on every path out.
struct Parts {
  gnutls_x509_privkey_t key = nullptr;
  gnutls_x509_crt_t crt = nullptr;
  ~Parts() {
    if (crt != nullptr) gnutls_x509_crt_deinit(crt);
    if (key != nullptr) gnutls_x509_privkey_deinit(key);
  }
};

}  // namespace

Result<std::unique_ptr<TlsIdentity>> TlsIdentity::MakeDevelopment(
    int64_t unix_now_secs, int64_t valid_secs) {
  if (valid_secs <= 0 || valid_secs >= kMaxHashValiditySecs) {
    return InvalidArgument(
        "a certificate accepted by hash must be valid for less than 14 days");
  }
  Parts p;
  int rv = gnutls_x509_privkey_init(&p.key);
  if (rv < 0) return Failed("key", rv);
  rv = gnutls_x509_privkey_generate(
      p.key, GNUTLS_PK_ECDSA, GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1),
      0);
  if (rv < 0) return Failed("generate key", rv);
  rv = gnutls_x509_crt_init(&p.crt);
  if (rv < 0) return Failed("certificate", rv);
  uint8_t serial[16];
  rv = gnutls_rnd(GNUTLS_RND_NONCE, serial, sizeof serial);
  if (rv < 0) return Failed("serial", rv);
  serial[0] &= 0x7f;  // a positive number
  const auto begin = static_cast<time_t>(unix_now_secs - 60);
  const auto end = static_cast<time_t>(unix_now_secs - 60 + valid_secs);
  static const char kName[] = "localhost";
  static const uint8_t kLoopback[4] = {127, 0, 0, 1};
  const char* step = "fill";
  if ((rv = gnutls_x509_crt_set_version(p.crt, 3)) < 0 ||
      (rv = gnutls_x509_crt_set_serial(p.crt, serial, sizeof serial)) < 0 ||
      (rv = gnutls_x509_crt_set_activation_time(p.crt, begin)) < 0 ||
      (rv = gnutls_x509_crt_set_expiration_time(p.crt, end)) < 0 ||
      (rv = gnutls_x509_crt_set_dn_by_oid(p.crt, GNUTLS_OID_X520_COMMON_NAME, 0,
                                          kName, sizeof kName - 1)) < 0 ||
      (rv = gnutls_x509_crt_set_subject_alt_name(p.crt, GNUTLS_SAN_DNSNAME,
                                                 kName, sizeof kName - 1,
                                                 GNUTLS_FSAN_APPEND)) < 0 ||
      (rv = gnutls_x509_crt_set_subject_alt_name(p.crt, GNUTLS_SAN_IPADDRESS,
                                                 kLoopback, sizeof kLoopback,
                                                 GNUTLS_FSAN_APPEND)) < 0 ||
      (rv = gnutls_x509_crt_set_key(p.crt, p.key)) < 0 ||
      (rv = gnutls_x509_crt_set_key_usage(p.crt,
                                          GNUTLS_KEY_DIGITAL_SIGNATURE)) < 0 ||
      (rv = gnutls_x509_crt_set_basic_constraints(p.crt, 0, -1)) < 0) {
    return Failed(step, rv);
  }
  rv = gnutls_x509_crt_sign2(p.crt, p.crt, p.key, GNUTLS_DIG_SHA256, 0);
  if (rv < 0) return Failed("sign", rv);

  std::unique_ptr<TlsIdentity> out(new TlsIdentity());
  gnutls_datum_t der{};
  rv = gnutls_x509_crt_export2(p.crt, GNUTLS_X509_FMT_DER, &der);
  if (rv < 0) return Failed("export", rv);
  out->der_.assign(reinterpret_cast<const char*>(der.data), der.size);
  gnutls_free(der.data);
  out->sha256_.resize(32);
  rv = gnutls_hash_fast(GNUTLS_DIG_SHA256, out->der_.data(), out->der_.size(),
                        out->sha256_.data());
  if (rv < 0) return Failed("hash", rv);
  out->not_after_ = static_cast<int64_t>(end);

  gnutls_certificate_credentials_t cred = nullptr;
  rv = gnutls_certificate_allocate_credentials(&cred);
  if (rv < 0) return Failed("credentials", rv);
  out->credentials_ = cred;
  rv = gnutls_certificate_set_x509_key(cred, &p.crt, 1, p.key);
  if (rv < 0) return Failed("set key", rv);
  return out;
}

TlsIdentity::~TlsIdentity() {
  if (credentials_ != nullptr) {
    gnutls_certificate_free_credentials(
        static_cast<gnutls_certificate_credentials_t>(credentials_));
  }
}

}  // namespace tessera::net::wt
