#pragma once
// Element-by-element operators on a device (method notes, section 4): Y = K X and the projection
// K+ = X^T K X for a set of k vectors, K given by element matrices (matrix/elements.hpp), never
// assembled.
//
// The elements go to the device as packed upper triangles (for the tensor layout, elements of whole
// 8-row tiles as the tensor cores read them: the same values in another order; Y = K X reads either
// through a table). Y = K X runs them in colour order
// (colour_elements(): the elements of one colour share no DOF, so a launch per colour adds without
// conflicts); the projection runs them in the caller's order, in which neighbouring elements share
// X's rows in the device's cache (a generated mesh numbers its elements layer by layer; the
// elements of one colour share no DOF, so in colour order nothing is reused). A work-group (in the
// tensor layout
// each of its warps) takes a chunk of kEbeChunk consecutive elements, one element at a time
// (lib/ops/ebe.cl says how); a launch takes many chunks, so launches are few, and the last chunk
// of a launch takes what is left.
//   resident  every element stays in device memory (uploaded once, by the constructor, in the
//             caller's order), with the colour order as a table of element numbers;
//   streamed  elements go up in batches, in the order of the operation, through two pinned staging
//             buffers: the host copies batch b + 1 into one while batch b uploads and runs from the
//             other (the paper's asynchronous scheme), for element sets larger than device memory.
// The projection runs in one of three work layouts (lib/ops/ebe.cl): tiles (the product in register
// tiles of rows x 4 vectors; any element), columns (a work-item per vector holding its values in
// registers, the element matrix read by every work-item at once; elements of at most
// kEbeColumnDofs DOFs), which give the same bits, and tensor (a warp per element on NVIDIA's
// double-precision tensor cores through inline PTX; elements and vectors of at most
// kEbeTensorLimit; its own bits). Which is fastest depends on the device (measurements:
// bench/results/2026-11-28-design-measurements.md); choose_ebe_layout() (tuning/ebe_autotune.hpp)
// measures.
// Scatter of Y = K X: by colouring (one launch per colour and batch, plain adds, the same bits every
// run) or by atomic adds (one launch per batch; compare-and-swap loops, whose order of addition
// varies from run to run). The projection is the same in both: each chunk is summed in
// element order, and the chunk sums are reduced on the device in a fixed order, so resident and
// streamed runs, and every batch size, give the same bits.
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ziggurat/base/context.hpp"
#include "ziggurat/matrix/device_sparse.hpp"
#include "ziggurat/matrix/elements.hpp"
#include "ziggurat/ops/linear_operator.hpp"

