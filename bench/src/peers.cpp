// The peers of `ziggurat bench spmm`: ViennaCL's OpenCL CSR products on ziggurat's own OpenCL
// context, and cuSPARSE through CuPy (cusparse_spmm.py beside the program, run as a child process).

#include "peers.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <iterator>
#include <sstream>
#include <system_error>
#include <utility>

#include "program_main.hpp"
#include "ziggurat/base/error.hpp"

// ViennaCL after ziggurat's headers: ziggurat/opencl.hpp sets the OpenCL API level (1.2) that
// CL/cl.h, which ViennaCL includes too, must see. Only headers that need no Boost (the GPU machine
// has ViennaCL without it). They compile without a warning under -Wall -Wextra -Wpedantic (GCC 12
// and 13, Clang 15) even from a non-system folder (the GPU machine's CPATH), so no pragmas.
#define VIENNACL_WITH_OPENCL
#include <viennacl/compressed_matrix.hpp>
#include <viennacl/linalg/prod.hpp>
#include <viennacl/matrix.hpp>
#include <viennacl/vector.hpp>
#include <viennacl/version.hpp>

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

// ViennaCL keeps its OpenCL contexts in a process-wide table under a long id, and ignores (with a
// warning) setup_context on an id already set up, so each OpenCL context gets an id of its own;
// id 0, ViennaCL's default (which would create a context of its own), is never used.
//
// Sharing the handles (ViennaCL 1.7.1, viennacl/ocl/context.hpp): init_existing() retains the
// cl_context (clRetainContext) and add_queue() the queue (one clRetainCommandQueue net), and
// ViennaCL releases each once when its table is destroyed at exit. So ViennaCL never releases
// what is ziggurat's, and ziggurat releasing its Context leaves ViennaCL no dangling handle: the
// OpenCL context just lives on until exit (which also keeps its address, the key here, unique).
long viennacl_context_id(const Context& context) {
  static std::map<cl_context, long> ids;
  const cl_context handle = context.cl_context()();
  const auto [entry, added] = ids.try_emplace(handle, static_cast<long>(ids.size()) + 1);
  if (added)
    viennacl::ocl::setup_context(entry->second, handle, context.device().device(), context.compute_queue()());
  return entry->second;
}

// ViennaCL 1.7 creates every OpenCL buffer with a size cast to unsigned int
// (viennacl/backend/opencl.hpp): a buffer of 4 GiB or more would silently come out too small.
std::string viennacl_size_problem(std::size_t rows, std::size_t cols, std::size_t nonzeros,
                                  std::size_t k, std::size_t value_bytes) {
  const std::pair<const char*, std::size_t> buffers[] = {
      {"values", nonzeros * value_bytes}, {"column indices", nonzeros * sizeof(cl_uint)},
      {"x", cols * k * value_bytes},      {"y", rows * k * value_bytes}};
  for (const auto& [name, bytes] : buffers)
    if (bytes > std::numeric_limits<unsigned int>::max())
      return std::string("its ") + name + " buffer would take " + std::to_string(bytes) +
             " bytes; ViennaCL 1.7 sizes OpenCL buffers with a 32-bit unsigned int";
  return {};
}

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

// A fresh folder under the system's temporary folder, removed with its files however the timing ends.
class ScratchFolder {
 public:
  ScratchFolder() {
    static std::atomic<unsigned> counter{0};
    const auto root = std::filesystem::temp_directory_path();
    do {
      path_ = root / ("ziggurat-cusparse-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    } while (!std::filesystem::create_directory(path_));
  }
  ~ScratchFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

void write_file(const std::filesystem::path& path, const void* data, std::size_t bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  out.close();
  if (!out) throw IoError("could not write " + path.string() + " (is the temporary folder full?)");
}

template <class U>
void write_array(const std::filesystem::path& path, const std::vector<U>& values) {
  write_file(path, values.data(), sizeof(U) * values.size());
}

// The matrix as the script reads it: descriptor.json and raw arrays in the host's byte order
// (the script runs on the same machine). Indices go out as they are: below 2^31 (checked by the
// caller), uint32 and int32 have the same bytes.
template <class T>
void write_problem(const std::filesystem::path& folder, const sparse::Csr<T>& a, const std::vector<T>& x,
                   std::size_t k, const std::vector<T>& reference, std::size_t repeat) {
  const nlohmann::json descriptor = {{"rows", a.rows},          {"cols", a.cols},
                                     {"nnz", a.nonzeros()},     {"k", k},
                                     {"dtype", sizeof(T) == 4 ? "float32" : "float64"},
                                     {"repeat", repeat}};
  const std::string text = descriptor.dump() + "\n";
  write_file(folder / "descriptor.json", text.data(), text.size());
  write_array(folder / "row_ptr", a.row_ptr);
  write_array(folder / "col", a.col);
  write_array(folder / "values", a.values);
  write_array(folder / "x", x);
  write_array(folder / "reference", reference);
}

std::string shell_quoted(const std::string& text) {
  std::string quoted = "'";
  for (const char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string last_line(const std::string& text) {
  std::istringstream lines(text);
  std::string line, last;
  while (std::getline(lines, line))
    if (!line.empty()) last = line;
  return last;
}

struct ChildResult {
  std::string out;  ///< its standard output
  int status = 0;   ///< exit status, or -1 when it did not exit normally
};

// Runs `command` through the shell and returns its standard output.
ChildResult run_command(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) throw std::system_error(errno, std::generic_category(), "could not start a shell");
  ChildResult result;
  char buffer[4096];
  for (std::size_t got; (got = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) result.out.append(buffer, got);
  const int wait_status = pclose(pipe);
  result.status = wait_status != -1 && WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1;
  return result;
}

// Fills `timing` from the script's answer (its last line of output); why_not says what went
// wrong when there is no usable answer.
void read_answer(const std::string& python, const ChildResult& child, const std::filesystem::path& error_file,
                 PeerTiming& timing) {
  nlohmann::json answer;
  try {
    answer = nlohmann::json::parse(last_line(child.out));
  } catch (const nlohmann::json::exception&) {
    std::ifstream errors(error_file);
    const std::string error_text{std::istreambuf_iterator<char>(errors), std::istreambuf_iterator<char>()};
    timing.why_not = python + " gave no answer (exit status " + std::to_string(child.status) + ")" +
                     (error_text.empty() ? "" : ": " + last_line(error_text));
    return;
  }
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
  PeerTiming timing = new_timing("ViennaCL " + std::to_string(VIENNACL_MAJOR_VERSION) + "." +
                                     std::to_string(VIENNACL_MINOR_VERSION),
                                 k);
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
  const std::filesystem::path script = executable_folder() / "cusparse_spmm.py";
  if (!std::filesystem::is_regular_file(script)) {
    timing.why_not = "the script " + script.string() + " is not there (install the bench component whole)";
    return timing;
  }
  try {
    const ScratchFolder folder;
    write_problem(folder.path(), a, x, k, reference, repeat);
    const auto error_file = folder.path() / "stderr.txt";
    const ChildResult child = run_command(shell_quoted(python) + " " + shell_quoted(script.string()) + " " +
                                          shell_quoted(folder.path().string()) + " 2>" +
                                          shell_quoted(error_file.string()));
    read_answer(python, child, error_file, timing);
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
