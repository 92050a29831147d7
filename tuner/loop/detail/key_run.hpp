#pragma once
/// The tuning loop's state of one key (TuningLoop::KeyRun), shared by the files that implement the
/// loop's phases (tuning_loop.cpp: search, re-time, winner; tuning_loop_library.cpp: the library's
/// algorithms), and the small helpers they share.

#include <chrono>
#include <cstdint>
#include <deque>
#include <exception>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cache/config_cache.hpp"
#include "core/config.hpp"
#include "tuner/loop/detail/candidate_preparer.hpp"
#include "tuner/loop/tuning_loop.hpp"
#include "tuner/search/search_strategy.hpp"
#include "tuner/space/config_space.hpp"
#include "tuner/space/resource_limits.hpp"

namespace ktune::tuner {
namespace detail {

using Clock = std::chrono::steady_clock;

/// A proposed candidate on its way through the compile stage.
struct InFlight {
  Candidate candidate;
  std::string name;
  std::future<Prepared> future;
  std::optional<Prepared> got;
  std::exception_ptr failure;
};

/// What the loop knows of one evaluated config of the key (for the re-time and the winner).
struct Known {
  Config config;
  int64_t measurement_id = 0;
  double median_us = 0;
  double fidelity = 0;
  Resources resources;
};

double seconds_since(Clock::time_point t);
/// Ids of candidate requests, unique in the process (the worker protocol pairs results by id).
uint64_t next_request_id();
/// The tie rule's resources from a stored resources_json (zeros for what it lacks).
Resources resources_from_json(const std::string& text);
/// Launches of `config`'s plan for the problem (every config the space keeps is accepted by its spec).
size_t launch_count(const std::string& kernel, const kernel_templates::Problem& problem,
                    const Config& config);
/// Drops the seeds this key cannot use, counting them in `e.seed_rejected`: those no longer among
/// the candidates (left out by max_launches) and those whose template cannot run on the arch (they
/// stay candidates, stored as skipped if proposed; they are just not seeds).
void drop_unusable_seeds(Enumeration& e, const std::string& kernel, std::string_view arch);
/// The contenders of a key: the fastest at the highest fidelity measured (ties: name order), at
/// most `top_k`.
std::vector<std::pair<std::string, const Known*>> top_contenders(const std::map<std::string, Known>& known,
                                                                 int top_k);

}  // namespace detail

/// One key on its way through the loop: what tune()'s phases share.
struct TuningLoop::KeyRun {
  KeyRun(const ConfigSpace& space_, const TuneKey& key_) : space(space_), key(key_) {}

  const ConfigSpace& space;
  const TuneKey& key;
  KeySummary s;
  kernel_templates::Problem problem;
  std::string source_hash;
  int64_t kernel_id = 0;
  std::map<std::string, cache::StoredResult> stored;  ///< the key's results already in the cache
  std::shared_ptr<detail::KeyContext> ctx;
  std::unique_ptr<SearchStrategy> strategy;
  std::map<std::string, detail::Known> known;  ///< successes by name
  std::optional<double> best_us;
  std::deque<detail::InFlight> inflight;  ///< proposed, compiling or compiled
  std::vector<std::pair<detail::InFlight, detail::Prepared>>
      done;  ///< taken from `inflight` for one transaction
  size_t new_successes = 0;
  std::vector<std::pair<std::string, const detail::Known*>> top;  ///< the contenders re-timed at the end
  std::vector<detail::Prepared> retimed;                          ///< their prepared candidates
  /// The library algorithms' ranks in the vendor's heuristic, by canonical name (pick_winner's
  /// preference: within the noise, what the library itself would run wins).
  std::map<std::string, int64_t> library_rank;
};

}  // namespace ktune::tuner
