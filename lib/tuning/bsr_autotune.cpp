#include "ziggurat/tuning/bsr_autotune.hpp"

#include <algorithm>
#include <cmath>

#include "tuning/recorded_timings.hpp"
#include "tuning/timing.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/tuning/profile_store.hpp"

namespace ziggurat::sparse {

namespace {

// The variants worth timing: row, group, and multirow with 1, 2, 4, ... lanes up to the longest
// row (more lanes than blocks would idle), each with scalar and with the widest vector accesses.
std::vector<BsrKernel> candidate_kernels(const RowStats& stats, std::size_t k) {
  std::vector<BsrKernel> kernels{{BsrStrategy::row, 0, 0}, {BsrStrategy::group, 0, 0}};
  for (std::size_t lanes = 1; lanes <= 32; lanes *= 2) {
    kernels.push_back({BsrStrategy::multirow, lanes, 1});
    if (k > 1) kernels.push_back({BsrStrategy::multirow, lanes, 0});  // 0: the widest that divides k
    if (lanes >= stats.max) break;
  }
  return kernels;
}

// Seconds per product: enough products back to back to fill about 7 ms (1 to 33) a round, the
// median of three rounds after a warm-up; one product (after its own warm-up) sizes the rounds.
template <class T>
double time_products(const Context& context, BsrMultiplier<T>& product, const DeviceVectors<T>& x, DeviceVectors<T>& y) {
  const auto one = [&] { product.enqueue(x, y); };
  const double single = ziggurat::detail::seconds_per_call(context, 1, one, 1);
  const auto calls = static_cast<std::size_t>(std::clamp(0.007 / std::max(single, 1e-9), 1.0, 33.0));
  return ziggurat::detail::seconds_per_call(context, calls, one);
}

template <class T>
std::vector<std::pair<std::string, double>> measure_variants(const Context& context, const DeviceBsr<T>& a, std::size_t k) {
  DeviceVectors<T> x = input_vectors(context, a, k);
  DeviceVectors<T> y = output_vectors(context, a, k);
  x.upload(std::vector<T>(a.cols() * k, T(1)));
  std::vector<std::pair<std::string, double>> seconds;
  for (const BsrKernel& kernel : candidate_kernels(a.row_stats(), k)) {
    try {
      BsrMultiplier<T> product(context, a, k, kernel);
      const std::string name = product.kernel().name();
      if (std::any_of(seconds.begin(), seconds.end(), [&](const auto& s) { return s.first == name; })) continue;
      seconds.emplace_back(name, time_products(context, product, x, y));
    } catch (const UnsupportedFeature&) {
      // A variant the device cannot run is simply not a candidate.
    }
  }
  if (seconds.empty()) throw UnsupportedFeature("no block CSR kernel runs on " + context.device().label());
  std::sort(seconds.begin(), seconds.end(), [](const auto& p, const auto& q) { return p.second < q.second; });
  return seconds;
}

}  // namespace

template <class T>
std::string bsr_problem_key(const DeviceBsr<T>& a, std::size_t k) {
  const RowStats& s = a.row_stats();
  const long length = s.mean >= 1 ? std::lround(std::log2(s.mean)) : 0;
  const bool even = static_cast<double>(s.max) <= 2 * s.mean + 2;
  const double stored = static_cast<double>(a.blocks() * a.block_size() * a.block_size());
  const long size = stored >= 1 ? static_cast<long>(std::floor(std::log10(stored))) : 0;
  return "bsr " + std::string(sizeof(T) == 4 ? "f32" : "f64") + " b" + std::to_string(a.block_size()) + " k" +
         std::to_string(k) + " len" + std::to_string(length) + (even ? " even" : " uneven") + " size" + std::to_string(size);
}

template <class T>
BsrChoice choose_bsr_kernel(const Context& context, const DeviceBsr<T>& a, std::size_t k) {
  if (k == 0) throw InvalidArgument("a product needs k >= 1 vectors");
  BsrChoice choice;
  choice.key = bsr_problem_key(a, k);
  choice.seconds = ziggurat::detail::recorded_or_measured(
      context.device(), choice.key, [](const std::string& name) { parse_bsr_kernel(name); }, [&] { return measure_variants(context, a, k); }, choice.measured_now);
  choice.kernel = parse_bsr_kernel(choice.seconds.front().first);
  return choice;
}

template std::string bsr_problem_key(const DeviceBsr<float>&, std::size_t);
template std::string bsr_problem_key(const DeviceBsr<double>&, std::size_t);
template BsrChoice choose_bsr_kernel(const Context&, const DeviceBsr<float>&, std::size_t);
template BsrChoice choose_bsr_kernel(const Context&, const DeviceBsr<double>&, std::size_t);

}  // namespace ziggurat::sparse
