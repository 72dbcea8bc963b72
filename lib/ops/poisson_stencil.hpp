#pragma once
// The launchers of the Jacobi sweep kernels (poisson_stencil.cl): the aligned, column-walking
// seven-point sweep over a box of a buffer, which the in-device Poisson solver and its pyramid
// passes share so that both run exactly the same arithmetic, and the fold of its per-group update
// maxima into one value for the stopping test.

#include <cstddef>
#include <vector>

#include "ops/heat_stencil.hpp"
#include "ziggurat/base/context.hpp"
#include "ziggurat/ops/poisson_scheme.hpp"

namespace ziggurat::detail {

/// The program of poisson_stencil.cl for T (built on first use).
template <class T>
const cl::Program& poisson_stencil_program(const Context& context);

/// jacobi3d_box (jacobi3d_flat on CPU devices): one sweep of the nodes of a box, optionally
/// recording the largest |U' - U|.
template <class T>
class JacobiBoxSweep {
 public:
  JacobiBoxSweep(const Context& context, JacobiCoefficients<T> coefficients);

  /// Work-groups a sweep of `box` launches: the partial maxima it records.
  std::size_t groups(const Box& box) const;

  /// Enqueues one sweep of the nodes of `box` from `in` to `out` with right-hand side `f` (all laid
  /// out as `shape`; the box lies inside the buffer with one node to spare on every side). With
  /// `partial`, each work-group writes its largest update there (groups(box) values).
  void enqueue(cl::CommandQueue& queue, const cl::Buffer& in, const cl::Buffer& out, const cl::Buffer& f,
               const cl::Buffer* partial, const BufferShape& shape, const Box& box, const std::vector<cl::Event>* wait,
               cl::Event* done);

 private:
  BoxLaunch launch(const Box& box) const;

  Context context_;
  JacobiCoefficients<T> coefficients_;
  bool flat_;                        ///< jacobi3d_flat (a CPU device) instead of jacobi3d_box
  std::array<std::size_t, 2> tile_;  ///< the work-group (flat: the largest)
  cl::Kernel kernel_;
};

/// max_reduce: folds `count` partial maxima into result[slot] (NaN wins), in one work-group.
template <class T>
class MaxReduce {
 public:
  explicit MaxReduce(const Context& context);
  void enqueue(cl::CommandQueue& queue, const cl::Buffer& values, std::size_t count, const cl::Buffer& result,
               std::size_t slot, const std::vector<cl::Event>* wait, cl::Event* done);

 private:
  std::size_t group_;
  cl::Kernel kernel_;
};

}  // namespace ziggurat::detail
