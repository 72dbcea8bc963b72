#include "ziggurat/ops/spmm.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

#include "base/integer_math.hpp"
#include "base/kernel_launch.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/program.hpp"

namespace ziggurat::sparse {

namespace {

using ziggurat::detail::ceil_div;
using ziggurat::detail::power_of_two_at_least;
using ziggurat::detail::power_of_two_at_most;

constexpr std::size_t kMaxVectorsPerLaunch = 16;
// Staged blocks of the group strategy take at most this much local memory, well inside the
// 32 KiB every OpenCL GPU has (never relying on the large local memory of CPU devices).
constexpr std::size_t kStagingBytes = 16 * 1024;

cl_uint u32(std::size_t value, const char* what) {
  if (value > std::numeric_limits<cl_uint>::max()) {
    throw InvalidArgument(std::string(what) + " = " + std::to_string(value) + " does not fit the kernels' 32-bit indices");
  }
  return static_cast<cl_uint>(value);
}

// Work-items per group the products aim for (fewer where the device allows fewer).
std::size_t group_target(const Context& context) { return std::min<std::size_t>(256, context.device().max_work_group_size); }

// Enqueues the launches of one product on the compute queue; `set_args(launch, x, y)` gives each
// kernel its arguments.
template <class T, class SetArgs>
cl::Event enqueue_launches(const Context& context, std::vector<detail::ProductLaunch>& launches, const DeviceVectors<T>& x,
                           DeviceVectors<T>& y, const std::vector<cl::Event>* wait, cl::Event* first, SetArgs set_args) {
  cl::CommandQueue& queue = context.compute_queue();
  cl::Event event;
  if (launches.empty()) {
    check(queue.enqueueMarkerWithWaitList(wait, &event), "clEnqueueMarkerWithWaitList", "an empty sparse product");
    if (first != nullptr) *first = event;
  }
  for (std::size_t i = 0; i < launches.size(); ++i) {
    detail::ProductLaunch& launch = launches[i];
    set_args(launch, x.buffer().get(), y.buffer().get());
    check(queue.enqueueNDRangeKernel(launch.kernel, cl::NullRange, launch.global, launch.local, i == 0 ? wait : nullptr,
                                     &event),
          "clEnqueueNDRangeKernel", "launching a sparse product");
    if (i == 0 && first != nullptr) *first = event;
  }
  return event;
}

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

// ---------------------------------------------------------------------------------------------
// Kernel variants

const char* to_string(BsrStrategy strategy) {
  switch (strategy) {
    case BsrStrategy::row: return "row";
    case BsrStrategy::group: return "group";
    case BsrStrategy::multirow: return "multirow";
  }
  return "?";
}

BsrStrategy parse_bsr_strategy(std::string_view text) {
  for (auto s : {BsrStrategy::row, BsrStrategy::group, BsrStrategy::multirow}) {
    if (text == to_string(s)) return s;
  }
  throw InvalidArgument("unknown block CSR kernel '" + std::string(text) + "': use row, group or multirow");
}

std::string BsrKernel::name() const {
  if (strategy != BsrStrategy::multirow) return to_string(strategy);
  return "multirow/" + std::to_string(lanes) + (vector_width > 1 ? "/v" + std::to_string(vector_width) : "");
}

BsrKernel parse_bsr_kernel(const std::string& name) {
  const auto slash = name.find('/');
  if (slash == std::string::npos) return {parse_bsr_strategy(name), 0, 0};
  const auto second = name.find("/v", slash + 1);
  const auto number = [&](const std::string& text) {
    std::size_t used = 0;
    unsigned long value = 0;
    try {
      value = std::stoul(text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != text.size()) throw InvalidArgument("'" + name + "' is not a block CSR kernel name");
    return static_cast<std::size_t>(value);
  };
  const BsrKernel kernel{parse_bsr_strategy(name.substr(0, slash)), number(name.substr(slash + 1, second - slash - 1)),
                         second == std::string::npos ? 1 : number(name.substr(second + 2))};
  if (kernel.strategy != BsrStrategy::multirow) throw InvalidArgument("'" + name + "' is not a block CSR kernel name");
  return kernel;
}

namespace {

// The widest OpenCL vector (1, 2, 4, 8 or 16 values) that divides k and the vectors of every
// launch, so that multirow's vector loads stay aligned.
std::size_t widest_vector(std::size_t k, std::size_t per_launch) {
  return ziggurat::detail::widest_vector_dividing(std::gcd(k, per_launch));
}

// One launch of a block CSR kernel: KC vectors.
struct BsrLaunchShape {
  std::size_t kc;
  std::size_t group = 0;     // work-items per group (0: the driver's choice, strategy row)
  std::size_t lanes = 0;     // multirow
  std::size_t width = 0;     // multirow
  std::size_t chunk = 0;     // group
  std::size_t groups = 0;    // work-groups (or work-items for row)
};

BsrLaunchShape shape_launch(const Context& context, const BsrKernel& kernel, std::size_t b, std::size_t kc,
                            const RowStats& stats, std::size_t value_bytes) {
  const std::size_t block_rows = stats.rows;
  const std::size_t target = group_target(context);
  const std::size_t outputs = b * kc;
  BsrLaunchShape shape{kc};
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
  }
  return shape;
}

// The multirow lanes of the rule: a power of two not above the mean row length, at most 32, and
// few enough that a block row's `outputs` work-items per lane fit one group. One on CPU devices:
// lanes meet in local memory after a barrier, which splits PoCL's loop over the work-items (a
// CSR product of 1 M rows and 7 M values took 9.3 ms with 4 lanes, 6.5 ms with 1).
std::size_t rule_lanes(const DeviceInfo& device, const RowStats& stats, std::size_t outputs, std::size_t group) {
  if (device.type == DeviceType::cpu) return 1;
  const double fit = static_cast<double>(std::max<std::size_t>(1, group / outputs));
  return std::min<std::size_t>(32, power_of_two_at_most(static_cast<std::size_t>(std::min(stats.mean, fit))));
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Products

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
  u32(block_rows_, "block rows");
  const std::size_t b = a.block_size();
  const std::size_t per_launch = std::min({kMaxVectorsPerLaunch, k, std::max<std::size_t>(1, group_target(context) / b)});
  if (kernel_.strategy == BsrStrategy::multirow) resolve_multirow(k, per_launch, a.row_stats(), group_target(context));
  for (std::size_t j0 = 0; j0 < k; j0 += per_launch) {
    const BsrLaunchShape shape = shape_launch(context, kernel_, b, std::min(per_launch, k - j0), a.row_stats(), sizeof(T));
    BuildOptions options;
    options.real_type<T>().define("B", b).define("K", k).define("KC", shape.kc);
    if (shape.group != 0) options.define("GROUP", shape.group);
    if (shape.lanes != 0) options.define("LANES", shape.lanes).define("VW", shape.width);
    if (shape.chunk != 0) options.define("CHUNK", shape.chunk);
    const std::string name = "bsr_" + std::string(to_string(kernel_.strategy));
    detail::ProductLaunch launch{context.kernel(context.program("spmm", options.str()), name.c_str()), {}, {}, j0};
    if (shape.group != 0) {
      ziggurat::detail::require_work_group(context.device(), launch.kernel, shape.group, name);
      launch.global = cl::NDRange(shape.groups * shape.group);
      launch.local = cl::NDRange(shape.group);
    } else {
      launch.global = cl::NDRange(shape.groups);
      launch.local = cl::NullRange;
    }
    if (block_rows_ > 0) launches_.push_back(std::move(launch));
  }
}

template <class T>
void BsrMultiplier<T>::resolve_multirow(std::size_t k, std::size_t per_launch, const RowStats& stats, std::size_t group) {
  const std::size_t widest = widest_vector(k, per_launch);
  if (kernel_.vector_width == 0) kernel_.vector_width = widest;
  const std::size_t width = kernel_.vector_width;
  if (width > widest || !ziggurat::detail::is_power_of_two(width)) {
    throw InvalidArgument("multirow vector width " + std::to_string(width) + " must be a power of two dividing k = " +
                          std::to_string(k) + " (and " + std::to_string(per_launch) + ", the vectors per launch)");
  }
  if (kernel_.lanes == 0) kernel_.lanes = rule_lanes(context_.device(), stats, block_size_ * per_launch / width, group);
  if (!ziggurat::detail::is_power_of_two(kernel_.lanes)) {
    throw InvalidArgument("multirow lanes must be a power of two, not " + std::to_string(kernel_.lanes));
  }
}

template <class T>
cl::Event BsrMultiplier<T>::enqueue(const DeviceVectors<T>& x, DeviceVectors<T>& y, const std::vector<cl::Event>* wait,
                                    cl::Event* first) {
  check_operands(x, y, rows_, cols_, padded_rows_, padded_cols_, k_);
  // The arguments of bsr_row, bsr_group and bsr_multirow (spmm.cl).
  return enqueue_launches(context_, launches_, x, y, wait, first, [&](detail::ProductLaunch& launch, auto& xb, auto& yb) {
    ziggurat::detail::set_args(launch.kernel, "a block CSR product", row_ptr_, col_, values_, xb, yb,
                               static_cast<cl_uint>(block_rows_), static_cast<cl_uint>(launch.first_vector));
  });
}

template <class T>
DiaMultiplier<T>::DiaMultiplier(const Context& context, const DeviceDia<T>& a, std::size_t k)
    : context_(context), rows_(a.rows()), cols_(a.cols()), k_(k), offsets_(a.offsets().get()), values_(a.values().get()) {
  if (k == 0) throw InvalidArgument("a product needs k >= 1 vectors");
  const auto constant_bytes = context.device().device.getInfo<CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE>();
  if (a.diagonals() * sizeof(std::int32_t) > constant_bytes) {
    throw UnsupportedFeature(std::to_string(a.diagonals()) + " diagonals do not fit the constant memory of " +
                             context.device().label() + " (" + std::to_string(constant_bytes) + " bytes)");
  }
  diagonals_ = u32(a.diagonals(), "diagonals");
  symmetric_ = a.symmetric() ? 1u : 0u;
  u32(rows_, "rows");
  u32(cols_, "columns");
  for (std::size_t j0 = 0; j0 < k; j0 += kMaxVectorsPerLaunch) {
    const std::size_t kc = std::min(kMaxVectorsPerLaunch, k - j0);
    const std::string options = BuildOptions().real_type<T>().define("K", k).define("KC", kc).str();
    detail::ProductLaunch launch{context.kernel(context.program("spmm", options), "dia"), cl::NDRange(rows_ * kc),
                                 cl::NullRange, j0};
    if (rows_ > 0) launches_.push_back(std::move(launch));
  }
}

template <class T>
cl::Event DiaMultiplier<T>::enqueue(const DeviceVectors<T>& x, DeviceVectors<T>& y, const std::vector<cl::Event>* wait,
                                    cl::Event* first) {
  check_operands(x, y, rows_, cols_, rows_, cols_, k_);
  // The arguments of dia (spmm.cl).
  return enqueue_launches(context_, launches_, x, y, wait, first, [&](detail::ProductLaunch& launch, auto& xb, auto& yb) {
    ziggurat::detail::set_args(launch.kernel, "a DIA product", offsets_, diagonals_, values_, xb, yb,
                               static_cast<cl_uint>(rows_), static_cast<cl_uint>(cols_), symmetric_,
                               static_cast<cl_uint>(launch.first_vector));
  });
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

template <class T>
std::vector<T> multiply(const Context& context, const DeviceBsr<T>& a, const std::vector<T>& x, std::size_t k,
                        BsrKernel kernel) {
  BsrMultiplier<T> product(context, a, k, kernel);
  DeviceVectors<T> dx = input_vectors(context, a, k);
  DeviceVectors<T> dy = output_vectors(context, a, k);
  dx.upload(x);
  product.enqueue(dx, dy);
  return dy.download();
}

template <class T>
std::vector<T> multiply(const Context& context, const DeviceDia<T>& a, const std::vector<T>& x, std::size_t k) {
  DiaMultiplier<T> product(context, a, k);
  DeviceVectors<T> dx(context, a.cols(), k);
  DeviceVectors<T> dy(context, a.rows(), k);
  dx.upload(x);
  product.enqueue(dx, dy);
  return dy.download();
}

#define ZIGGURAT_SPMM(T)                                                                                      \
  template class BsrMultiplier<T>;                                                                            \
  template class DiaMultiplier<T>;                                                                            \
  template double product_bytes(const DeviceBsr<T>&, std::size_t);                                           \
  template double product_bytes(const DeviceDia<T>&, std::size_t);                                           \
  template std::vector<T> multiply(const Context&, const DeviceBsr<T>&, const std::vector<T>&, std::size_t,   \
                                   BsrKernel);                                                                \
  template std::vector<T> multiply(const Context&, const DeviceDia<T>&, const std::vector<T>&, std::size_t);
ZIGGURAT_SPMM(float)
ZIGGURAT_SPMM(double)
#undef ZIGGURAT_SPMM

}  // namespace ziggurat::sparse
