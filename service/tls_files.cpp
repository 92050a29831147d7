#include "service/tls_files.hpp"

#include <cstdio>
#include <memory>

#include <fmt/format.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "ktune/error.hpp"

namespace ktune::service {
namespace {

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

File open_file(const std::filesystem::path& path, const char* option) {
  File f(std::fopen(path.c_str(), "rb"));
  if (!f)
    throw Error(ErrorKind::kBadInput, fmt::format("{} {}: cannot read the file", option, path.string()));
  return f;
}

}  // namespace

void check_tls_files(const std::filesystem::path& cert_path, const std::filesystem::path& key_path) {
  const File cert_file = open_file(cert_path, "--tls-cert");
  const File key_file = open_file(key_path, "--tls-key");
  const std::unique_ptr<X509, decltype(&X509_free)> cert(
      PEM_read_X509(cert_file.get(), nullptr, nullptr, nullptr), &X509_free);
  ERR_clear_error();
  if (!cert) {
    throw Error(ErrorKind::kBadInput,
                fmt::format("--tls-cert {}: no PEM certificate in it (expected -----BEGIN CERTIFICATE-----)",
                            cert_path.string()));
  }
  const std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(
      PEM_read_PrivateKey(key_file.get(), nullptr, nullptr, nullptr), &EVP_PKEY_free);
  ERR_clear_error();
  if (!key) {
    throw Error(ErrorKind::kBadInput,
                fmt::format("--tls-key {}: no unencrypted PEM private key in it", key_path.string()));
  }
  if (X509_check_private_key(cert.get(), key.get()) != 1) {
    ERR_clear_error();
    throw Error(ErrorKind::kBadInput,
                fmt::format("--tls-key {} is not the private key of the certificate --tls-cert {} (a "
                            "mismatched pair)",
                            key_path.string(), cert_path.string()));
  }
}

}  // namespace ktune::service
