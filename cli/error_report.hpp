#pragma once
/// How `ktune` reports a failure: one line "ktune: error: <message>" on stderr, then the
/// error's API code, place and detail (e.g. a compile log) when it has them.

#include "ktune/error.hpp"

namespace ktune::cli {

/// Prints `error` to stderr and returns the exit code of its kind.
int report_error(const Error& error);

}  // namespace ktune::cli
