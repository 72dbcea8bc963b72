#pragma once
// Block ILU(0) and block Jacobi on a device (method notes, section 3): the factorisation runs on
// the device level by level (the host only computes the level sets; with sequential sweeps on a
// CPU device, in one work-item row after row), with the b x b diagonal blocks inverted once.
// The triangular solves run level by level, every (block row, line, vector) of a level at once
// (parallel across independent rows and inside each block: the paper's P24), sync-free in one
// launch per solve, or sequentially in one work-item a vector on CPU devices (TriangularSweep),
// with the same bits; or approximately, by a fixed number of Jacobi sweeps over every row.
// Factor layout and operation order: matrix/ilu_factors.hpp, whose sequential reference they match.
#include <algorithm>
#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include "ziggurat/base/context.hpp"
#include "ziggurat/base/memory.hpp"
#include "ziggurat/matrix/device_sparse.hpp"
#include "ziggurat/matrix/ilu_factors.hpp"
#include "ziggurat/matrix/ordering.hpp"
#include "ziggurat/ops/vector_ops.hpp"

namespace ziggurat::sparse {

/// How the triangular solves of ILU(0) run on the device.
enum class TriangularSweep {
  levels,     ///< one launch per level, every row of the level at once: best with few levels (colours)
  sync_free,  ///< one launch per solve, each work-group of a level's rows waiting for the earlier
              ///< levels (a counter in device memory): best with many levels (natural and levels
              ///< orderings of 3D grids)
  sequential,  ///< one work-item a vector walks every row in order (on a CPU device one factorises
               ///< too), no level sets: best on CPU devices, where a launch a level, or a
               ///< work-group's wait, costs more than the rows; on a GPU the solves run at a single
               ///< thread's pace
  jacobi,      ///< approximate solves: a fixed number of Jacobi sweeps over every row at once (one
               ///< launch a sweep, no levels), so the preconditioner is near ILU(0)'s, not its exact
               ///< solves (Anzt, Chow and Dongarra, "Iterative sparse triangular solves for
               ///< preconditioning", Euro-Par 2015): fewer launches than levels, at some iterations
  automatic,   ///< above kSyncFreeLevels levels: sequential on a CPU device of at most
               ///< kSequentialSweepCores compute units, else sync_free; levels below
};
const char* to_string(TriangularSweep sweep);
/// "levels", "sync-free", "sequential", "jacobi" or "auto"; InvalidArgument otherwise.
TriangularSweep parse_triangular_sweep(std::string_view text);
/// Jacobi sweeps of a triangle, unless given: the fewest s with c^s <= kJacobiSweepResidue (from 1
/// to kMostChosenJacobiSweeps), c its contraction, the largest over the scalar rows of the sum of
/// |entries| of L - I (forward) or D^-1 (U - D) (backward), which bounds what a sweep leaves of
/// the error in the max norm. On an H200 (bench/results/2026-11-28-h200-jacobi-sweeps.md) the
/// suite's triangles have c = 0.55 (laplace7: 3 sweeps each way, the best fixed count), 0.83
/// (anisotropic: 7, 1.06x the time to a solution of 3) and 0.90 / 0.15 (upwind: 11 forward, 1
/// backward, where the best one count for both took 1.26-1.31x as long).
constexpr double kJacobiSweepResidue = 0.3;
constexpr std::size_t kMostChosenJacobiSweeps = 16;
/// The sweeps chosen for a triangle of contraction c >= 0 (above).
std::size_t chosen_jacobi_sweeps(double contraction);
/// The level count above which `automatic` leaves the level sweeps: launches then cost more than
/// waiting (bench/results/2026-11-28-design-measurements.md). Measured per block size in the
/// natural order (bench/results/2026-11-28-h200-sync-free.md), the sync-free solves took 0.51-0.73x
/// the level-by-level time at every b from 1 to 5 on an H200 (0.5-2 M block rows). On PoCL's 2
/// cores the sequential solves beat both (bench/results/2026-11-28-pocl-sequential-sweeps.md).
constexpr std::size_t kSyncFreeLevels = 16;
/// CPU devices of at most this many compute units take the sequential sweeps (and ILU(0) in
/// natural order, solver/krylov.hpp). Measured on 2
/// (bench/results/2026-11-28-pocl-sequential-sweeps.md): one work-item walking the rows beat the
/// level and sync-free sweeps, which use both cores. The parallel
/// sweeps gain in proportion to the cores, so past 4, an extrapolation, the GPUs' rule holds.
constexpr unsigned kSequentialSweepCores = 4;
/// Whether `device` is a CPU device of at most kSequentialSweepCores compute units.
bool prefers_sequential_sweeps(const DeviceInfo& device);

template <class T>
class DeviceBlockIlu {
 public:
  /// Factorises A on the device for solves with k interleaved vectors: `matrix` is A already on
  /// the device (its values are copied there, never uploaded twice), `a` the same matrix on the
  /// host (for the level sets), `pattern` = ilu_pattern(a, shift), whose changes are applied to the
  /// device copy. Throws ZeroPivot naming the least failing block row of the first level that
  /// fails, UnsupportedFeature for double without fp64.
  /// Every exact sweep gives the same bits; `jacobi_sweeps` is the count of each triangle's
  /// TriangularSweep::jacobi (as many as the levels less one give the exact solves' bits), or
  /// none: chosen per triangle from the factors (chosen_jacobi_sweeps).
  DeviceBlockIlu(const Context& context, const DeviceBsr<T>& matrix, const Bsr<T>& a, const IluPattern<T>& pattern,
                 std::size_t k, double shift = 0, TriangularSweep sweep = TriangularSweep::automatic,
                 std::optional<std::size_t> jacobi_sweeps = std::nullopt);
  /// The same with A uploaded here.
  DeviceBlockIlu(const Context& context, const Bsr<T>& a, std::size_t k, double shift = 0,
                 TriangularSweep sweep = TriangularSweep::automatic,
                 std::optional<std::size_t> jacobi_sweeps = std::nullopt);
  /// From factors made on the host (matrix/ilu2.hpp: ILU2, IC2), in the layout of ilu_factors.hpp
  /// on their own pattern, `diagonal` the position of each block row's diagonal block: uploaded,
  /// with the level sets of their pattern, for the same triangular solves (nothing is factorised
  /// here: factorization() is empty). UnsupportedFeature for double without fp64.
  DeviceBlockIlu(const Context& context, const Bsr<T>& factors, const std::vector<Index>& diagonal, std::size_t k,
                 TriangularSweep sweep = TriangularSweep::automatic,
                 std::optional<std::size_t> jacobi_sweeps = std::nullopt);
  /// z = U^-1 L^-1 r on the compute queue; r and z are block_rows * b x k, distinct.
  Span apply(const VectorRef& r, const VectorRef& z);
  /// levels, sync_free, sequential or jacobi: the sweep `automatic` resolved to.
  TriangularSweep sweep() const noexcept { return sweep_; }
  /// The Jacobi sweeps of each forward and backward solve (TriangularSweep::jacobi), else 0.
  std::size_t lower_jacobi_sweeps() const noexcept { return lower_sweeps_; }
  std::size_t upper_jacobi_sweeps() const noexcept { return upper_sweeps_; }
  /// Both triangles take the larger of their Jacobi sweep counts: from symmetric factors (IC2, or
  /// ILU(0) of a symmetric A) the preconditioner then stays symmetric, as CG needs. The chosen
  /// counts follow each triangle's row sums, which differ from the other's (its column sums).
  void equal_jacobi_sweeps() noexcept { lower_sweeps_ = upper_sweeps_ = std::max(lower_sweeps_, upper_sweeps_); }
  /// The factors (values in the layout of ilu_factors.hpp), blocking.
  std::vector<T> factors() const;
  std::size_t lower_levels() const noexcept { return levels_.lower.levels(); }
  std::size_t upper_levels() const noexcept { return levels_.upper.levels(); }
  /// The factorisation's commands, for timing it.
  const Span& factorization() const noexcept { return factorization_; }

