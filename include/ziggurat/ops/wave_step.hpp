#pragma once
// The explicit FEM wave step on a device (method notes, section 5): m u3 = dt^2 f - K1 u2 - K2 u1
// with the system of matrix/elastic_grid.hpp, one fused kernel a step (both uses of each stored
// diagonal of K1, the K2 term and the division by m), then the source added at its DOFs; and the
// same step on the host with the kernel's arithmetic, as the reference.
//
// Per DOF i, in this order: acc = sum over the diagonals d of K1(i, i + o_d) u2(i + o_d) and then,
// for o_d > 0, K1(i, i - o_d) u2(i - o_d); acc += K2(i) u1(i); u3(i) = -acc * (1 / m(i)). A source adds
// w_s a(t) at its DOFs afterwards, w_s = dt^2 g_s / m_s. The same operations in the same order
// wherever i lies: any split of the vector gives the same bits.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ziggurat/base/context.hpp"
#include "ziggurat/base/device.hpp"
#include "ziggurat/base/memory.hpp"
#include "ziggurat/matrix/elastic_grid.hpp"

namespace ziggurat::wave {

/// The Ricker wavelet of peak frequency f at time t, delayed by 1.5 / f (it starts at 1e-10 of its peak).
double ricker(double t, double frequency);
/// Its delay: the time of its peak, 1.5 / f.
double ricker_delay(double frequency);

/// A set of point forces: DOFs and the force g_s on each (N per unit of the wavelet).
struct PointSource {
  std::vector<std::uint32_t> dofs;
  std::vector<double> forces;
};

/// A force (fx, fy, fz) at a node (fy = 0 in 2D), or an explosion there: outward unit forces on
/// the node's 4 (2D) or 6 (3D) neighbours. InvalidArgument for a node outside the grid (or too
/// close to its edge for an explosion), or a force of zero or with fy in 2D.
PointSource point_force(const ElasticGrid& grid, GridNode node, const std::array<double, 3>& force);
PointSource explosion(const ElasticGrid& grid, GridNode node);

/// InvalidArgument naming `what` when `node` is not a node of a grid of the system's shape.
template <class T>
void check_node(const WaveSystem<T>& system, GridNode node, const std::string& what);

/// w_s = dt^2 g_s / m_s in T: what the source adds per unit of the wavelet.
template <class T>
std::vector<T> source_weights(const WaveSystem<T>& system, const PointSource& source);

/// One step on the host, on every core (each DOF on its own: the same bits on any number of
/// threads): u3 = -(K1 u2 + K2 u1) / m, then u3[dofs[s]] += weights[s] amplitude.
template <class T>
void wave_step_reference(const WaveSystem<T>& system, const std::vector<T>& u1, const std::vector<T>& u2,
                         std::vector<T>& u3, const PointSource& source, const std::vector<T>& weights,
                         double amplitude);

/// How the step's work-items walk the DOFs; the same bits whatever the walk.
struct WaveWalk {
  /// DOFs a work-item computes, a work-group's size apart: more independent loads in flight.
  std::size_t rows_per_item = 2;
  /// 0: the DOFs in order. Else each plane of nodes is cut into strips of this many rows, and the
  /// step walks strip by strip, through every plane within a strip: K1's diagonals that reach
  /// across a plane are read a second time a strip's DOFs after the first (from the cache), not a
  /// plane's (from memory again, once a plane's traffic exceeds the cache). 3D grids only.
  std::size_t strip_rows = 0;
};

/// The walk for `system` on `device`: 2 DOFs a work-item (on an H100 in 2D, 0.93 of the streaming
/// limit against 0.895 for 1 and 0.858 for 4); strips of the plane when the traffic between the two
/// reads of a diagonal that reaches across a plane (the band's DOFs times the bytes a DOF moves)
/// exceeds twice the global memory cache the device reports, each strip's traffic within that.
template <class T>
WaveWalk plan_walk(const DeviceInfo& device, const WaveSystem<T>& system);

/// Global DOFs [first, first + count): the part of the vector one device holds.
struct DofRange {
  std::size_t first = 0, count = 0;
  std::size_t end() const noexcept { return first + count; }
};

/// Where a step writes its receivers' values: recorded[offset + r] for receiver r.
struct Recording {
  cl::Buffer recorded;  ///< none: no receivers
  std::size_t offset = 0;
};

/// The step's kernels and the system's rows `stored` (K1's diagonals, K2, m) in device memory.
/// Field buffers hold the same DOFs: local position l is global DOF stored.first + l.
template <class T>
class WaveStep {
 public:
  /// K1's diagonals go into up to four buffers of at most `part_bytes` each (0: the device's
  /// largest allocation), so that a system larger than one allocation still fits. `walk`:
  /// plan_walk()'s when not given.
  /// Throws UnsupportedFeature for double without fp64 or offsets beyond constant memory,
  /// InvalidArgument for a range outside the system or a walk of other than 1 to 8 DOFs a
  /// work-item (or strips on a 2D grid), OutOfDeviceMemory when four parts are not enough.
  WaveStep(const Context& context, const WaveSystem<T>& system, const PointSource& source, DofRange stored,
           std::size_t part_bytes = 0, std::optional<WaveWalk> walk = std::nullopt);
  /// The whole system.
  WaveStep(const Context& context, const WaveSystem<T>& system, const PointSource& source);
  const DofRange& stored() const noexcept { return stored_; }

