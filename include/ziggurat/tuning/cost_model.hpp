#pragma once
// Analytic cost models (method notes, sections 1 and 2): how long an explicit difference scheme
// takes on a grid that lives in host memory, for each way of moving it through a device
// (solver/pyramid_layout.hpp says what those ways are), and which way and which pyramid height
// are best. Pure functions: no device is needed. tuning/model_constants.hpp derives the constants
// from a device's measured profile; tuning/heat_planner.hpp plans the pyramid solver's runs.
//
// Time of one task: upload (latency + values x ns per value), its kernels, download. A pass of
// s steps runs ceil(s/T) launches of T steps on chip (T = 1: single steps): the full launches cost
// tau_a a computed node and step, one crossing of device memory and T steps on chip; a partial
// launch of r = s mod T steps still crosses device memory once, so a node's r steps cost the
// crossing and r of the full launch's steps on chip. The serial schedule adds the
// times up; the overlapped schedule runs uploads, kernels and downloads on separate engines with
// two task slots (see predict()).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ziggurat/solver/pyramid_layout.hpp"

namespace ziggurat::model {

/// Time of one transfer of `values` grid values.
struct TransferCost {
  double latency_ns = 0;
  double ns_per_value = 0;
  double time_ns(double values) const { return latency_ns + values * ns_per_value; }
};

/// How one kind of transfer shares the device with kernels and with transfers the other way.
struct TransferEngines {
  bool overlap_compute = true;  ///< copies run while kernels run
  bool duplex = true;           ///< uploads and downloads run at the same time
  /// How much longer an upload (a download) takes while the other engines run, sharing the bus,
  /// host memory and device memory: the overlapped schedule, where all three are busy, runs its
  /// transfers at this pace.
  double upload_slowdown = 1, download_slowdown = 1;
  /// How much longer kernels take while these transfers run; the overlapped schedule slows each
  /// task's kernels for as long as the neighbouring tasks' transfers run beside them.
  double compute_slowdown = 1;
};

/// What the model needs to know about a device and its bus, for one precision.
struct DeviceConstants {
  TransferCost upload, download;            ///< contiguous transfers (strips, whole grids)
  TransferCost rect_upload, rect_download;  ///< rectangular regions of a 2D host array (blocks)
  double tau_a_ns = 0;                      ///< compute time per node and step, steady state
  double launch_ns = 0;                     ///< one kernel launch within a stream of launches
  std::size_t launch_depth = 1;             ///< T: steps a launch advances on chip (HeatPlan::depth)
  double crossing_ns = 0;                   ///< one crossing of the grid in device memory, per node
  TransferEngines engines;                  ///< of contiguous transfers
  TransferEngines rect_engines;             ///< of rectangular-region transfers

  /// The paper's assumptions: every transfer costs tau_c per value, nothing else costs time.
  static DeviceConstants paper(double tau_c_ns, double tau_a_ns);
  /// Every transfer, contiguous or rectangular, costs `tau_c_ns` per value (latencies kept).
  void set_tau_c(double tau_c_ns);

  /// The largest time a constant may hold, ns: an hour a value or a node, beyond any device (as
  /// validate(DeviceProfile) bounds a measurement); far larger ones make the times of large grids
  /// infinite, and no plan is then better than another.
  static constexpr double kMostNs = 3.6e12;
  /// Throws InvalidArgument naming the first constant that is negative, not finite or above
  /// kMostNs (tau_a_ns must also be above 0), or a slowdown that is below 1 or not finite.
  /// predict() and best_plan() call it.
  void validate() const;
};

/// A grid and a number of steps. Throws InvalidArgument for fewer than 3 nodes on an axis,
/// more than 3 axes, zero steps, or a value size other than 4 or 8 bytes.
struct Problem {
  std::vector<std::size_t> extents;  ///< nodes per axis, fastest first, boundary included
  std::size_t steps = 0;             ///< K
  std::size_t value_bytes = 4;
  /// Device buffers pad rows (2D) and plane rows (3D) to a multiple of this many values, so that
  /// every row starts aligned; buffer sizes count the padding, transfers do not.
  std::size_t row_alignment = 1;
  /// Arrays uploaded per node of a task's region: the grid, plus read-only inputs beside it (2 for
  /// the Poisson solver, which sends the right-hand side with the field). Each also takes a
  /// buffer: a task slot holds two time layers and the inputs.
  std::size_t uploaded_fields = 1;

