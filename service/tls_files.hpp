#pragma once
/// Checks `--tls-cert` and `--tls-key` before the server starts, so a wrong file is refused with a
/// message that says what is wrong with it (cpp-httplib only reports that TLS could not be set up).

#include <filesystem>

namespace ktune::service {

/// Throws ktune::Error(kBadInput) naming the file and the problem when `cert` cannot be read or
/// holds no PEM certificate, `key` cannot be read or holds no PEM private key, or the key is not
/// the certificate's (a mismatched pair).
void check_tls_files(const std::filesystem::path& cert, const std::filesystem::path& key);

}  // namespace ktune::service
