#pragma once
/// ktune's one error family. Every failure that crosses a module boundary is a ktune::Error:
/// it carries the API's own error name (e.g. "CUDA_ERROR_ILLEGAL_ADDRESS", "SQLITE_BUSY"),
/// the call's text, the place it was raised, any long detail (an NVRTC compile log) and the
/// kind of failure, which the command line maps to its exit code.

#include <stdexcept>
#include <string>

namespace ktune {

/// What kind of failure; the command line exits with the matching code (docs/design.md).
enum class ErrorKind {
  kRuntime = 1,   ///< anything that went wrong while doing valid work
  kBadInput = 2,  ///< bad usage, a malformed shape, a file that is not what it should be
  kNoDevice = 3,  ///< no GPU, no driver, or a CUDA library that could not be opened
  kNotFound = 4,  ///< a lookup with no answer
};

/// The exit code `ktune` uses for an error of this kind.
constexpr int exit_code(ErrorKind kind) { return static_cast<int>(kind); }

class Error : public std::runtime_error {
 public:
  /// @param kind     failure kind (decides the exit code)
  /// @param message  one line for a person: what failed and, where known, why
  /// @param api_code the API's own name for the error ("" when none)
  /// @param where    "file:line" of the failing call ("" when none)
  /// @param detail   long text that belongs with the error, e.g. a compile log
  Error(ErrorKind kind, const std::string& message, std::string api_code = {}, std::string where = {},
        std::string detail = {})
      : std::runtime_error(message),
        kind_(kind),
        api_code_(std::move(api_code)),
        where_(std::move(where)),
        detail_(std::move(detail)) {}

  ErrorKind kind() const noexcept { return kind_; }
  const std::string& api_code() const noexcept { return api_code_; }
  const std::string& where() const noexcept { return where_; }
  const std::string& detail() const noexcept { return detail_; }

 private:
  ErrorKind kind_;
  std::string api_code_;
  std::string where_;
  std::string detail_;
};

}  // namespace ktune
