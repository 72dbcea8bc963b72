#pragma once
// The launchers of the heat step kernels (heat_stencil.cl): the aligned, column-walking kernels
// over a box of a buffer, which the in-device solver and the pyramid passes share so that both
// run exactly the same arithmetic, and the naive 2D step they are measured against. Each
// launcher sets its kernel's arguments in one place.

#include <array>
#include <cstddef>
#include <vector>

#include "ziggurat/base/context.hpp"
#include "ziggurat/ops/heat_scheme.hpp"

namespace ziggurat::detail {

/// Nodes begin[a] <= i < end[a] on each axis a (fastest first); unused axes are {0, 1}.
struct Box {
  std::array<std::size_t, 3> begin{0, 0, 0};
  std::array<std::size_t, 3> end{1, 1, 1};
  std::size_t count(std::size_t axis) const { return end[axis] - begin[axis]; }
  std::size_t nodes() const { return count(0) * count(1) * count(2); }
};

/// How a buffer lays out a grid region: rows `pitch` values apart, planes `plane` values apart.
struct BufferShape {
  std::size_t pitch = 1;
  std::size_t plane = 1;
  std::size_t offset(std::size_t x, std::size_t y, std::size_t z) const { return z * plane + y * pitch + x; }
};

/// How a 3D box kernel (heat3d_box, jacobi3d_box) covers a box: work-groups of a tile aligned
/// to absolute buffer columns from first_column, each walking planes_per_group planes.
struct BoxLaunch {
  std::size_t first_column = 0, planes_per_group = 1;
  cl::NDRange global, local;
};

/// Rows (planes) per work-group: as many as keep about 32 groups per compute unit in flight, so
/// that the device stays busy on small boxes, and at most 64, beyond which the two extra rows a
/// group reads cost nothing more.
std::size_t rows_per_group(std::size_t rows, std::size_t groups_per_row, unsigned compute_units);

/// The 3D box kernels' work-group tile: up to 32 x 8, as the device allows.
std::array<std::size_t, 2> box_tile(const DeviceInfo& device);

BoxLaunch box_launch_3d(const Box& box, const std::array<std::size_t, 2>& tile, unsigned compute_units);

/// Whether 2D and 3D sweeps run the flat kernels on `device`: on CPU devices, where PoCL
/// vectorises a work-group with no barrier in its sweep along x (the box kernels' barrier a row
/// keeps it from that); elsewhere the box kernels.
bool runs_flat_kernels(const DeviceInfo& device);

/// The flat kernels' largest work-group: a row of up to 256 work-items by up to 16 rows, as the
/// device allows.
std::array<std::size_t, 2> flat_group(const DeviceInfo& device);

/// The flat kernels' launch over `box`: work-groups of at most `largest`'s work-items, as wide as
/// the box (a power of two from 8), the first column the group width's multiple at or below the
/// box's, then columns x rows x planes work-items.
BoxLaunch flat_launch(const Box& box, const std::array<std::size_t, 2>& largest);

/// The one program of heat_stencil.cl for T on the context's device, every kernel in it (built on
/// first use; calling it early builds it ahead, e.g. on another thread).
template <class T>
const cl::Program& heat_stencil_program(const Context& context);

/// The row alignment of the step kernels' buffers, in values of `value_bytes`: the device's
/// base-address alignment, so that every row starts aligned.
std::size_t row_alignment(const DeviceInfo& device, std::size_t value_bytes);

/// Row pitch (values) of a grid whose fastest axis has `width` nodes: 1D grids are one row,
/// longer rows are padded to the row alignment.
std::size_t grid_pitch(const DeviceInfo& device, std::size_t value_bytes, std::size_t dims, std::size_t width);

/// heat1d_box, heat2d_box or heat3d_box (heat2d_flat, heat3d_flat on CPU devices): one step of the
/// nodes of a box.
template <class T>
class HeatBoxStep {
 public:
  HeatBoxStep(const Context& context, std::size_t dims, HeatCoefficients<T> coefficients);

  /// Enqueues one step of the nodes of `box` from `in` to `out` (both laid out as `shape`); the box
  /// must lie inside the buffer with one node to spare on every side.
  void enqueue(cl::CommandQueue& queue, const cl::Buffer& in, const cl::Buffer& out, const BufferShape& shape,
               const Box& box, const std::vector<cl::Event>* wait, cl::Event* done);

 private:
  Context context_;
  std::size_t dims_;
  HeatCoefficients<T> coefficients_;
  bool flat_ = false;  ///< heat2d_flat or heat3d_flat (on a CPU device) instead of the box kernel
  std::array<std::size_t, 2> group_{1, 1};
  cl::Kernel kernel_;
};

/// heat2d_naive: one step of every interior node of a 2D grid, one work-item per node, every
/// neighbour read from global memory (the baseline of the aligned kernels).
template <class T>
class NaiveHeatStep {
 public:
  /// A width x height grid whose rows are `pitch` values apart.
  NaiveHeatStep(const Context& context, std::size_t width, std::size_t height, std::size_t pitch,
                HeatCoefficients<T> coefficients);
  void enqueue(cl::CommandQueue& queue, const cl::Buffer& in, const cl::Buffer& out, cl::Event* done);

 private:
  std::size_t width_, height_, pitch_;
  HeatCoefficients<T> coefficients_;
  cl::Kernel kernel_;
  cl::NDRange global_, local_;
};

}  // namespace ziggurat::detail
