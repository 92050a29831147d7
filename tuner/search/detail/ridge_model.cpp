#include "tuner/search/detail/ridge_model.hpp"

#include <algorithm>
#include <cmath>

namespace ktune::tuner::detail {

void RidgeModel::fit(const std::vector<double>& x, size_t d, const std::vector<double>& y, double lambda) {
  const size_t n = y.size();
  d_ = d;
  mean_ = 0;
  for (double v : y) mean_ += v;
  mean_ /= static_cast<double>(std::max<size_t>(n, 1));

  std::vector<double> a(d * d, 0.0);
  std::vector<double> b(d, 0.0);
  for (size_t r = 0; r < n; ++r) {
    const double* row = &x[r * d];
    const double t = y[r] - mean_;
    for (size_t i = 0; i < d; ++i) {
      if (row[i] == 0) continue;
      b[i] += row[i] * t;
      for (size_t j = 0; j <= i; ++j) a[i * d + j] += row[i] * row[j];
    }
  }
  for (size_t i = 0; i < d; ++i) a[i * d + i] += lambda;

  // Cholesky A = L L' (A is symmetric positive definite: X'X plus lambda on the diagonal).
  chol_.assign(d * d, 0.0);
  for (size_t i = 0; i < d; ++i) {
    for (size_t j = 0; j <= i; ++j) {
      double s = a[i * d + j];
      for (size_t k = 0; k < j; ++k) s -= chol_[i * d + k] * chol_[j * d + k];
      chol_[i * d + j] = (i == j) ? std::sqrt(std::max(s, 1e-12)) : s / chol_[j * d + j];
    }
  }
  // w = L'^-1 L^-1 b
  w_.assign(d, 0.0);
  std::vector<double> z(d, 0.0);
  for (size_t i = 0; i < d; ++i) {
    double s = b[i];
    for (size_t k = 0; k < i; ++k) s -= chol_[i * d + k] * z[k];
    z[i] = s / chol_[i * d + i];
  }
  for (size_t i = d; i-- > 0;) {
    double s = z[i];
    for (size_t k = i + 1; k < d; ++k) s -= chol_[k * d + i] * w_[k];
    w_[i] = s / chol_[i * d + i];
  }

  // Noise variance: the residual variance, floored at 1% of the targets' variance so that an
  // interpolating fit (more features than points) still admits it does not know everything.
  double ssr = 0;
  double sst = 0;
  for (size_t r = 0; r < n; ++r) {
    const double e = y[r] - predict(&x[r * d]);
    ssr += e * e;
    sst += (y[r] - mean_) * (y[r] - mean_);
  }
  const double denom = static_cast<double>(std::max<size_t>(n, 2) - 1);
  noise_var_ = std::max({ssr / denom, 0.01 * sst / denom, 1e-8});
}

double RidgeModel::predict(const double* x) const {
  double s = mean_;
  for (size_t i = 0; i < d_; ++i) s += w_[i] * x[i];
  return s;
}

double RidgeModel::stddev(const double* x) const {
  // x' A^-1 x = |L^-1 x|^2
  double q = 0;
  std::vector<double>& z = scratch_;
  z.resize(d_);
  for (size_t i = 0; i < d_; ++i) {
    double s = x[i];
    for (size_t k = 0; k < i; ++k) s -= chol_[i * d_ + k] * z[k];
    z[i] = s / chol_[i * d_ + i];
    q += z[i] * z[i];
  }
  return std::sqrt(noise_var_ * q);
}

}  // namespace ktune::tuner::detail
