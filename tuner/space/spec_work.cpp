#include "tuner/space/spec_work.hpp"

#include <algorithm>
#include <exception>
#include <vector>

#include "core/dtype.hpp"
#include "core/shape.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "ktune/error.hpp"

namespace ktune::tuner {
namespace {

namespace kt = kernel_templates;

std::optional<double> known(double value) { return value > 0 ? std::optional(value) : std::nullopt; }

template <typename List, typename Value>
bool contains(const List& list, const Value& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

/// The spec of the family that serves the problem's dtype and layout; else one that serves the
/// dtype; else the family's first; null for a kernel without specs.
const kt::KernelSpec* serving_spec(std::string_view kernel, const kt::Problem& problem) {
  const std::vector<const kt::KernelSpec*> specs = kt::specs_of(kernel);
  const kt::KernelSpec* by_dtype = nullptr;
  for (const kt::KernelSpec* spec : specs) {
    if (!contains(spec->dtypes(), problem.dtype)) continue;
    if (contains(spec->layouts(), problem.layout)) return spec;
    if (by_dtype == nullptr) by_dtype = spec;
  }
  if (by_dtype != nullptr) return by_dtype;
  return specs.empty() ? nullptr : specs.front();
}

}  // namespace

cache::Work spec_work(std::string_view kernel, const kt::Problem& problem) {
  const kt::KernelSpec* spec = serving_spec(kernel, problem);
  if (spec == nullptr) return {};
  try {
    const kt::WorkCounts w = spec->work(problem);
    return cache::Work{known(w.flops), known(w.min_bytes)};
  } catch (const std::exception&) {
    return {};  // a dimension the spec needs is missing, or a description's expression fails
  }
}

cache::WorkModel spec_work_model() {
  return [](const cache::WorkKey& key) -> cache::Work {
    try {
      kt::Problem problem;
      problem.dims = Shape::parse(key.shape).dims();
      problem.dtype = key.dtype;
      problem.layout = std::string(key.layout);
      return spec_work(key.kernel, problem);
    } catch (const Error&) {
      return {};  // a shape this build cannot read
    }
  };
}

}  // namespace ktune::tuner
