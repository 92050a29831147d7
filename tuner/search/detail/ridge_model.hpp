#pragma once
/// Bayesian ridge regression: y ~ mean(y) + x.w with a Gaussian prior on w (precision `lambda`
/// relative to the noise). Gives a prediction and, through the posterior covariance, how uncertain
/// it is at any x (large far from the data). Small dense linear algebra (d up to a few hundred).

#include <cstddef>
#include <vector>

namespace ktune::tuner::detail {

class RidgeModel {
 public:
  /// Fits to `n` rows of `d` features (`x` row-major, n*d values) and targets `y`. lambda > 0.
  void fit(const std::vector<double>& x, size_t d, const std::vector<double>& y, double lambda);

  /// Predicted target at feature row `x` (d values).
  double predict(const double* x) const;
  /// Posterior standard deviation of the prediction at `x` (noise variance times x' A^-1 x).
  double stddev(const double* x) const;

 private:
  size_t d_ = 0;
  double mean_ = 0;
  double noise_var_ = 1;
  std::vector<double> w_;
  std::vector<double> chol_;  ///< lower Cholesky factor of A = X'X + lambda I, row-major d*d
  mutable std::vector<double> scratch_;
};

}  // namespace ktune::tuner::detail
