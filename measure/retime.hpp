#pragma once
/// The final re-time of the best few candidates before a winner is named (docs/measurement.md "Timing
/// protocol": no winner's curse from a lucky sample). The candidates are run in `rounds` rounds,
/// each round every candidate once (forward order, then reversed, alternately, so no candidate
/// always follows the same neighbour), each run with 1/rounds of the time cap; a candidate's
/// samples from all rounds are pooled and its statistics recomputed. Clock or thermal drift
/// during the re-time then hits every candidate alike.

#include <vector>

#include "measure/candidate_runner.hpp"

namespace ktune::measure {

/// Returns one result per candidate, in the order given. A candidate that fails in any round keeps
/// that failure (outcome and reason) and is not run again.
std::vector<CandidateResult> retime_interleaved(CandidateRunner& runner,
                                                std::vector<CandidateRequest> candidates, int rounds = 4);

}  // namespace ktune::measure