 private:
  // The pattern's arrays on the device are the matrix's own when it is given (no second upload).
  void prepare_solves(const Bsr<T>& pattern, const std::vector<Index>& diagonal, const DeviceBsr<T>* matrix);
  Span factorize(const cl::Program& program, double shift);
  std::optional<Span> factorize_sequentially(const cl::Program& program);
  Span apply_levels(const VectorRef& r, const VectorRef& z);
  Span launch_levels(cl::Kernel& solve, const LevelSets& levels, std::size_t per_row, const char* what);
  Span apply_sync_free(const VectorRef& r, const VectorRef& z);
  Span apply_sequential(const VectorRef& r, const VectorRef& z);
  Span apply_jacobi(const VectorRef& r, const VectorRef& z);
  void split_factors(std::optional<std::size_t> jacobi_sweeps);
  Context context_;
  std::size_t block_size_, k_, block_rows_;
  TriangleLevels levels_;
  TriangularSweep sweep_;
  std::size_t lower_sweeps_ = 0, upper_sweeps_ = 0;
  cl::Buffer row_ptr_, col_;  // the pattern: shared with the device matrix, or uploaded
  DeviceBuffer<Index> diagonal_, lower_rows_, upper_rows_, status_;
  // Sync-free: the levels cut into chunks of at most rows_per_group_ rows (offsets into the level
  // rows), per chunk the chunks of the earlier levels it waits for, and the tickets.
  std::size_t rows_per_group_ = 1;
  cl_uint lower_chunk_count_ = 0, upper_chunk_count_ = 0;
  DeviceBuffer<Index> lower_chunk_ptr_, upper_chunk_ptr_, lower_chunk_waits_, upper_chunk_waits_, tickets_;
  DeviceBuffer<T> values_;
  DeviceBuffer<T> work_;    // the forward solve's result
  // Jacobi sweeps: the factors split into each row's lower blocks and its diagonal and upper
  // blocks (a second copy, so that each sweep reads only its own), and each solve's other iterate.
  DeviceBuffer<Index> lower_ptr_, upper_ptr_, lower_col_, upper_col_;
  DeviceBuffer<T> lower_values_, upper_values_, sweeps_;
  cl::Kernel lower_solve_, upper_solve_, lower_sync_free_, upper_sync_free_, lower_sequential_, upper_sequential_,
      lower_jacobi_, upper_jacobi_start_, upper_jacobi_;
  Span factorization_;
};

template <class T>
class DeviceBlockJacobi {
 public:
  /// Inverts the diagonal blocks of A (with the changes of `pattern` = ilu_pattern(a, shift)) on the
  /// device. Throws ZeroPivot naming the least block row whose diagonal block is singular.
  DeviceBlockJacobi(const Context& context, const Bsr<T>& a, const IluPattern<T>& pattern, std::size_t k,
                    double shift = 0);
  /// z = D^-1 r block by block.
  Span apply(const VectorRef& r, const VectorRef& z);
  const Span& setup() const noexcept { return setup_; }

 private:
  Context context_;
  std::size_t block_size_, k_, block_rows_;
  DeviceBuffer<T> inverse_;
  cl::Kernel apply_;
  Span setup_;
};

}  // namespace ziggurat::sparse
