#include "ziggurat/solver/long_vector_heat.hpp"

#include <clblast.h>

#include <cstdint>
#include <string>
#include <vector>

#include "solver/timed_steps.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/memory.hpp"
#include "ziggurat/base/precision.hpp"
#include "ziggurat/ops/heat_scheme.hpp"

namespace ziggurat {

namespace {

// The index arithmetic of one step. A grid of W x H nodes is unrolled row by row into V, node
// (x, y) at k = y W + x. Its interior nodes lie in one contiguous range of V, from W + 1 (node
// (1, 1)) to (H-1) W - 2 (node (W-2, H-2)): L = (H-2) W - 2 values, N(N+2) - 2 on a square grid
// of N interior nodes a side. Every k of the range has the neighbours k-1, k+1, k-W, k+W; with
//     P(m) = V(m+1) + V(m+W),   m = 0 .. (H-1) W - 2   (the notes' T = V(2:..) + V(N+3:..))
// the right and lower neighbours of k are P(k), the upper and left ones P(k-W-1), so
//     V'(k) = (A P(k) + B V(k)) + A P(k-W-1),   B = 1 - 4A.
// The range also holds the boundary nodes at the ends of rows 1 .. H-2 that lie between interior
// nodes, (H-3) pairs of neighbours in V: the step overwrites them and restores them after.
struct Layout {
  std::size_t width = 0, height = 0;

  std::size_t values() const { return width * height; }
  std::size_t interior_begin() const { return width + 1; }
  std::size_t interior_length() const { return (height - 2) * width - 2; }
  std::size_t pair_sums() const { return (height - 1) * width - 1; }
  std::size_t restored_pairs() const { return height - 3; }
  std::size_t first_restored() const { return 2 * width - 1; }  // node (W-1, 1); its pair is (0, 2)
};

Layout layout_of(const std::vector<std::size_t>& extents) {
  require_heat_grid(extents, "the long-vector heat solver");
  if (extents.size() != 2) {
    throw InvalidArgument("the long-vector algorithm steps 2D grids; " + extents_string(extents) + " is " +
                          std::to_string(extents.size()) + "D: step it with InDeviceHeat instead");
  }
  return {extents[0], extents[1]};
}

// CLBlast returns OpenCL's error codes, and codes of its own from -1024 down.
void check_call(clblast::StatusCode status, const char* routine) {
  const auto code = static_cast<cl_int>(status);
  if (code > -1024) {
    check(code, routine, "running a long-vector heat step");
    return;
  }
  throw Error(std::string(routine) + " refused its arguments with CLBlast status " + std::to_string(code) +
              " (clblast.h names it) while running a long-vector heat step; please report it");
}

}  // namespace

template <class T>
struct LongVectorHeat<T>::Impl {
  Context context;
  std::vector<std::size_t> extents;
  Layout layout;
  HeatCoefficients<T> coefficients;
  DeviceBuffer<T> field;     // V
  DeviceBuffer<T> pairs;     // P
  DeviceBuffer<T> ones;      // y of xHAD, which makes it an axpby (CLBlast has no xAXPBY)
  DeviceBuffer<T> boundary;  // the restored pairs, (H-3) rows of 2
  std::size_t steps_done = 0;