  void validate() const;
  double interior_nodes() const;
};

/// Values moved and nodes computed by one task in one pass.
struct TaskCounts {
  double sent = 0;
  double received = 0;
  double computed = 0;
  std::size_t steps = 0;  ///< steps of the pass (ceil(steps / T) kernel launches)
  bool operator==(const TaskCounts& other) const {
    return sent == other.sent && received == other.received && computed == other.computed && steps == other.steps;
  }
};

/// The exact counts of every task of one pass of `pass_steps` steps (the last pass of a run may
/// be shorter than n), edge tasks and the last, shorter task included.
std::vector<TaskCounts> pass_counts(const Problem& problem, const PyramidLayout& layout, std::size_t pass_steps);

/// Device memory for a pyramid's task buffers: `bytes`, shared by `layers` task-sized buffers.
struct Budget {
  std::uint64_t bytes = 0;
  std::size_t layers = 1;
};

/// `bytes` as the paper counts them (section 1) in the serial schedule: one time layer of task
/// buffers fills the budget, stepped in place. The overlapped schedule, which the paper does not
/// have, counts what the pyramid solver allocates there (solver_buffer_layers). The solver's own
/// serial runs keep two layers: tuning/heat_planner.hpp plans them with Budget{bytes, 2}.
Budget paper_budget(std::uint64_t bytes, Schedule schedule);

/// The largest strip buffer R (whole rows or planes) and block side B that a layer holds.
std::size_t max_strip_rows(const Problem& problem, const Budget& budget);
std::size_t max_block_side(const Problem& problem, const Budget& budget);
/// Whether the whole grid, two time layers of it and its inputs, fits in `budget_bytes`.
bool fits_incore(const Problem& problem, std::uint64_t budget_bytes);

/// The smallest budget of `layers` buffers that holds pyramid passes of `height` steps: tasks of
/// one owned row (strips) or one owned node a side (blocks).
std::uint64_t minimum_budget(const Problem& problem, Decomposition decomposition, std::size_t height, std::size_t layers);

/// The values one buffer layer of the layout's largest task holds: the largest region a task of a
/// pass of n steps sends (tasks at the grid's edges send less: nothing lies beyond the boundary).
double task_buffer_values(const Problem& problem, const PyramidLayout& layout);

/// Whether the layout's task buffers fit in the budget.
bool fits(const Problem& problem, const PyramidLayout& layout, const Budget& budget);

struct Prediction {
  double total_ns = 0;
  double ns_per_node = 0;  ///< total / (K x interior nodes)
  double transfer_ns = 0;  ///< sum of all transfer times (busy time of the copy engines)
  double compute_ns = 0;   ///< sum of all kernel times
  std::size_t tasks = 0;   ///< per pass
  std::size_t passes = 0;
};

/// The exact model: every task of every pass, counted exactly, under the schedule. For the
/// overlapped schedule: uploads, kernels and downloads each go through one engine in order;
/// task j uses slot j mod 2, so its upload waits for the kernels of task j-2 and its kernels for
/// the download of task j-2; a task's upload also waits until the previous pass's downloads that
/// hold its halo are done. Transfers take upload_slowdown (download_slowdown) times longer there,
/// and kernels compute_slowdown times longer while transfers run beside them: the engines share
/// the machine. Without duplex, uploads and downloads share one engine; without
/// overlap, the schedule is serial. The engines are those of the decomposition's transfers
/// (rect_engines for blocks).
Prediction predict(const Problem& problem, const PyramidLayout& layout, const DeviceConstants& constants, Schedule schedule);

/// The paper's approximate forms, in ns per node and step: eq. (4) for strips, eq. (5) for
/// blocks, and the trivial algorithm 2 (R-1)/(R-2) tau_c + tau_a.
double strip_ns_per_node_approx(double R, double n, double tau_c_ns, double tau_a_ns);
double block_ns_per_node_approx(double B, double n, double tau_c_ns, double tau_a_ns);
double trivial_ns_per_node_approx(double R, double tau_c_ns, double tau_a_ns);

/// The paper's per-task counts for a middle task: strips of R rows of I-1 values send R(I-1),
/// receive (R-2n)(I-1), compute n(R-n-1)(I-1); B x B blocks send B^2, receive (B-2n)^2, compute
/// n((B-n)^2 - 2(B-n) + (n^2+2)/3).
TaskCounts paper_strip_counts(double R, double n, double interior_per_row);
TaskCounts paper_block_counts(double B, double n);

/// A chosen way to run the problem, its prediction, and the trivial algorithm's for comparison.
struct Plan {
  PyramidLayout layout;
  std::size_t buffer_extent = 0;  ///< rows (strips) or longer side (blocks) of the largest task buffer; 0 for incore
  Prediction prediction;
  Prediction trivial;             ///< the same decomposition with n = 1 at the largest buffer
  double approx_ns_per_node = 0;  ///< the paper's formula at this R (or B) and n; 0 for incore
  double speedup_over_trivial() const { return trivial.total_ns / prediction.total_ns; }
};

/// The fastest plan for `choice` (strip, block, or incore when it fits), found exhaustively over
/// every height n and every task size whose buffers fit (branch and bound: candidates that
/// provably cannot win are not simulated). `height` fixes n instead. Throws InvalidArgument when
/// the budget holds no pyramid or `height` is not between 1 and K.
Plan best_plan(const Problem& problem, const Budget& budget, const DeviceConstants& constants, Schedule schedule,
               Decomposition choice, std::optional<std::size_t> height = std::nullopt);

/// The automatic choice: incore when the grid fits (one upload, one download, no recomputation),
/// else the better of the strip and (2D) block plans.
Plan best_plan_auto(const Problem& problem, const Budget& budget, const DeviceConstants& constants, Schedule schedule,
                    std::optional<std::size_t> height = std::nullopt);

/// Constants of the long-vector model (1): the cost of one library call, of one "wave" of each
/// vector operation, of restoring the boundary, the work-items that run at once, and the time
/// to move the grid to and from the device.
struct LongVectorConstants {
  double t_kernel_ns = 0;
  double t_add_ns = 0;
  double t_saxpy_ns = 0;
  double t0_ns = 0;
  double numstreams = 1;
  double transfer_ns = 0;
};

/// Eq. (1): T = T_transfer + N_time (4 t_kernel + t_add ceil(((N+2)^2 - 1)/s)
///              + t_add ceil((N(N+2) - 2)/s) + t0 + t_saxpy ceil((N(N+2) - 2)/s)), s = numstreams,
/// for an (N+2) x (N+2) grid (N interior nodes per side) and N_time steps.
double long_vector_ns(std::size_t interior_per_side, std::size_t steps, const LongVectorConstants& constants);

/// The implicit Jacobi pyramid of eq. (2): an N x N x L grid, blocks of R planes with h halo planes
/// a side; per block 2RN^2 values go up (U and f), (R-2h)N^2 come back, h(R-h-1)(N-2)^2 nodes
/// are computed. T = blocks ((3R - 2h) N^2 tau_c + h (R-h-1)(N-2)^2 tau_a / threads), blocks =
/// ceil((L-2) / (R-2h)), per outer iteration.
double jacobi_pyramid_ns(std::size_t n, std::size_t planes, std::size_t R, std::size_t h, double tau_c_ns,
                         double tau_a_ns, double threads = 1);

/// The best h for eq. (2), exhaustive over 1 <= h <= (R-1)/2; returns h.
std::size_t best_jacobi_halo(std::size_t n, std::size_t planes, std::size_t R, double tau_c_ns, double tau_a_ns,
                             double threads = 1);

}  // namespace ziggurat::model
