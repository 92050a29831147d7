#pragma once
/// The one way a C ABI entry point of ktune runs C++: `guarded(last_error, body)` clears the
/// thread's last error, runs `body` (which returns a KTUNE_* code) and turns every exception into
/// the code of its kind plus a message, so no exception ever unwinds into C. Each library keeps its
/// own thread-local last error (libktune.so's ktune_last_error, libktune_runtime.so's
/// ktune_runtime_last_error).

#include <exception>
#include <new>
#include <string>
#include <utility>

#include "ktune/error.hpp"
#include "ktune/ktune.h"

namespace ktune::c_abi {

/// Stores `message` as the last error and returns `code`; never throws.
inline int fail(std::string& last_error, int code, std::string message) noexcept {
  try {
    last_error = std::move(message);
  } catch (...) {
    last_error.clear();  // out of memory for the message itself; the code still says what failed
  }
  return code;
}

/// The KTUNE_ERR_* code of an error kind (the exit codes of the command line).
constexpr int code_of(ErrorKind kind) noexcept {
  switch (kind) {
    case ErrorKind::kBadInput:
      return KTUNE_ERR_BAD_INPUT;
    case ErrorKind::kNotFound:
      return KTUNE_ERR_NOT_FOUND;
    case ErrorKind::kNoDevice:
      return KTUNE_ERR_NO_DEVICE;
    case ErrorKind::kRuntime:
      break;
  }
  return KTUNE_ERR_RUNTIME;
}

template <typename Body>
int guarded(std::string& last_error, Body&& body) noexcept {
  last_error.clear();
  try {
    return body();
  } catch (const Error& e) {
    std::string message = e.what();
    if (!e.detail().empty()) message += "\n" + e.detail();
    return fail(last_error, code_of(e.kind()), std::move(message));
  } catch (const std::bad_alloc&) {
    return fail(last_error, KTUNE_ERR_RUNTIME, "out of memory");
  } catch (const std::exception& e) {
    return fail(last_error, KTUNE_ERR_RUNTIME, e.what());
  } catch (...) {
    return fail(last_error, KTUNE_ERR_RUNTIME, "unknown error");
  }
}

}  // namespace ktune::c_abi
