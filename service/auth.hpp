#pragma once
/// The service's bearer token: read from a file only its owner may read (like an ssh key), and
/// compared with the `Authorization: Bearer <token>` header in constant time. Every route that
/// changes the database (results, jobs) needs it (docs/service.md "Security").

#include <filesystem>
#include <string>
#include <string_view>

namespace ktune::service {

/// Shortest token accepted: 16 bytes (128 bits of a random hex or base64 token).
inline constexpr size_t kMinTokenBytes = 16;

/// The token in `path`, surrounding whitespace removed. Throws ktune::Error(kBadInput) when the file
/// is missing, not a regular file, readable or writable by group or others (mode & 077), empty,
/// shorter than kMinTokenBytes, or holds a control character.
std::string read_token_file(const std::filesystem::path& path);

/// Whether `authorization` (the header's value) is "Bearer <token>" with exactly `token`. The time
/// taken depends only on the lengths, not on where the texts differ.
bool bearer_matches(std::string_view authorization, std::string_view token);

}  // namespace ktune::service
