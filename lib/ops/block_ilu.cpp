#include "ziggurat/ops/block_ilu.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>

#include "base/integer_math.hpp"
#include "base/kernel_launch.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/precision.hpp"
#include "ziggurat/base/program.hpp"

namespace ziggurat::sparse {

namespace {

using ziggurat::detail::round_up;
using ziggurat::detail::set_arg;
using ziggurat::detail::set_args;

constexpr cl_uint kNoFailure = std::numeric_limits<cl_uint>::max();
constexpr std::size_t kLocal = 64;

template <class V>
DeviceBuffer<V> upload(const Context& context, const std::vector<V>& values, const char* purpose) {
  DeviceBuffer<V> buffer(context, values.size(), purpose);
  copy_to_device(context.compute_queue(), values.data(), buffer);
  return buffer;
}

template <class T>
const cl::Program& ilu_program(const Context& context, std::size_t b, std::size_t k) {
  BuildOptions options;
  options.real_type<T>().define("B", b).define("K", k);
  return context.program("block_ilu", options.str());
}

void check_k(std::size_t k) {
  if (k < 1 || k > 16) throw InvalidArgument("preconditioners take 1 to 16 vectors, not " + std::to_string(k));
}

// Enqueues `kernel` over `global` work-items in groups of `local`; its event, or none unless
// `timed` (an event costs the host a little at every launch of a sweep's hundreds).
cl::Event enqueue(const Context& context, cl::Kernel& kernel, std::size_t global, std::size_t local, const char* what,
                  bool timed = true) {
  cl::Event event;
  check(context.compute_queue().enqueueNDRangeKernel(kernel, cl::NullRange, global, local, nullptr,
                                                     timed ? &event : nullptr),
        "clEnqueueNDRangeKernel", what);
  return event;
}

// `items` work-items, rounded up to groups of kLocal.
cl::Event launch(const Context& context, cl::Kernel& kernel, std::size_t items, const char* what, bool timed = true) {
  return enqueue(context, kernel, round_up(items, kLocal), kLocal, what, timed);
}

// The failure status (blocking): the failed row, or kNoFailure.
cl_uint read_status(const Context& context, const DeviceBuffer<Index>& status) {
  cl_uint failed = kNoFailure;
  check(context.compute_queue().enqueueReadBuffer(status.get(), CL_TRUE, 0, sizeof(failed), &failed),
        "clEnqueueReadBuffer", "reading the factorisation's status");
  return failed;
}

// Reads the failure status and throws ZeroPivot for a failed row.
void check_status(const Context& context, const DeviceBuffer<Index>& status, double shift) {
  const cl_uint failed = read_status(context, status);
  if (failed != kNoFailure) throw ZeroPivot(failed, pivot_failure_message(failed, -1, shift));
}

// Writes the pattern's diagonal changes into the device copy of the values (one scatter).
template <class T>
void change_diagonal(const Context& context, const cl::Program& program, const IluPattern<T>& pattern,
                     std::size_t b, DeviceBuffer<T>& values) {
  if (pattern.changes.empty()) return;
  std::vector<cl_ulong> at;
  std::vector<T> to;
  for (const DiagonalChange<T>& change : pattern.changes) {
    at.push_back(pattern.position(change, b));
    to.push_back(change.value);
  }
  const DeviceBuffer<cl_ulong> positions = upload(context, at, "ILU diagonal changes");
  const DeviceBuffer<T> new_values = upload(context, to, "ILU diagonal changes");
  cl::Kernel scatter = context.kernel(program, "scatter");
  set_args(scatter, "scatter", values.get(), positions.get(), new_values.get(), cl_uint(to.size()));
  launch(context, scatter, to.size(), "changing the ILU diagonal");
}

// The levels cut into chunks of at most `rows` rows: `ptr`, offsets into the level rows (first 0);
// `earlier`, for each chunk the number of chunks of the levels before its own (what it waits for).
struct Chunks {
  std::vector<Index> ptr{0}, earlier;
};

Chunks chunks(const LevelSets& levels, std::size_t rows) {
  Chunks c;
  for (std::size_t level = 0; level < levels.levels(); ++level) {
    const auto before = static_cast<Index>(c.earlier.size());
    for (Index at = levels.level_ptr[level]; at < levels.level_ptr[level + 1];) {
      at = static_cast<Index>(std::min<std::size_t>(at + rows, levels.level_ptr[level + 1]));
      c.ptr.push_back(at);
      c.earlier.push_back(before);
    }
  }
  return c;
}

TriangularSweep resolve(TriangularSweep sweep, const DeviceInfo& device, const LevelSets& lower,
                        const LevelSets& upper) {
  if (sweep != TriangularSweep::automatic) return sweep;
  if (std::max(lower.levels(), upper.levels()) <= kSyncFreeLevels) return TriangularSweep::levels;
  return prefers_sequential_sweeps(device) ? TriangularSweep::sequential : TriangularSweep::sync_free;
}

}  // namespace

std::size_t chosen_jacobi_sweeps(double contraction) {
  if (!(contraction < 1)) return kMostChosenJacobiSweeps;  // no contraction bound (or NaN): the most
  if (contraction <= kJacobiSweepResidue) return 1;
  const double sweeps = std::ceil(std::log(kJacobiSweepResidue) / std::log(contraction));
  return std::min<std::size_t>(kMostChosenJacobiSweeps, static_cast<std::size_t>(sweeps));
}

bool prefers_sequential_sweeps(const DeviceInfo& device) {
  return device.type == DeviceType::cpu && device.compute_units <= kSequentialSweepCores;
}

const char* to_string(TriangularSweep sweep) {
  switch (sweep) {
    case TriangularSweep::levels: return "levels";
    case TriangularSweep::sync_free: return "sync-free";
    case TriangularSweep::sequential: return "sequential";
    case TriangularSweep::jacobi: return "jacobi";
    case TriangularSweep::automatic: return "auto";
  }
  return "?";
}

TriangularSweep parse_triangular_sweep(std::string_view text) {
  for (auto s : {TriangularSweep::levels, TriangularSweep::sync_free, TriangularSweep::sequential,
                 TriangularSweep::jacobi, TriangularSweep::automatic}) {
    if (text == to_string(s)) return s;
  }
  throw InvalidArgument("unknown triangular sweep '" + std::string(text) +
                        "': use levels, sync-free, sequential, jacobi or auto");
}

template <class T>
DeviceBlockIlu<T>::DeviceBlockIlu(const Context& context, const DeviceBsr<T>& matrix, const Bsr<T>& a,
                                  const IluPattern<T>& pattern, std::size_t k, double shift, TriangularSweep sweep,
                                  std::optional<std::size_t> jacobi_sweeps)
    : context_(context),
      block_size_(a.block_size),
      k_(k),
      block_rows_(a.block_rows),
      levels_(sparse::lower_and_upper_levels(a)),
      sweep_(resolve(sweep, context.device(), levels_.lower, levels_.upper)) {
  require_precision<T>(context.device(), "block ILU(0) in double");
  check_k(k);
  if (matrix.block_rows() != a.block_rows || matrix.blocks() != a.block_col.size() || matrix.block_size() != a.block_size) {
    throw InvalidArgument("DeviceBlockIlu: the device matrix is not the host matrix given with it");
  }
  prepare_solves(a, pattern.diagonal, &matrix);
  status_ = upload(context, std::vector<Index>{kNoFailure}, "ILU status");
  values_ = DeviceBuffer<T>(context, matrix.values().size(), "ILU factors");
  const cl::Program& program = ilu_program<T>(context, block_size_, k_);
  const auto load_values = [&] {
    ziggurat::detail::copy_buffer(context.compute_queue(), matrix.values().get(), values_.get(), values_.bytes());
    change_diagonal(context, program, pattern, block_size_, values_);
  };
  load_values();
  // The same factors either way; one work-item is the CPU's choice, never a GPU's. A singular
  // block stops it, and the levels factorise again to name the row every sweep names.
  const bool sequential = sweep_ == TriangularSweep::sequential && context.device().type == DeviceType::cpu;
  if (sequential) {
    if (const std::optional<Span> span = factorize_sequentially(program)) {
      factorization_ = *span;
      return;
    }
    load_values();
  }
  factorization_ = factorize(program, shift);
  split_factors(jacobi_sweeps);
}

template <class T>
DeviceBlockIlu<T>::DeviceBlockIlu(const Context& context, const Bsr<T>& a, std::size_t k, double shift,
                                  TriangularSweep sweep, std::optional<std::size_t> jacobi_sweeps)
    : DeviceBlockIlu(context, DeviceBsr<T>(context, a), a, ilu_pattern(a, shift), k, shift, sweep, jacobi_sweeps) {}

template <class T>
DeviceBlockIlu<T>::DeviceBlockIlu(const Context& context, const Bsr<T>& factors, const std::vector<Index>& diagonal,
                                  std::size_t k, TriangularSweep sweep, std::optional<std::size_t> jacobi_sweeps)
    : context_(context),
      block_size_(factors.block_size),
      k_(k),
      block_rows_(factors.block_rows),
      levels_(sparse::lower_and_upper_levels(factors)),
      sweep_(resolve(sweep, context.device(), levels_.lower, levels_.upper)) {
  require_precision<T>(context.device(), "block ILU in double");
  check_k(k);
  if (diagonal.size() != factors.block_rows) {
    throw InvalidArgument("DeviceBlockIlu: " + std::to_string(diagonal.size()) + " diagonal positions for " +
                          std::to_string(factors.block_rows) + " block rows");
  }
  prepare_solves(factors, diagonal, nullptr);
  values_ = upload(context, factors.values, "ILU factors");
  split_factors(jacobi_sweeps);
}

// The Jacobi sweeps' copy of the factors, split in two, and each triangle's sweeps: those given,
// or chosen from the triangle's contraction (nothing for the other sweeps).
template <class T>
void DeviceBlockIlu<T>::split_factors(std::optional<std::size_t> jacobi_sweeps) {
  if (sweep_ != TriangularSweep::jacobi) return;
  const cl::Program& program = ilu_program<T>(context_, block_size_, k_);
  cl::Kernel split = context_.kernel(program, "split_factors");
  set_args(split, "split_factors", row_ptr_, col_, diagonal_.get(), values_.get(), cl_uint(block_rows_),
           lower_ptr_.get(), upper_ptr_.get(), lower_col_.get(), lower_values_.get(), upper_col_.get(),
           upper_values_.get());
  launch(context_, split, block_rows_, "splitting the ILU factors for Jacobi sweeps");
  if (jacobi_sweeps) {
    lower_sweeps_ = upper_sweeps_ = *jacobi_sweeps;
    return;
  }
  // The largest row sums as float bits (an order-keeping integer for numbers >= 0), blocking.
  DeviceBuffer<cl_uint> most = upload(context_, std::vector<cl_uint>(2, 0), "ILU factors' contraction");
  cl::Kernel contraction = context_.kernel(program, "factor_contraction");
  set_args(contraction, "factor_contraction", row_ptr_, diagonal_.get(), values_.get(), cl_uint(block_rows_), most.get());
  launch(context_, contraction, block_rows_ * block_size_, "measuring the ILU factors' contraction");
  std::array<float, 2> c{};
  check(context_.compute_queue().enqueueReadBuffer(most.get(), CL_TRUE, 0, sizeof(c), c.data()), "clEnqueueReadBuffer",
        "reading the ILU factors' contraction");
  lower_sweeps_ = chosen_jacobi_sweeps(c[0]);
  upper_sweeps_ = chosen_jacobi_sweeps(c[1]);
}

// The pattern, its level sets and the solves' kernels and buffers (every sweep).
template <class T>
void DeviceBlockIlu<T>::prepare_solves(const Bsr<T>& a, const std::vector<Index>& diagonal,
                                       const DeviceBsr<T>* matrix) {
  const Context& context = context_;
  row_ptr_ = matrix != nullptr ? matrix->row_ptr().get() : upload(context, a.block_row_ptr, "ILU row pointers").get();
  col_ = matrix != nullptr ? matrix->col().get() : upload(context, a.block_col, "ILU block columns").get();
  diagonal_ = upload(context, diagonal, "ILU diagonal positions");
  lower_rows_ = upload(context, levels_.lower.rows, "ILU lower level rows");
  upper_rows_ = upload(context, levels_.upper.rows, "ILU upper level rows");
  work_ = DeviceBuffer<T>(context, block_rows_ * block_size_ * k_, "ILU forward solve");
  const cl::Program& program = ilu_program<T>(context, block_size_, k_);
  lower_solve_ = context.kernel(program, "lower_solve");
  upper_solve_ = context.kernel(program, "upper_solve");
  if (sweep_ == TriangularSweep::sequential) {
    lower_sequential_ = context.kernel(program, "lower_solve_sequential");
    upper_sequential_ = context.kernel(program, "upper_solve_sequential");
  }
  if (sweep_ == TriangularSweep::jacobi) {
    std::vector<Index> lower_ptr(block_rows_ + 1, 0), upper_ptr(block_rows_ + 1, 0);
    for (std::size_t i = 0; i < block_rows_; ++i) {
      lower_ptr[i + 1] = lower_ptr[i] + (diagonal[i] - a.block_row_ptr[i]);
      upper_ptr[i + 1] = a.block_row_ptr[i + 1] - lower_ptr[i + 1];
    }
    const std::size_t bb = block_size_ * block_size_;
    lower_col_ = DeviceBuffer<Index>(context, std::max<std::size_t>(lower_ptr.back(), 1), "ILU lower blocks' columns");
    upper_col_ = DeviceBuffer<Index>(context, upper_ptr.back(), "ILU upper blocks' columns");
    lower_values_ = DeviceBuffer<T>(context, std::max<std::size_t>(lower_ptr.back(), 1) * bb, "ILU lower blocks");
    upper_values_ = DeviceBuffer<T>(context, std::size_t(upper_ptr.back()) * bb, "ILU diagonal and upper blocks");
    lower_ptr_ = upload(context, lower_ptr, "ILU lower blocks' rows");
    upper_ptr_ = upload(context, upper_ptr, "ILU upper blocks' rows");
    sweeps_ = DeviceBuffer<T>(context, work_.size(), "ILU Jacobi sweeps");
    lower_jacobi_ = context.kernel(program, "lower_jacobi");
    upper_jacobi_start_ = context.kernel(program, "upper_jacobi_start");
    upper_jacobi_ = context.kernel(program, "upper_jacobi");
  }
  if (sweep_ == TriangularSweep::sync_free) {
    // A group of at most 256 work-items (every device runs that), whole rows of b x k.
    const std::size_t per_row = block_size_ * k_;
    rows_per_group_ = std::max<std::size_t>(1, std::min<std::size_t>(256, context.device().max_work_group_size) / per_row);
    const Chunks lower_chunks = chunks(levels_.lower, rows_per_group_), upper_chunks = chunks(levels_.upper, rows_per_group_);
    lower_chunk_count_ = static_cast<cl_uint>(lower_chunks.earlier.size());
    upper_chunk_count_ = static_cast<cl_uint>(upper_chunks.earlier.size());
    lower_chunk_ptr_ = upload(context, lower_chunks.ptr, "ILU sync-free lower chunks");
    upper_chunk_ptr_ = upload(context, upper_chunks.ptr, "ILU sync-free upper chunks");
    lower_chunk_waits_ = upload(context, lower_chunks.earlier, "ILU sync-free lower chunks' waits");
    upper_chunk_waits_ = upload(context, upper_chunks.earlier, "ILU sync-free upper chunks' waits");
    tickets_ = upload(context, std::vector<Index>(2, 0), "ILU sync-free tickets");
    lower_sync_free_ = context.kernel(program, "lower_solve_sync_free");
    upper_sync_free_ = context.kernel(program, "upper_solve_sync_free");
  }
}

template <class T>
Span DeviceBlockIlu<T>::factorize(const cl::Program& program, double shift) {
  cl::Kernel eliminate = context_.kernel(program, "ilu_eliminate");
  cl::Kernel invert = context_.kernel(program, "ilu_invert");
  Span span;
  // As in launch_levels: a level sets only its first row and count (eliminate's arguments 5 and 6,
  // invert's 4 and 5), and only the first and last inversions carry events.
  set_args(eliminate, "ilu_eliminate", row_ptr_, col_, diagonal_.get(), values_.get(), lower_rows_.get(), cl_uint(0),
           cl_uint(0), status_.get());
  set_args(invert, "ilu_invert", row_ptr_, diagonal_.get(), values_.get(), lower_rows_.get(), cl_uint(0), cl_uint(0),
           status_.get());
  for (std::size_t level = 0; level < levels_.lower.levels(); ++level) {
    const cl_uint first = levels_.lower.level_ptr[level], count = levels_.lower.level_ptr[level + 1] - first;
    if (level > 0) {  // level 0 has no lower blocks to eliminate
      set_arg(eliminate, 5, "ilu_eliminate", first);
      set_arg(eliminate, 6, "ilu_eliminate", count);
      launch(context_, eliminate, std::size_t(count) * block_size_, "ILU(0) elimination", false);
    }
    set_arg(invert, 4, "ilu_invert", first);
    set_arg(invert, 5, "ilu_invert", count);
    const bool ends = level == 0 || level + 1 == levels_.lower.levels();
    const cl::Event inverted = launch(context_, invert, count, "ILU(0) diagonal inversion", ends);
    if (level == 0) span.first = inverted;
    if (ends) span.last = inverted;
  }
  check_status(context_, status_, shift);
  return span;
}

// The same factors in one launch of one work-item (the sequential sweeps' devices), row after
// row; nothing where a block is singular (the status is cleared for the levels to factorise again).
template <class T>
std::optional<Span> DeviceBlockIlu<T>::factorize_sequentially(const cl::Program& program) {
  cl::Kernel factor = context_.kernel(program, "ilu_factor_sequential");
  set_args(factor, "ilu_factor_sequential", row_ptr_, col_, diagonal_.get(), values_.get(), cl_uint(block_rows_),
           status_.get());
  Span span;
  span.first = span.last = enqueue(context_, factor, 1, 1, "the sequential ILU(0) factorisation");
  if (read_status(context_, status_) == kNoFailure) return span;
  const cl_uint none = kNoFailure;
  check(context_.compute_queue().enqueueWriteBuffer(status_.get(), CL_TRUE, 0, sizeof(none), &none),
        "clEnqueueWriteBuffer", "clearing the factorisation's status");
  return std::nullopt;
}

template <class T>
Span DeviceBlockIlu<T>::apply(const VectorRef& r, const VectorRef& z) {
  switch (sweep_) {
    case TriangularSweep::sync_free: return apply_sync_free(r, z);
    case TriangularSweep::sequential: return apply_sequential(r, z);
    case TriangularSweep::jacobi: return apply_jacobi(r, z);
    case TriangularSweep::levels:
    case TriangularSweep::automatic: break;  // resolved at construction: never automatic here
  }
  return apply_levels(r, z);
}

template <class T>
Span DeviceBlockIlu<T>::apply_levels(const VectorRef& r, const VectorRef& z) {
  const std::size_t per_row = block_size_ * k_;
  set_args(lower_solve_, "lower_solve", row_ptr_, col_, diagonal_.get(), values_.get(), lower_rows_.get(), cl_uint(0),
           cl_uint(0), r.buffer, cl_ulong(r.offset), work_.get());
  set_args(upper_solve_, "upper_solve", row_ptr_, col_, diagonal_.get(), values_.get(), upper_rows_.get(), cl_uint(0),
           cl_uint(0), work_.get(), z.buffer, cl_ulong(z.offset));
  const Span lower = launch_levels(lower_solve_, levels_.lower, per_row, "the forward solve of ILU(0)");
  const Span upper = launch_levels(upper_solve_, levels_.upper, per_row, "the backward solve of ILU(0)");
  return {lower.first, upper.last};
}

// One launch of `solve` a level, its other arguments set: a level changes only its first row and
// count (arguments 5 and 6), and only the first and last launches carry events. A sweep in natural
// order has hundreds of levels, and each launch's host cost is on its path.
template <class T>
Span DeviceBlockIlu<T>::launch_levels(cl::Kernel& solve, const LevelSets& levels, std::size_t per_row,
                                      const char* what) {
  Span span;
  for (std::size_t level = 0; level < levels.levels(); ++level) {
    const cl_uint first = levels.level_ptr[level], count = levels.level_ptr[level + 1] - first;
    set_arg(solve, 5, what, first);
    set_arg(solve, 6, what, count);
    const bool ends = level == 0 || level + 1 == levels.levels();
    const cl::Event event = launch(context_, solve, count * per_row, what, ends);
    if (level == 0) span.first = event;
    if (ends) span.last = event;
  }
  return span;
}

template <class T>
Span DeviceBlockIlu<T>::apply_sync_free(const VectorRef& r, const VectorRef& z) {
  const std::size_t group = rows_per_group_ * block_size_ * k_;
  const cl_uint lower = lower_chunk_count_, upper = upper_chunk_count_;
  Span span;
  set_args(lower_sync_free_, "lower_solve_sync_free", row_ptr_, col_, diagonal_.get(), values_.get(),
           lower_rows_.get(), lower_chunk_ptr_.get(), lower_chunk_waits_.get(), lower, r.buffer, cl_ulong(r.offset),
           work_.get(), tickets_.get());
  span.first = enqueue(context_, lower_sync_free_, lower * group, group, "the sync-free forward solve of ILU(0)");
  set_args(upper_sync_free_, "upper_solve_sync_free", row_ptr_, col_, diagonal_.get(), values_.get(),
           upper_rows_.get(), upper_chunk_ptr_.get(), upper_chunk_waits_.get(), upper, work_.get(), z.buffer,
           cl_ulong(z.offset), tickets_.get());
  span.last = enqueue(context_, upper_sync_free_, upper * group, group, "the sync-free backward solve of ILU(0)");
  return span;
}

// Work-groups of one work-item, one a vector: the vectors' sweeps run side by side.
template <class T>
Span DeviceBlockIlu<T>::apply_sequential(const VectorRef& r, const VectorRef& z) {
  const auto rows = static_cast<cl_uint>(block_rows_);
  Span span;
  set_args(lower_sequential_, "lower_solve_sequential", row_ptr_, col_, diagonal_.get(), values_.get(), rows, r.buffer,
           cl_ulong(r.offset), work_.get());
  span.first = enqueue(context_, lower_sequential_, k_, 1, "the sequential forward solve of ILU(0)");
  set_args(upper_sequential_, "upper_solve_sequential", row_ptr_, col_, diagonal_.get(), values_.get(), rows,
           work_.get(), z.buffer, cl_ulong(z.offset));
  span.last = enqueue(context_, upper_sequential_, k_, 1, "the sequential backward solve of ILU(0)");
  return span;
}

// Each solve's iterates alternate between two buffers, placed so that the last lands where the
// solve's result goes: work_ for the forward solve, z for the backward one.
template <class T>
Span DeviceBlockIlu<T>::apply_jacobi(const VectorRef& r, const VectorRef& z) {
  const std::size_t items = block_rows_ * block_size_ * k_, sweeps = lower_sweeps_;
  const auto rows = static_cast<cl_uint>(block_rows_);
  const VectorRef work(work_), other(sweeps_);
  Span span;
  // Forward: y_0 = r, then y_s+1 = r - (L - I) y_s; the first sweep reads r itself.
  if (sweeps == 0) {
    check(context_.compute_queue().enqueueCopyBuffer(r.buffer, work_.get(), r.offset * sizeof(T), 0, items * sizeof(T),
                                                     nullptr, &span.first),
          "clEnqueueCopyBuffer", "ILU(0)'s forward solve without Jacobi sweeps");
  }
  VectorRef y_old = r, y_new = sweeps % 2 == 1 ? work : other, y_spare = sweeps % 2 == 1 ? other : work;
  for (std::size_t s = 1; s <= sweeps; ++s, y_old = y_new, std::swap(y_new, y_spare)) {
    set_args(lower_jacobi_, "lower_jacobi", lower_ptr_.get(), lower_col_.get(), lower_values_.get(), rows, r.buffer,
             cl_ulong(r.offset), y_old.buffer, cl_ulong(y_old.offset), y_new.buffer);
    const cl::Event event = launch(context_, lower_jacobi_, items, "a Jacobi sweep of ILU(0)'s forward solve", s == 1);
    if (s == 1) span.first = event;
  }
  // Backward: z_0 = D^-1 y, then z_s+1 = D^-1 y - D^-1 (U - D) z_s.
  const std::size_t back = upper_sweeps_;
  VectorRef z_old = back % 2 == 1 ? other : z, z_new = back % 2 == 1 ? z : other;
  set_args(upper_jacobi_start_, "upper_jacobi_start", upper_ptr_.get(), upper_values_.get(), rows, work_.get(),
           z_old.buffer, cl_ulong(z_old.offset));
  span.last = launch(context_, upper_jacobi_start_, items, "the first iterate of ILU(0)'s backward solve", back == 0);
  for (std::size_t s = 1; s <= back; ++s, std::swap(z_old, z_new)) {
    set_args(upper_jacobi_, "upper_jacobi", upper_ptr_.get(), upper_col_.get(), upper_values_.get(), rows,
             work_.get(), z_old.buffer, cl_ulong(z_old.offset), z_new.buffer, cl_ulong(z_new.offset));
    const cl::Event event = launch(context_, upper_jacobi_, items, "a Jacobi sweep of ILU(0)'s backward solve",
                                   s == back);
    if (s == back) span.last = event;
  }
  return span;
}

template <class T>
std::vector<T> DeviceBlockIlu<T>::factors() const {
  std::vector<T> values(values_.size());
  copy_to_host(context_.compute_queue(), values_, values.data());
  return values;
}

template <class T>
DeviceBlockJacobi<T>::DeviceBlockJacobi(const Context& context, const Bsr<T>& a, const IluPattern<T>& pattern,
                                        std::size_t k, double shift)
    : context_(context), block_size_(a.block_size), k_(k), block_rows_(a.block_rows) {
  require_precision<T>(context.device(), "block Jacobi in double");
  check_k(k);
  // Only the diagonal blocks go to the device, one after another, and are inverted in place.
  const std::size_t bb = block_size_ * block_size_;
  std::vector<T> blocks(block_rows_ * bb);
  for (std::size_t i = 0; i < block_rows_; ++i) {
    std::copy_n(a.values.begin() + pattern.diagonal[i] * bb, bb, blocks.begin() + i * bb);
  }
  for (const DiagonalChange<T>& change : pattern.changes) {
    blocks[change.block_row * bb + change.line * (block_size_ + 1)] = change.value;
  }
  inverse_ = upload(context, blocks, "inverted diagonal blocks");
  const DeviceBuffer<Index> status = upload(context, std::vector<Index>{kNoFailure}, "block Jacobi status");
  const cl::Program& program = ilu_program<T>(context, block_size_, k_);
  cl::Kernel invert = context.kernel(program, "invert_diagonal");
  set_args(invert, "invert_diagonal", inverse_.get(), cl_uint(block_rows_), status.get());
  setup_.first = setup_.last = launch(context, invert, block_rows_, "inverting the diagonal blocks");
  check_status(context, status, shift);
  apply_ = context.kernel(program, "block_jacobi");
}

template <class T>
Span DeviceBlockJacobi<T>::apply(const VectorRef& r, const VectorRef& z) {
  set_args(apply_, "block_jacobi", inverse_.get(), cl_uint(block_rows_), r.buffer, cl_ulong(r.offset), z.buffer,
           cl_ulong(z.offset));
  Span span;
  span.first = span.last = launch(context_, apply_, block_rows_ * block_size_ * k_, "block Jacobi");
  return span;
}

template class DeviceBlockIlu<float>;
template class DeviceBlockIlu<double>;
template class DeviceBlockJacobi<float>;
template class DeviceBlockJacobi<double>;

}  // namespace ziggurat::sparse
