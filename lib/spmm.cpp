#include "ziggurat/spmm.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <type_traits>

#include "ziggurat/calibration.hpp"
#include "ziggurat/error.hpp"
#include "ziggurat/program.hpp"

namespace ziggurat::sparse {

namespace {

constexpr std::size_t kMaxVectorsPerLaunch = 16;
// Staged blocks of the group strategy take at most this much local memory, well inside the
// 32 KiB every OpenCL GPU has (never relying on the large local memory of CPU devices).
constexpr std::size_t kStagingBytes = 16 * 1024;

std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

cl_uint u32(std::size_t value, const char* what) {
  if (value > std::numeric_limits<cl_uint>::max()) {
    throw InvalidArgument(std::string(what) + " = " + std::to_string(value) + " does not fit the kernels' 32-bit indices");
  }
  return static_cast<cl_uint>(value);
}

// A device copy of `values`; an empty array still gets a one-element buffer (OpenCL has no
// empty buffers), which no kernel reads.
template <class V>
DeviceBuffer<V> upload_array(const Context& context, const std::vector<V>& values, const char* purpose) {
  DeviceBuffer<V> buffer(context, std::max<std::size_t>(values.size(), 1), purpose, CL_MEM_READ_ONLY);
  if (!values.empty()) ziggurat::detail::write_buffer(context.compute_queue(), buffer.get(), values.data(), values.size() * sizeof(V));
  return buffer;
}

std::size_t largest_power_of_two_at_most(double limit) {
  std::size_t p = 1;
  while (static_cast<double>(p * 2) <= limit) p *= 2;
  return p;
}

// Work-items per group the products aim for (fewer where the device allows fewer).
std::size_t group_target(const Context& context) { return std::min<std::size_t>(256, context.device().max_work_group_size); }

template <class V>
void set_arg(cl::Kernel& kernel, cl_uint index, const V& value) {
  check(kernel.setArg(index, value), "clSetKernelArg", "setting a sparse product argument");
}

void require_group_size(const Context& context, const cl::Kernel& kernel, std::size_t group, const std::string& what) {
  cl_int err = CL_SUCCESS;
  const std::size_t limit = kernel.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(context.device().device, &err);
  check(err, "clGetKernelWorkGroupInfo", "asking for the work-group limit of " + what);
  if (limit < group) {
    throw UnsupportedFeature(context.device().label() + " runs " + what + " in work-groups of at most " +
                             std::to_string(limit) + " work-items; it needs " + std::to_string(group));
  }
}

template <class T>
const char* precision_name() {
  return std::is_same_v<T, float> ? "f32" : "f64";
}

template <class T>
void require_precision(const Context& context) {
  if (std::is_same_v<T, double> && !context.device().fp64) {
    throw UnsupportedFeature(context.device().label() + " has no double precision (cl_khr_fp64)");
  }
}

// Sets X and Y and enqueues the launches of one product on the compute queue.
template <class T>
cl::Event enqueue_launches(const Context& context, std::vector<detail::ProductLaunch>& launches, const DeviceVectors<T>& x,
                           DeviceVectors<T>& y, const std::vector<cl::Event>* wait, cl::Event* first) {
  cl::CommandQueue& queue = context.compute_queue();
  cl::Event event;
  if (launches.empty()) {
    check(queue.enqueueMarkerWithWaitList(wait, &event), "clEnqueueMarkerWithWaitList", "an empty sparse product");
    if (first != nullptr) *first = event;
  }
  for (std::size_t i = 0; i < launches.size(); ++i) {
    detail::ProductLaunch& launch = launches[i];
    set_arg(launch.kernel, 3, x.buffer().get());
    set_arg(launch.kernel, 4, y.buffer().get());
    check(queue.enqueueNDRangeKernel(launch.kernel, cl::NullRange, launch.global, launch.local, i == 0 ? wait : nullptr,
                                     &event),
          "clEnqueueNDRangeKernel", "launching a sparse product");
    if (i == 0 && first != nullptr) *first = event;
  }
  return event;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Matrices and vectors in device memory

template <class T>
DeviceBsr<T>::DeviceBsr(const Context& context, std::size_t rows, std::size_t cols, std::size_t block_size,
                        std::size_t block_cols, const std::vector<Index>& row_ptr, const std::vector<Index>& col,
                        const std::vector<T>& values, RowStats stats)
    : rows_(rows),
      cols_(cols),
      block_size_(block_size),
      block_cols_(block_cols),
      stats_(stats),
      row_ptr_(upload_array(context, row_ptr, "block row pointers")),
      col_(upload_array(context, col, "block columns")),
      values_(upload_array(context, values, "matrix values")) {
  require_precision<T>(context);
}

template <class T>
DeviceBsr<T>::DeviceBsr(const Context& context, const Bsr<T>& a)
    : DeviceBsr(context, (validate(a), a.rows), a.cols, a.block_size, a.block_cols, a.block_row_ptr, a.block_col, a.values,
                sparse::row_stats(a)) {}

template <class T>
DeviceBsr<T>::DeviceBsr(const Context& context, const Csr<T>& a)
    : DeviceBsr(context, (validate(a), a.rows), a.cols, 1, a.cols, a.row_ptr, a.col, a.values, sparse::row_stats(a.row_ptr)) {}

template <class T>
DeviceDia<T>::DeviceDia(const Context& context, const Dia<T>& a)
    : rows_((validate(a), a.rows)),
      cols_(a.cols),
      symmetric_(a.symmetric),
      offsets_(upload_array(context, a.offsets, "diagonal offsets")),
      values_(upload_array(context, a.values, "diagonal values")) {
  require_precision<T>(context);
  const auto constant_bytes = context.device().device.getInfo<CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE>();
  if (a.offsets.size() * sizeof(std::int32_t) > constant_bytes) {
    throw UnsupportedFeature(std::to_string(a.offsets.size()) + " diagonals do not fit the constant memory of " +
                             context.device().label() + " (" + std::to_string(constant_bytes) + " bytes)");
  }
}

template <class T>
DeviceVectors<T>::DeviceVectors(const Context& context, std::size_t rows, std::size_t k, std::size_t padded_rows)
    : context_(context), rows_(rows), k_(k) {
  if (k == 0) throw InvalidArgument("a set of vectors needs k >= 1");
  if (padded_rows == 0) padded_rows = rows;
  if (padded_rows < rows) throw InvalidArgument("padded_rows is below rows");
  buffer_ = DeviceBuffer<T>(context, std::max<std::size_t>(padded_rows * k, 1), "vectors");
  const T zero = 0;
  check(context.compute_queue().enqueueFillBuffer(buffer_.get(), zero, 0, buffer_.bytes()), "clEnqueueFillBuffer",
        "zeroing vectors");
}

template <class T>
void DeviceVectors<T>::upload(const std::vector<T>& values) {
  if (values.size() != rows_ * k_) {
    throw InvalidArgument("vectors: " + std::to_string(values.size()) + " values given, " + std::to_string(rows_) + " x " +
                          std::to_string(k_) + " expected");
  }
  if (!values.empty()) ziggurat::detail::write_buffer(context_.compute_queue(), buffer_.get(), values.data(), values.size() * sizeof(T));
}

template <class T>
std::vector<T> DeviceVectors<T>::download() const {
  std::vector<T> values(rows_ * k_);
  if (!values.empty()) ziggurat::detail::read_buffer(context_.compute_queue(), buffer_.get(), values.data(), values.size() * sizeof(T));
  return values;
}

template <class T>
DeviceVectors<T> input_vectors(const Context& context, const DeviceBsr<T>& a, std::size_t k) {
  return DeviceVectors<T>(context, a.cols(), k, a.block_cols() * a.block_size());
}

template <class T>
DeviceVectors<T> output_vectors(const Context& context, const DeviceBsr<T>& a, std::size_t k) {
  return DeviceVectors<T>(context, a.rows(), k, a.block_rows() * a.block_size());
}

// ---------------------------------------------------------------------------------------------
// Kernel variants

const char* to_string(BsrStrategy strategy) {
  switch (strategy) {
    case BsrStrategy::automatic: return "auto";
    case BsrStrategy::row: return "row";
    case BsrStrategy::group: return "group";
    case BsrStrategy::multirow: return "multirow";
  }
  return "?";
}

BsrStrategy parse_bsr_strategy(std::string_view text) {
  for (auto s : {BsrStrategy::automatic, BsrStrategy::row, BsrStrategy::group, BsrStrategy::multirow}) {
    if (text == to_string(s)) return s;
  }
  throw InvalidArgument("unknown block CSR kernel '" + std::string(text) + "': use auto, row, group or multirow");
}

std::string BsrKernel::name() const {
  if (strategy != BsrStrategy::multirow) return to_string(strategy);
  return "multirow/" + std::to_string(lanes) + (vector_width > 1 ? "/v" + std::to_string(vector_width) : "");
}

namespace {

// The inverse of BsrKernel::name: "group", "multirow/4", "multirow/1/v8".
BsrKernel parse_kernel_name(const std::string& name) {
  const auto slash = name.find('/');
  if (slash == std::string::npos) return {parse_bsr_strategy(name), 0, 0};
  const auto second = name.find("/v", slash + 1);
  const std::size_t lanes = std::stoul(name.substr(slash + 1, second - slash - 1));
  return {parse_bsr_strategy(name.substr(0, slash)), lanes, second == std::string::npos ? 1 : std::stoul(name.substr(second + 2))};
}

// The widest OpenCL vector (1, 2, 4, 8 or 16 values) that divides k and the vectors of every
// launch, so that multirow's vector loads stay aligned.
std::size_t widest_vector(std::size_t k, std::size_t per_launch) {
  std::size_t width = 16;
  while (k % width != 0 || per_launch % width != 0) width /= 2;
  return width;
}

std::size_t power_of_two_at_least(std::size_t n) {
  std::size_t p = 1;
  while (p < n) p *= 2;
  return p;
}

// One launch of a block CSR kernel: KC vectors from j0 on.
struct BsrLaunchShape {
  std::size_t kc, j0;
  std::size_t group = 0;     // work-items per group (0: the driver's choice, strategy row)
  std::size_t lanes = 0;     // multirow
  std::size_t width = 0;     // multirow
  std::size_t chunk = 0;     // group
  std::size_t groups = 0;    // work-groups (or work-items for row)
};

BsrLaunchShape shape_launch(const Context& context, const BsrKernel& kernel, std::size_t b, std::size_t kc,
                            std::size_t j0, const RowStats& stats, std::size_t value_bytes) {
  const std::size_t block_rows = stats.rows;
  const std::size_t target = group_target(context);
  const std::size_t outputs = b * kc;
  BsrLaunchShape shape{kc, j0};
  const auto too_wide = [&](std::size_t items) {
    return UnsupportedFeature(kernel.name() + " needs " + std::to_string(items) + " work-items per block row; " +
                              context.device().label() + " is used with groups of " + std::to_string(target));
  };
  switch (kernel.strategy) {
    case BsrStrategy::row:
      shape.groups = block_rows;
      break;
    case BsrStrategy::multirow: {
      shape.lanes = kernel.lanes;
      shape.width = kernel.vector_width;
      const std::size_t per_row = outputs / shape.width * shape.lanes;
      if (per_row > target) throw too_wide(per_row);
      shape.group = target / per_row * per_row;
      shape.groups = ceil_div(block_rows, target / per_row);
      break;
    }
    case BsrStrategy::group: {
      if (outputs > target) throw too_wide(outputs);
      // As many blocks at once as the longest row has (rounded up to a power of two), so that
      // short rows do not leave most of the group idle; fewer where the group or staging is full.
      shape.chunk = std::max<std::size_t>(1, std::min({target / outputs, kStagingBytes / (b * b * value_bytes),
                                                       power_of_two_at_least(stats.max)}));
      shape.group = shape.chunk * outputs;
      const std::size_t local = shape.chunk * (b * b * value_bytes + sizeof(cl_uint)) + shape.group * value_bytes;
      if (local > context.device().local_mem_bytes) {
        throw UnsupportedFeature("group needs " + std::to_string(local) + " bytes of local memory; " +
                                 context.device().label() + " has " + std::to_string(context.device().local_mem_bytes));
      }
      shape.groups = block_rows;
      break;
    }
    case BsrStrategy::automatic:
      throw InvalidArgument("BsrMultiplier needs a concrete kernel: resolve automatic with choose_bsr_kernel");
  }
  return shape;
}

// The multirow lanes of the rule: a power of two not above the mean row length, at most 32, and
// few enough that a block row's `outputs` work-items per lane fit one group.
std::size_t rule_lanes(const RowStats& stats, std::size_t outputs, std::size_t group) {
  const double fit = static_cast<double>(std::max<std::size_t>(1, group / outputs));
  return std::min<std::size_t>(32, largest_power_of_two_at_most(std::min(stats.mean, fit)));
}

}  // namespace

template <class T>
BsrMultiplier<T>::BsrMultiplier(const Context& context, const DeviceBsr<T>& a, std::size_t k, BsrKernel kernel)
    : context_(context),
      rows_(a.rows()),
      cols_(a.cols()),
      padded_rows_(a.block_rows() * a.block_size()),
      padded_cols_(a.block_cols() * a.block_size()),
      block_rows_(a.block_rows()),
      block_size_(a.block_size()),
      k_(k),
      kernel_(kernel),
      row_ptr_(a.row_ptr().get()),
      col_(a.col().get()),
      values_(a.values().get()) {
  if (k == 0) throw InvalidArgument("a product needs k >= 1 vectors");
  const std::size_t b = a.block_size();
  const std::size_t per_launch = std::min({kMaxVectorsPerLaunch, k, std::max<std::size_t>(1, group_target(context) / b)});
  if (kernel_.strategy == BsrStrategy::multirow) resolve_multirow(k, per_launch, a.row_stats(), group_target(context));
  for (std::size_t j0 = 0; j0 < k; j0 += per_launch) {
    const BsrLaunchShape shape = shape_launch(context, kernel_, b, std::min(per_launch, k - j0), j0, a.row_stats(), sizeof(T));
    BuildOptions options;
    options.real_type<T>().define("B", b).define("K", k).define("KC", shape.kc);
    if (shape.group != 0) options.define("GROUP", shape.group);
    if (shape.lanes != 0) options.define("LANES", shape.lanes).define("VW", shape.width);
    if (shape.chunk != 0) options.define("CHUNK", shape.chunk);
    const std::string name = "bsr_" + std::string(to_string(kernel_.strategy));
    detail::ProductLaunch launch{context.kernel(context.program("spmm", options.str()), name.c_str()), {}, {}};
    if (shape.group != 0) {
      require_group_size(context, launch.kernel, shape.group, name);
      launch.global = cl::NDRange(shape.groups * shape.group);
      launch.local = cl::NDRange(shape.group);
    } else {
      launch.global = cl::NDRange(shape.groups);
      launch.local = cl::NullRange;
    }
    set_arg(launch.kernel, 0, row_ptr_);
    set_arg(launch.kernel, 1, col_);
    set_arg(launch.kernel, 2, values_);
    set_arg(launch.kernel, 5, u32(block_rows_, "block rows"));
    set_arg(launch.kernel, 6, u32(j0, "first vector"));
    if (block_rows_ > 0) launches_.push_back(std::move(launch));
  }
}

namespace {

template <class T>
void check_operands(const DeviceVectors<T>& x, const DeviceVectors<T>& y, std::size_t rows, std::size_t cols,
                    std::size_t padded_rows, std::size_t padded_cols, std::size_t k) {
  const auto describe = [](const DeviceVectors<T>& v) {
    return std::to_string(v.rows()) + " x " + std::to_string(v.k()) + " (padded to " + std::to_string(v.padded_rows()) + ")";
  };
  if (x.rows() != cols || x.k() != k || x.padded_rows() < padded_cols) {
    throw InvalidArgument("X is " + describe(x) + "; the product needs " + std::to_string(cols) + " x " + std::to_string(k) +
                          " padded to at least " + std::to_string(padded_cols) + " rows (use input_vectors)");
  }
  if (y.rows() != rows || y.k() != k || y.padded_rows() < padded_rows) {
    throw InvalidArgument("Y is " + describe(y) + "; the product needs " + std::to_string(rows) + " x " + std::to_string(k) +
                          " padded to at least " + std::to_string(padded_rows) + " rows (use output_vectors)");
  }
  if (&x == &y || x.buffer().get()() == y.buffer().get()()) throw InvalidArgument("X and Y must be different vectors");
}

}  // namespace

template <class T>
void BsrMultiplier<T>::resolve_multirow(std::size_t k, std::size_t per_launch, const RowStats& stats, std::size_t group) {
  const std::size_t widest = widest_vector(k, per_launch);
  if (kernel_.vector_width == 0) kernel_.vector_width = widest;
  const std::size_t width = kernel_.vector_width;
  if (width > widest || (width & (width - 1)) != 0) {
    throw InvalidArgument("multirow vector width " + std::to_string(width) + " must be a power of two dividing k = " +
                          std::to_string(k) + " (and " + std::to_string(per_launch) + ", the vectors per launch)");
  }
  if (kernel_.lanes == 0) kernel_.lanes = rule_lanes(stats, block_size_ * per_launch / width, group);
  if ((kernel_.lanes & (kernel_.lanes - 1)) != 0) {
    throw InvalidArgument("multirow lanes must be a power of two, not " + std::to_string(kernel_.lanes));
  }
}

template <class T>
cl::Event BsrMultiplier<T>::enqueue(const DeviceVectors<T>& x, DeviceVectors<T>& y, const std::vector<cl::Event>* wait,
                                    cl::Event* first) {
  check_operands(x, y, rows_, cols_, padded_rows_, padded_cols_, k_);
  return enqueue_launches(context_, launches_, x, y, wait, first);
}

template <class T>
DiaMultiplier<T>::DiaMultiplier(const Context& context, const DeviceDia<T>& a, std::size_t k)
    : context_(context), rows_(a.rows()), cols_(a.cols()), k_(k), offsets_(a.offsets().get()), values_(a.values().get()) {
  if (k == 0) throw InvalidArgument("a product needs k >= 1 vectors");
  for (std::size_t j0 = 0; j0 < k; j0 += kMaxVectorsPerLaunch) {
    const std::size_t kc = std::min(kMaxVectorsPerLaunch, k - j0);
    const std::string options = BuildOptions().real_type<T>().define("K", k).define("KC", kc).str();
    detail::ProductLaunch launch{context.kernel(context.program("spmm", options), "dia"), cl::NDRange(rows_ * kc), cl::NullRange};
    set_arg(launch.kernel, 0, offsets_);
    set_arg(launch.kernel, 1, u32(a.diagonals(), "diagonals"));
    set_arg(launch.kernel, 2, values_);
    set_arg(launch.kernel, 5, u32(rows_, "rows"));
    set_arg(launch.kernel, 6, u32(cols_, "columns"));
    set_arg(launch.kernel, 7, cl_uint{a.symmetric() ? 1u : 0u});
    set_arg(launch.kernel, 8, u32(j0, "first vector"));
    if (rows_ > 0) launches_.push_back(std::move(launch));
  }
}

template <class T>
cl::Event DiaMultiplier<T>::enqueue(const DeviceVectors<T>& x, DeviceVectors<T>& y, const std::vector<cl::Event>* wait,
                                    cl::Event* first) {
  check_operands(x, y, rows_, cols_, rows_, cols_, k_);
  return enqueue_launches(context_, launches_, x, y, wait, first);
}

// ---------------------------------------------------------------------------------------------
// The automatic choice

namespace {

// The kind of problem a choice holds for: precision, b, k, row length (log2 of the mean blocks
// per row), whether rows are about even, and size (log10 of the stored values).
template <class T>
std::string problem_key(const DeviceBsr<T>& a, std::size_t k) {
  const RowStats& s = a.row_stats();
  const long length = s.mean >= 1 ? std::lround(std::log2(s.mean)) : 0;
  const bool even = static_cast<double>(s.max) <= 2 * s.mean + 2;
  const double stored = static_cast<double>(a.blocks() * a.block_size() * a.block_size());
  const long size = stored >= 1 ? static_cast<long>(std::floor(std::log10(stored))) : 0;
  return "bsr " + std::string(precision_name<T>()) + " b" + std::to_string(a.block_size()) + " k" + std::to_string(k) +
         " len" + std::to_string(length) + (even ? " even" : " uneven") + " size" + std::to_string(size);
}

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

using Clock = std::chrono::steady_clock;

// Seconds per product, host clock: after a warm-up, enough products back to back to fill about
// 20 ms (3 at least, 100 at most), the mean of them.
template <class T>
double time_products(const Context& context, BsrMultiplier<T>& product, const DeviceVectors<T>& x, DeviceVectors<T>& y) {
  const auto run = [&](std::size_t times) {
    const auto start = Clock::now();
    for (std::size_t i = 0; i < times; ++i) product.enqueue(x, y);
    context.compute_queue().finish();
    return std::chrono::duration<double>(Clock::now() - start).count() / static_cast<double>(times);
  };
  const double first = run(1);
  const auto times = static_cast<std::size_t>(std::clamp(0.02 / std::max(first, 1e-9), 3.0, 100.0));
  return run(times);
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

// Timings seen in this process, by device and problem: the profile on disk is read once per kind.
std::mutex known_mutex;
std::map<std::string, std::vector<std::pair<std::string, double>>> known;

std::optional<std::vector<std::pair<std::string, double>>> recall(const Context& context, const std::string& key) {
  const std::string id = context.device().label() + "\n" + key;
  {
    const std::lock_guard<std::mutex> lock(known_mutex);
    if (const auto found = known.find(id); found != known.end()) return found->second;
  }
  const auto profile = load_cached_profile(context.device());
  if (!profile) return std::nullopt;
  for (const VariantTimings& v : profile->variant_timings) {
    if (v.key != key) continue;
    const std::lock_guard<std::mutex> lock(known_mutex);
    known[id] = v.seconds;
    return v.seconds;
  }
  return std::nullopt;
}

void remember(const Context& context, const std::string& key, const std::vector<std::pair<std::string, double>>& seconds) {
  {
    const std::lock_guard<std::mutex> lock(known_mutex);
    known[context.device().label() + "\n" + key] = seconds;
  }
  if (profile_path(context.device()).empty()) return;  // caching is off
  DeviceProfile profile = load_or_calibrate(context);
  auto& entries = profile.variant_timings;
  entries.erase(std::remove_if(entries.begin(), entries.end(), [&](const VariantTimings& v) { return v.key == key; }),
                entries.end());
  entries.push_back({key, seconds});
  // A profile that cannot be written is measured again next time; the choice stands either way.
  store_profile(context.device(), profile);
}

}  // namespace

template <class T>
BsrChoice choose_bsr_kernel(const Context& context, const DeviceBsr<T>& a, std::size_t k) {
  if (k == 0) throw InvalidArgument("a product needs k >= 1 vectors");
  BsrChoice choice;
  choice.key = problem_key(a, k);
  if (auto seconds = recall(context, choice.key)) {
    choice.seconds = std::move(*seconds);
  } else {
    choice.seconds = measure_variants(context, a, k);
    choice.measured_now = true;
    remember(context, choice.key, choice.seconds);
  }
  choice.kernel = parse_kernel_name(choice.seconds.front().first);
  return choice;
}

template <class T>
double product_bytes(const DeviceBsr<T>& a, std::size_t k) {
  const double b = static_cast<double>(a.block_size());
  const double blocks = static_cast<double>(a.blocks());
  return blocks * b * b * sizeof(T) + (blocks + static_cast<double>(a.block_rows()) + 1) * sizeof(Index) +
         static_cast<double>((a.rows() + a.cols()) * k * sizeof(T));
}

template <class T>
double product_bytes(const DeviceDia<T>& a, std::size_t k) {
  const double d = static_cast<double>(a.diagonals());
  return d * static_cast<double>(a.rows() * sizeof(T)) + d * sizeof(std::int32_t) +
         static_cast<double>((a.rows() + a.cols()) * k * sizeof(T));
}

// ---------------------------------------------------------------------------------------------
// Blocking products

template <class T>
std::vector<T> multiply(const Context& context, const DeviceBsr<T>& a, const std::vector<T>& x, std::size_t k,
                        BsrKernel kernel) {
  if (kernel.strategy == BsrStrategy::automatic) kernel = choose_bsr_kernel(context, a, k).kernel;
  DeviceVectors<T> dx = input_vectors(context, a, k);
  DeviceVectors<T> dy = output_vectors(context, a, k);
  dx.upload(x);
  BsrMultiplier<T> product(context, a, k, kernel);
  product.enqueue(dx, dy);
  return dy.download();
}

template <class T>
std::vector<T> multiply(const Context& context, const DeviceDia<T>& a, const std::vector<T>& x, std::size_t k) {
  DeviceVectors<T> dx(context, a.cols(), k);
  DeviceVectors<T> dy(context, a.rows(), k);
  dx.upload(x);
  DiaMultiplier<T> product(context, a, k);
  product.enqueue(dx, dy);
  return dy.download();
}

#define ZIGGURAT_SPMM(T)                                                                                      \
  template class DeviceBsr<T>;                                                                                \
  template class DeviceDia<T>;                                                                                \
  template class DeviceVectors<T>;                                                                            \
  template class BsrMultiplier<T>;                                                                            \
  template class DiaMultiplier<T>;                                                                            \
  template DeviceVectors<T> input_vectors(const Context&, const DeviceBsr<T>&, std::size_t);                  \
  template DeviceVectors<T> output_vectors(const Context&, const DeviceBsr<T>&, std::size_t);                 \
  template double product_bytes(const DeviceBsr<T>&, std::size_t);                                           \
  template double product_bytes(const DeviceDia<T>&, std::size_t);                                           \
  template BsrChoice choose_bsr_kernel(const Context&, const DeviceBsr<T>&, std::size_t);                     \
  template std::vector<T> multiply(const Context&, const DeviceBsr<T>&, const std::vector<T>&, std::size_t,   \
                                   BsrKernel);                                                                \
  template std::vector<T> multiply(const Context&, const DeviceDia<T>&, const std::vector<T>&, std::size_t);
ZIGGURAT_SPMM(float)
ZIGGURAT_SPMM(double)
#undef ZIGGURAT_SPMM

}  // namespace ziggurat::sparse
