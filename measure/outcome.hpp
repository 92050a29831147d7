#pragma once
/// Outcome of one candidate as the harness reports it: the one definition in ktune/outcome.hpp,
/// shared with the cache.

#include "core/outcome.hpp"

namespace ktune::harness {

using ktune::Outcome;
using ktune::outcome_from_string;
using ktune::to_string;

}  // namespace ktune::harness
