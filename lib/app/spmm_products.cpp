#include "ziggurat/app/spmm_products.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <random>

#include "ziggurat/base/error.hpp"

namespace ziggurat::app {

template <class T, class Matrix>
PreparedProduct<T> prepare_block_product(const Context& context, const Matrix& a, std::size_t k,
                                         std::optional<sparse::BsrKernel> kernel) {
  auto device = std::make_shared<sparse::DeviceBsr<T>>(context, a);
  PreparedProduct<T> product;
  product.format = device->block_size() == 1 && std::is_same_v<Matrix, sparse::Csr<T>> ? "csr" : "bsr";
  product.block_size = device->block_size();
  if (!kernel) {
    product.choice = sparse::choose_bsr_kernel(context, *device, k);
    kernel = product.choice.kernel;
  }
  auto multiplier = std::make_shared<sparse::BsrMultiplier<T>>(context, *device, k, *kernel);
  product.kernel = multiplier->kernel().name();
  product.bytes = sparse::product_bytes(*device, k);
  product.x = std::make_shared<sparse::DeviceVectors<T>>(sparse::input_vectors(context, *device, k));
  product.y = std::make_shared<sparse::DeviceVectors<T>>(sparse::output_vectors(context, *device, k));
  // The multiplier keeps the matrix's buffers; the lambda keeps the multiplier and the vectors.
  product.enqueue = [multiplier, x = product.x, y = product.y](cl::Event* first) {
    return multiplier->enqueue(*x, *y, nullptr, first);
  };
  return product;
}

template <class T>
PreparedProduct<T> prepare_dia_product(const Context& context, const sparse::Dia<T>& a, std::size_t k) {
  const sparse::DeviceDia<T> device(context, a);
  PreparedProduct<T> product;
  product.format = "dia";
  product.kernel = a.symmetric ? "dia (symmetric half-stored)" : "dia";
  product.bytes = sparse::product_bytes(device, k);
  auto multiplier = std::make_shared<sparse::DiaMultiplier<T>>(context, device, k);
  product.x = std::make_shared<sparse::DeviceVectors<T>>(context, a.cols, k);
  product.y = std::make_shared<sparse::DeviceVectors<T>>(context, a.rows, k);
  product.enqueue = [multiplier, x = product.x, y = product.y](cl::Event* first) {
    return multiplier->enqueue(*x, *y, nullptr, first);
  };
  return product;
}

ProductTiming time_product(const Context& context, const std::function<cl::Event(cl::Event* first)>& product,
                           std::size_t repeat) {
  if (repeat == 0) throw InvalidArgument("--repeat must be at least 1");
  product(nullptr);
  context.compute_queue().finish();
  const bool events = context.device().profiling;
  std::vector<double> times;
  for (std::size_t i = 0; i < repeat; ++i) {
    const auto start = std::chrono::steady_clock::now();
    cl::Event first;
    const cl::Event last = product(&first);
    context.compute_queue().finish();
    times.push_back(events ? profiled_seconds(first, last)
                           : std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return {times[times.size() / 2], times.front()};
}

template <class T>
ReferenceProduct<T> reference_product(const sparse::Csr<T>& a, const std::vector<T>& x, std::size_t k) {
  ReferenceProduct<T> reference{sparse::multiply(a, x, k), {}};
  sparse::Csr<T> abs_a = a;
  for (T& v : abs_a.values) v = std::abs(v);
  std::vector<T> abs_x = x;
  for (T& v : abs_x) v = std::abs(v);
  const std::vector<T> bound = sparse::multiply(abs_a, abs_x, k);
  std::size_t longest = 0;
  for (std::size_t r = 0; r < a.rows; ++r) longest = std::max<std::size_t>(longest, a.row_ptr[r + 1] - a.row_ptr[r]);
  const double factor = 2.0 * static_cast<double>(longest + 1) * std::numeric_limits<T>::epsilon();
  reference.tolerance.reserve(bound.size());
  for (const T b : bound) reference.tolerance.push_back(factor * static_cast<double>(b));
  return reference;
}

template <class T>
ProductCheck check_product(const ReferenceProduct<T>& reference, const std::vector<T>& y) {
  if (y.size() != reference.y.size()) throw InvalidArgument("a product result has the wrong size");
  ProductCheck check;
  double largest = 0, worst = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    const double error = std::abs(static_cast<double>(y[i]) - static_cast<double>(reference.y[i]));
    largest = std::max(largest, std::abs(static_cast<double>(reference.y[i])));
    worst = std::max(worst, error);
    if (!(error <= reference.tolerance[i])) ++check.outside;  // NaN counts as outside
  }
  check.max_relative_error = largest > 0 ? worst / largest : worst;
  return check;
}

template <class T>
std::vector<T> random_vectors(std::size_t rows, std::size_t k, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> value(-1, 1);
  std::vector<T> x(rows * k);
  for (T& v : x) v = static_cast<T>(value(random));
  return x;
}

#define ZIGGURAT_CLI_PRODUCTS(T)                                                                                   \
  template PreparedProduct<T> prepare_block_product<T, sparse::Bsr<T>>(const Context&, const sparse::Bsr<T>&,      \
                                                                       std::size_t, std::optional<sparse::BsrKernel>);            \
  template PreparedProduct<T> prepare_block_product<T, sparse::Csr<T>>(const Context&, const sparse::Csr<T>&,      \
                                                                       std::size_t, std::optional<sparse::BsrKernel>);            \
  template PreparedProduct<T> prepare_dia_product(const Context&, const sparse::Dia<T>&, std::size_t);             \
  template ReferenceProduct<T> reference_product(const sparse::Csr<T>&, const std::vector<T>&, std::size_t);       \
  template ProductCheck check_product(const ReferenceProduct<T>&, const std::vector<T>&);                          \
  template std::vector<T> random_vectors(std::size_t, std::size_t, std::uint64_t);
ZIGGURAT_CLI_PRODUCTS(float)
ZIGGURAT_CLI_PRODUCTS(double)
#undef ZIGGURAT_CLI_PRODUCTS

}  // namespace ziggurat::app