  /// Enqueues u3 = -(K1 u2 + K2 u1) / m + the source's term (its weights times `amplitude`) at the
  /// local positions `computed` (relative to stored(): u2 must be valid within the band's
  /// half-width around them, u1 on them), after the commands `wait_for` (empty: in queue order),
  /// and writes u3 at the receivers among them to recorded[offset + r] (r: their order in
  /// set_receivers(); a Recording without a buffer when there are none). On CPU devices the source
  /// and the receivers wait for finish(). A step may be cut into any parts, each position computed
  /// once, with the same bits. Returns the last command's event.
  cl::Event update(const cl::Buffer& u1, const cl::Buffer& u2, const cl::Buffer& u3, DofRange computed,
                   double amplitude, const Recording& recording = {}, const std::vector<cl::Event>& wait_for = {});
  /// Once every part of a step is enqueued: on CPU devices, where update() leaves the source and
  /// the receivers out (a search in the step keeps PoCL from vectorising it), adds the source's
  /// term and records the receivers (one small launch); elsewhere update() did, and this does
  /// nothing. Call it after each step's updates with the same amplitude and recording.
  cl::Event finish(const cl::Buffer& u3, double amplitude, const Recording& recording = {});
  void set_receivers(const std::vector<std::uint32_t>& local_dofs);
  std::size_t receivers() const noexcept { return receivers_; }

 private:
  /// What every kernel of one update() is given.
  struct Launch {
    const cl::Buffer &u1, &u2, &u3;
    double amplitude;
    const cl::Buffer& recorded;
    std::size_t offset;
    const std::vector<cl::Event>* wait_for;
  };
  void upload_k1(const WaveSystem<T>& system, std::size_t part_bytes);
  const cl::Buffer& k1_part(std::size_t p) const;
  const cl::Buffer& recorded_in(const Recording& recording) const;
  cl::Event walk(const Launch& launch, DofRange computed);   ///< wave_step over `computed`
  cl::Event flat(const Launch& launch, DofRange interior);  ///< wave_step_flat (CPU devices)

  Context context_;
  std::size_t n_;
  DofRange stored_;
  std::size_t diagonals_, per_part_ = 0, sources_ = 0, receivers_ = 0;
  std::size_t plane_dofs_;       ///< a plane of nodes' DOFs (3D), a row's (2D)
  std::size_t strip_dofs_ = 0;  ///< a strip's DOFs, 0 for the DOFs in order
  WaveWalk walk_;
  std::int64_t band_;    ///< K1's largest offset: the DOFs within it of the vector's ends lack terms
  bool points_in_step_;  ///< update() adds the source and records the receivers (not on CPU devices)
  std::vector<DeviceBuffer<T>> k1_parts_;  ///< per_part_ diagonals each, the last possibly fewer
  DeviceBuffer<T> k2_, inverse_mass_, weights_;
  DeviceBuffer<std::uint32_t> source_dofs_, receiver_dofs_, receiver_slots_;  ///< each sorted by DOF
  cl::Kernel step_, points_, flat_;  ///< points_ and flat_: wave_points and wave_step_flat (CPU devices)
};

}  // namespace ziggurat::wave