  // Enqueues one step (the calls of step_calls()); `first` and `last`, where given, receive the
  // events of its first and last call.
  void enqueue_step(cl::Event* first, cl::Event* last);
  // CLBlast builds a routine's kernels on its first call in a context: each routine of the step
  // runs once here, on one or two values of the scratch vector P, so that advance() times steps.
  void build_routines();
};

template <class T>
std::vector<VectorCall> LongVectorHeat<T>::step_calls(const std::vector<std::size_t>& extents) {
  const Layout l = layout_of(extents);
  std::vector<VectorCall> calls{
      {"xCOPY", "P(m) = V(m+1)", l.pair_sums()},
      {"xAXPY", "P(m) += V(m+W): the addition T = V(2:..) + V(N+3:..)", l.pair_sums()},
      {"xHAD", "V(k) = A P(k) + B V(k) over the interior range (Hadamard product with ones: an axpby)",
       l.interior_length()},
      {"xAXPY", "V(k) += A P(k-W-1) over the interior range", l.interior_length()},
  };
  if (l.restored_pairs() > 0) {
    calls.push_back({"xOMATCOPY", "restore the boundary nodes inside the range ((H-3) x 2 values, row pitch W)",
                     2 * l.restored_pairs()});
  }
  return calls;
}

template <class T>
void LongVectorHeat<T>::check_fits(const DeviceInfo& device, const std::vector<std::size_t>& extents) {
  require_precision<T>(device, "the long-vector heat solver");
  const Layout l = layout_of(extents);
  const std::uint64_t field_bytes = static_cast<std::uint64_t>(l.values()) * sizeof(T);
  // V, P and the ones are each about one grid; the boundary is small.
  check_device_buffers(device, 3, field_bytes,
                       "the long-vector algorithm on a " + extents_string(extents) + " grid of " + type_name<T>(),
                       "make the grid smaller or choose a device with more memory");
}

template <class T>
LongVectorHeat<T>::LongVectorHeat(const Context& context, const Grid<T>& initial, double alpha) {
  check_fits(context.device(), initial.extents());
  const Layout l = layout_of(initial.extents());
  const HeatCoefficients<T> coefficients = heat_coefficients<T>(alpha, 2);
  require_finite(initial, "initial field");
  impl_ = std::make_unique<Impl>(Impl{context, initial.extents(), l, coefficients,
                                      DeviceBuffer<T>(context, l.values(), "long-vector field"),
                                      DeviceBuffer<T>(context, l.pair_sums(), "long-vector pair sums"),
                                      DeviceBuffer<T>(context, l.interior_length(), "long-vector ones"),
                                      {}, 0});
  Impl& s = *impl_;
  cl::CommandQueue& upload = context.upload_queue();
  copy_to_device(upload, initial.data(), s.field);
  const std::vector<T> ones(l.interior_length(), T{1});
  copy_to_device(upload, ones.data(), s.ones);
  if (l.restored_pairs() > 0) {
    std::vector<T> boundary;
    for (std::size_t pair = 0; pair < l.restored_pairs(); ++pair) {
      const std::size_t k = l.first_restored() + pair * l.width;
      boundary.push_back(initial.data()[k]);
      boundary.push_back(initial.data()[k + 1]);
    }
    s.boundary = DeviceBuffer<T>(context, boundary.size(), "long-vector boundary");
    copy_to_device(upload, boundary.data(), s.boundary);
  }
  s.build_routines();
}

template <class T>
LongVectorHeat<T>::LongVectorHeat(LongVectorHeat&&) noexcept = default;
template <class T>
LongVectorHeat<T>& LongVectorHeat<T>::operator=(LongVectorHeat&&) noexcept = default;
template <class T>
LongVectorHeat<T>::~LongVectorHeat() = default;

template <class T>
void LongVectorHeat<T>::Impl::build_routines() {
  cl_command_queue queue = context.compute_queue()();
  cl_mem v = field.get()(), p = pairs.get()(), one = ones.get()();
  check_call(clblast::Copy<T>(1, v, 0, 1, p, 0, 1, &queue), "clblast::Copy");
  check_call(clblast::Axpy<T>(1, T{1}, v, 0, 1, p, 0, 1, &queue), "clblast::Axpy");
  check_call(clblast::Had<T>(1, T{1}, v, 0, 1, one, 0, 1, T{0}, p, 0, 1, &queue), "clblast::Had");
  if (layout.restored_pairs() > 0) {
    check_call(clblast::Omatcopy<T>(clblast::Layout::kRowMajor, clblast::Transpose::kNo, 1, 2, T{1}, boundary.get()(),
                                    0, 2, p, 0, 2, &queue),
               "clblast::Omatcopy");
  }
  check(context.compute_queue().finish(), "clFinish", "building CLBlast's routines for the long-vector steps");
}

template <class T>
void LongVectorHeat<T>::Impl::enqueue_step(cl::Event* first, cl::Event* last) {
  cl_command_queue queue = context.compute_queue()();
  const Layout& l = layout;
  cl_mem v = field.get()(), p = pairs.get()();
  const std::size_t k0 = l.interior_begin(), length = l.interior_length();
  cl_event raw_first = nullptr, raw_last = nullptr;
  const bool restore = l.restored_pairs() > 0;
  cl_event* last_call = last != nullptr ? &raw_last : nullptr;

  check_call(clblast::Copy<T>(l.pair_sums(), v, 1, 1, p, 0, 1, &queue, first != nullptr ? &raw_first : nullptr),
             "clblast::Copy");
  if (first != nullptr) *first = cl::Event(raw_first);  // takes ownership
  check_call(clblast::Axpy<T>(l.pair_sums(), T{1}, v, l.width, 1, p, 0, 1, &queue), "clblast::Axpy");
  check_call(clblast::Had<T>(length, coefficients.a, p, k0, 1, ones.get()(), 0, 1, coefficients.b, v, k0, 1, &queue),
             "clblast::Had");
  check_call(clblast::Axpy<T>(length, coefficients.a, p, 0, 1, v, k0, 1, &queue, restore ? nullptr : last_call),
             "clblast::Axpy");
  if (restore) {
    check_call(clblast::Omatcopy<T>(clblast::Layout::kRowMajor, clblast::Transpose::kNo, l.restored_pairs(), 2, T{1},
                                    boundary.get()(), 0, 2, v, l.first_restored(), l.width, &queue, last_call),
               "clblast::Omatcopy");
  }
  if (last != nullptr) *last = cl::Event(raw_last);
}

template <class T>
StepTiming LongVectorHeat<T>::advance(std::size_t steps) {
  Impl& s = *impl_;
  const StepTiming timing = detail::run_timed_steps(s.context, steps, "running the long-vector heat steps",
                                                    [&](cl::Event* first, cl::Event* last) { s.enqueue_step(first, last); });
  s.steps_done += steps;
  return timing;
}

template <class T>
Grid<T> LongVectorHeat<T>::read() {
  Impl& s = *impl_;
  Grid<T> field(s.extents);
  copy_to_host(s.context.download_queue(), s.field, field.data());
  return field;
}

template <class T>
std::size_t LongVectorHeat<T>::steps_done() const noexcept { return impl_->steps_done; }
template <class T>
const std::vector<std::size_t>& LongVectorHeat<T>::extents() const noexcept { return impl_->extents; }

template class LongVectorHeat<float>;
template class LongVectorHeat<double>;

}  // namespace ziggurat
