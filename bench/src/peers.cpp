// The peers of `ziggurat bench spmm`: ViennaCL's OpenCL CSR products on ziggurat's own OpenCL
// context, and cuSPARSE through CuPy (cusparse_spmm.py beside the program, run as a child process).

#include "peers.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <utility>

#include "peer_support.hpp"
#include "ziggurat/base/error.hpp"

// ViennaCL after ziggurat's headers: ziggurat/opencl.hpp sets the OpenCL API level (1.2) that
// CL/cl.h, which ViennaCL includes too, must see. Only headers that need no Boost (the GPU machine
// has ViennaCL without it). They compile without a warning under -Wall -Wextra -Wpedantic (GCC 12
// and 13, Clang 15) even from a non-system folder (the GPU machine's CPATH), so no pragmas.
// VIENNACL_WITH_OPENCL comes from the build (bench/CMakeLists.txt), the same in every file.
#include <viennacl/compressed_matrix.hpp>
#include <viennacl/linalg/prod.hpp>
#include <viennacl/matrix.hpp>
#include <viennacl/vector.hpp>

namespace ziggurat::cli {

namespace {

// ---- shared by both peers ----

PeerTiming new_timing(std::string peer, std::size_t k) {
  PeerTiming timing;
  timing.peer = std::move(peer);
  timing.product = k == 1 ? "SpMV" : "CSR x dense";
  timing.k = k;
  return timing;
}

template <class T>
void check_inputs(const sparse::Csr<T>& a, const std::vector<T>& x, std::size_t k,
                  const std::vector<T>& reference, std::size_t repeat) {
  if (k == 0) throw InvalidArgument("peer timing: k must be at least 1");
  if (repeat == 0) throw InvalidArgument("peer timing: repeat must be at least 1");
  if (x.size() != a.cols * k)
    throw InvalidArgument("peer timing: x holds " + std::to_string(x.size()) + " values, the matrix's " +
                          std::to_string(a.cols) + " columns x k = " + std::to_string(k) + " need " +
                          std::to_string(a.cols * k));
  if (reference.size() != a.rows * k)
    throw InvalidArgument("peer timing: the reference holds " + std::to_string(reference.size()) +
                          " values, the matrix's " + std::to_string(a.rows) + " rows x k = " +
                          std::to_string(k) + " need " + std::to_string(a.rows * k));
}

// Normwise: max_i |y_i - ref_i| / max_i |ref_i|; a NaN anywhere in y makes it NaN (std::max would
// skip it and hide a broken result).
template <class T>
double max_relative_error(const std::vector<T>& y, const std::vector<T>& reference) {
  double largest = 0, worst = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    const double difference = std::abs(static_cast<double>(y[i]) - static_cast<double>(reference[i]));
    if (std::isnan(difference)) return std::numeric_limits<double>::quiet_NaN();
    worst = std::max(worst, difference);
    largest = std::max(largest, std::abs(static_cast<double>(reference[i])));
  }
  return worst / std::max(largest, std::numeric_limits<double>::min());
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t middle = values.size() / 2;
  return values.size() % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

// ---- ViennaCL ----

// A device buffer holding `count` values of `data` (uninitialized when data is null).
template <class U>
viennacl::backend::mem_handle viennacl_buffer(const U* data, std::size_t count, const viennacl::context& where) {
  viennacl::backend::mem_handle buffer;
  viennacl::backend::memory_create(buffer, sizeof(U) * count, where, data);
  return buffer;
}

// Times `product` (which must end with viennacl::backend::finish()) after one untimed run, in
// which ViennaCL compiles its kernels.
template <class Product>
void time_product(Product product, std::size_t repeat, PeerTiming& timing) {
  product();
  std::vector<double> seconds;
  for (std::size_t r = 0; r < repeat; ++r) {
    const auto start = std::chrono::steady_clock::now();
    product();
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  timing.median_s = median(seconds);
  timing.min_s = *std::min_element(seconds.begin(), seconds.end());
}

// y = A x with x and y plain vectors.
template <class T>
std::vector<T> viennacl_spmv(const viennacl::compressed_matrix<T>& matrix, const std::vector<T>& x,
                             std::size_t repeat, const viennacl::context& where, PeerTiming& timing) {
  viennacl::backend::mem_handle x_buffer = viennacl_buffer(x.data(), x.size(), where);
  viennacl::backend::mem_handle y_buffer = viennacl_buffer<T>(nullptr, matrix.size1(), where);
  const viennacl::vector_base<T> x_vector(x_buffer, x.size(), 0, 1);
  viennacl::vector_base<T> y_vector(y_buffer, matrix.size1(), 0, 1);
  time_product([&] {
    y_vector = viennacl::linalg::prod(matrix, x_vector);
    viennacl::backend::finish();
  }, repeat, timing);
  std::vector<T> y(matrix.size1());
  viennacl::backend::memory_read(y_buffer, 0, sizeof(T) * y.size(), y.data());
  return y;
}

// Y = A X with X and Y row-major. They wrap unpadded buffers: viennacl::matrix would pad both
// extents to multiples of 128 (16 times the memory for k = 8); ViennaCL's kernel takes the row
// pitch as an argument and reads the same values either way.
template <class T>
std::vector<T> viennacl_csr_dense(const viennacl::compressed_matrix<T>& matrix, const std::vector<T>& x,
                                  std::size_t k, std::size_t repeat, const viennacl::context& where,
                                  PeerTiming& timing) {
  const std::size_t rows = matrix.size1(), cols = matrix.size2();
  viennacl::backend::mem_handle x_buffer = viennacl_buffer(x.data(), x.size(), where);
  viennacl::backend::mem_handle y_buffer = viennacl_buffer<T>(nullptr, rows * k, where);
  const viennacl::matrix_base<T> x_matrix(x_buffer, cols, 0, 1, cols, k, 0, 1, k, true);
  viennacl::matrix_base<T> y_matrix(y_buffer, rows, 0, 1, rows, k, 0, 1, k, true);
  // What y_matrix = prod(matrix, x_matrix) runs; that expression does not compile with GCC 12 or 13:
  // matrix.hpp calls viennacl::linalg::prod_impl qualified, before the sparse overload is declared.
  time_product([&] {
    viennacl::linalg::prod_impl(matrix, x_matrix, y_matrix);
    viennacl::backend::finish();
  }, repeat, timing);
  std::vector<T> y(rows * k);
  viennacl::backend::memory_read(y_buffer, 0, sizeof(T) * y.size(), y.data());
  return y;
}

// ---- cuSPARSE through CuPy ----

// The matrix as the script reads it: descriptor.json and raw arrays in the host's byte order
// (the script runs on the same machine). Indices go out as they are: below 2^31 (checked by the
// caller), uint32 and int32 have the same bytes.
template <class T>
void write_problem(const std::filesystem::path& folder, const sparse::Csr<T>& a, const std::vector<T>& x,
                   std::size_t k, const std::vector<T>& reference, std::size_t repeat) {
  write_csr(folder, a, {{"k", k}, {"repeat", repeat}});
  write_array(folder / "x", x);
  write_array(folder / "reference", reference);
}

// Fills `timing` from the script's answer.
void read_answer(const std::string& python, const nlohmann::json& answer, PeerTiming& timing) {
  if (!answer.value("ran", false)) {
    timing.why_not = python + ": " + answer.value("why_not", std::string("the script gave no reason"));
    return;
  }
  timing.median_s = answer.at("median_s").get<double>();
  timing.min_s = answer.at("min_s").get<double>();
  // null: the script's result held a NaN or an infinity (JSON has neither).
  const nlohmann::json& error = answer.at("max_error");
  timing.max_error = error.is_null() ? std::numeric_limits<double>::quiet_NaN() : error.get<double>();
  timing.peer = "cuSPARSE (CuPy " + answer.value("cupy", std::string("?")) + ")";
  timing.device = answer.value("device", std::string("?")) + ", CUDA " + answer.value("cuda", std::string("?"));
  timing.ran = true;  // last: a malformed answer throws above and leaves ran false
}

}  // namespace

template <class T>
PeerTiming time_viennacl(const Context& context, const sparse::Csr<T>& a, const std::vector<T>& x,
                         std::size_t k, const std::vector<T>& reference, std::size_t repeat) {
  check_inputs(a, x, k, reference, repeat);
  PeerTiming timing = new_timing(viennacl_name(), k);
  if (sizeof(T) == 8 && !context.device().fp64) {
    timing.why_not = "the device has no double precision (cl_khr_fp64)";
    return timing;
  }
  if (a.rows == 0 || a.cols == 0 || a.nonzeros() == 0) {
    timing.why_not = "ViennaCL 1.7 refuses an empty matrix";
    return timing;
  }
  if (std::string problem = viennacl_size_problem(a.rows, a.cols, a.nonzeros(), k, sizeof(T)); !problem.empty()) {
    timing.why_not = "the matrix is too large for ViennaCL: " + problem;
    return timing;
  }
  try {
    viennacl::ocl::switch_context(viennacl_context_id(context));
    const viennacl::context where(viennacl::ocl::current_context());
    viennacl::compressed_matrix<T> matrix(where);
    matrix.set(a.row_ptr.data(), a.col.data(), a.values.data(), a.rows, a.cols, a.nonzeros());
    const std::vector<T> y = k == 1 ? viennacl_spmv(matrix, x, repeat, where, timing)
                                    : viennacl_csr_dense(matrix, x, k, repeat, where, timing);
    timing.max_error = max_relative_error(y, reference);
    timing.ran = true;
    timing.device = context.device().label();
  } catch (const std::exception& error) {
    timing.why_not = std::string("ViennaCL failed: ") + error.what();
  }
  return timing;
}

template <class T>
PeerTiming time_cusparse(const std::string& python, const sparse::Csr<T>& a, const std::vector<T>& x,
                         std::size_t k, const std::vector<T>& reference, std::size_t repeat) {
  check_inputs(a, x, k, reference, repeat);
  PeerTiming timing = new_timing("cuSPARSE (CuPy)", k);
  constexpr std::size_t int32_limit = std::numeric_limits<std::int32_t>::max();
  if (a.nonzeros() > int32_limit || a.rows > int32_limit || a.cols > int32_limit) {
    timing.why_not = "the matrix needs 64-bit indices; the script hands cuSPARSE int32 ones";
    return timing;
  }
  try {
    const std::string why_not = run_peer_script(
        python, "cusparse_spmm.py",
        [&](const std::filesystem::path& folder) { write_problem(folder, a, x, k, reference, repeat); },
        [&](const std::filesystem::path&, const nlohmann::json& answer) { read_answer(python, answer, timing); });
    if (!why_not.empty()) timing.why_not = why_not;
  } catch (const std::exception& error) {
    timing.why_not = std::string("could not run the cuSPARSE script: ") + error.what();
  }
  return timing;
}

template PeerTiming time_viennacl(const Context&, const sparse::Csr<float>&, const std::vector<float>&,
                                  std::size_t, const std::vector<float>&, std::size_t);
template PeerTiming time_viennacl(const Context&, const sparse::Csr<double>&, const std::vector<double>&,
                                  std::size_t, const std::vector<double>&, std::size_t);
template PeerTiming time_cusparse(const std::string&, const sparse::Csr<float>&, const std::vector<float>&,
                                  std::size_t, const std::vector<float>&, std::size_t);
template PeerTiming time_cusparse(const std::string&, const sparse::Csr<double>&, const std::vector<double>&,
                                  std::size_t, const std::vector<double>&, std::size_t);

}  // namespace ziggurat::cli