namespace ziggurat::fem {

enum class EbeScatter { colouring, atomics };
const char* to_string(EbeScatter scatter);
/// "colouring" or "atomics"; InvalidArgument otherwise.
EbeScatter parse_ebe_scatter(std::string_view text);

enum class EbeLayout { tiles, columns, tensor };
const char* to_string(EbeLayout layout);
/// "tiles", "columns" or "tensor"; InvalidArgument otherwise.
EbeLayout parse_ebe_layout(std::string_view text);

/// The most DOFs an element may have for the column layout.
inline constexpr std::size_t kEbeColumnDofs = 32;
/// The most DOFs an element, and vectors a projection, may have for the tensor layout.
inline constexpr std::size_t kEbeTensorLimit = 32;

/// Why `device` cannot run the tensor layout for elements of l DOFs, k vectors and values of
/// `value_bytes` (it needs NVIDIA's compute capability 8.0 or later and double precision); empty
/// when it can.
std::string ebe_tensor_refusal(const DeviceInfo& device, std::size_t value_bytes, std::size_t l, std::size_t k);
/// Whether the tensor layout issues NVIDIA's m16n8k8 on `device` (compute capability 9.0 or later,
/// H100) rather than four m8n8k4 (8.x): what the bench's tensor-core peak must measure too.
bool ebe_tensor_uses_m16n8k8(const DeviceInfo& device);

/// Warp-steps of multiply-adds (4 a work-item, counted per warp of 32) that the projection of one
/// element of l DOFs with k vectors issues in `layout` with work-groups of at most max_group, or
/// SIZE_MAX where the layout cannot run it. At 27 vectors of 24-DOF bricks tiles and columns both
/// issue 240; tensor issues 216 on factored elements (108 tensor-core products of 8 x 8 x 4), at the
/// tensor cores' rate, and 264 on elements it cannot factor.
std::size_t ebe_projection_steps(EbeLayout layout, std::size_t l, std::size_t k, std::size_t max_group);

struct EbeOptions {
  EbeScatter scatter = EbeScatter::colouring;
  /// 0: resident. Otherwise streamed in batches of this many elements (rounded up to whole chunks).
  std::size_t batch_elements = 0;
  /// The projection's work layout; columns with elements of more than kEbeColumnDofs DOFs, and
  /// tensor where ebe_tensor_refusal() gives a reason, throw UnsupportedFeature.
  EbeLayout projection = EbeLayout::tiles;
};

/// Elements per work-group chunk: the unit of the fixed-order projection (batches are whole chunks).
inline constexpr std::size_t kEbeChunk = 32;

/// Device seconds of the last operation (0 without profiling), and how it ran.
struct EbeTiming {
  double kernels = 0;   ///< device: the products and the reduction
  double uploads = 0;   ///< device: element batches (streamed only)
  double wall = 0;      ///< the whole call, host preparation included
  std::size_t launches = 0;
};

/// K applied element by element; also a sparse::LinearOperator, so that the Krylov solvers run on
/// it matrix-free (solver/krylov.hpp).
template <class T>
class EbeOperator final : public sparse::LinearOperator<T> {
 public:
  /// `elements` must pass validate(); streamed operators read it at every operation, so it must
  /// outlive the operator unless its storage is full (then a packed copy is kept). k is 1..64.
  /// Throws UnsupportedFeature for double without fp64, for atomics in double without
  /// cl_khr_int64_base_atomics, and when an element's matrix and vectors do not fit local memory.
  EbeOperator(const Context& context, const ElementSet<T>& elements, std::size_t k, EbeOptions options = {});
  /// An operator for k vectors on `other`'s elements: they stay on the device once, shared, so
  /// either operator may be destroyed first. Throws as the constructor above.
  EbeOperator(const EbeOperator& other, std::size_t k);
  ~EbeOperator() override;
  EbeOperator(EbeOperator&&) noexcept;
  EbeOperator& operator=(EbeOperator&&) noexcept;

  std::size_t dofs() const noexcept;
  std::size_t k() const noexcept;
  std::size_t elements() const noexcept;
  std::size_t colours() const noexcept;
  bool resident() const noexcept;
  /// Whether the projection reads the elements' pivoted Cholesky factors, P L_i P^T = R^T R (the
  /// tensor layout, for elements of whole 8-row tiles that are all positive semi-definite): it then
  /// multiplies by R's upper triangle of blocks only. The factors take as much device memory again
  /// as the elements; Y = K X reads L_i as before.
  bool factored() const noexcept;
  const EbeOptions& options() const noexcept;

  /// Y = K X (Y overwritten; X and Y dofs x k, distinct). Returns when the result is complete.
  void multiply(const sparse::DeviceVectors<T>& x, sparse::DeviceVectors<T>& y);
  /// The same, enqueued (sparse::LinearOperator); a streamed operator returns once the last batch
  /// is enqueued. last_timing() is not updated.
  sparse::Span enqueue(const sparse::DeviceVectors<T>& x, sparse::DeviceVectors<T>& y) override;
  std::size_t size() const noexcept override { return dofs(); }
  std::size_t vectors() const noexcept override { return k(); }
  /// X^T K X as k x k values, row-major, symmetric.
  std::vector<double> project(const sparse::DeviceVectors<T>& x);
  const EbeTiming& last_timing() const noexcept;

  /// The bytes a projection must move at least: the packed matrices, the indices, X once.
  double project_bytes() const noexcept;
  /// Multiply-adds of a projection counted as 2 flops: l^2 k for L_i X_i and l k(k+1)/2 for the
  /// upper triangle of X_i^T Y_i, per element.
  double project_flops() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The batch size to use for `elements` on this device: 0 (resident) when `sets` element sets of
/// this size (a stiffness and a mass: 2) take at most half the device's memory, packed (for the
/// tensor layout, with their factors: twice that), else batches of about 256 MiB of element data.
template <class T>
std::size_t default_batch_elements(const Context& context, const ElementSet<T>& elements,
                                   EbeLayout layout = EbeLayout::tiles, std::size_t sets = 1);

}  // namespace ziggurat::fem
