#include "ziggurat/ops/ebe.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>

#include "base/integer_math.hpp"
#include "base/kernel_launch.hpp"
#include "base/parallel.hpp"
#include "ops/stream.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/memory.hpp"
#include "ziggurat/base/precision.hpp"
#include "ziggurat/base/program.hpp"

namespace ziggurat::fem {

const char* to_string(EbeScatter scatter) { return scatter == EbeScatter::colouring ? "colouring" : "atomics"; }

EbeScatter parse_ebe_scatter(std::string_view text) {
  if (text == "colouring") return EbeScatter::colouring;
  if (text == "atomics") return EbeScatter::atomics;
  throw InvalidArgument("unknown scatter '" + std::string(text) + "': expected colouring or atomics");
}

const char* to_string(EbeLayout layout) {
  switch (layout) {
    case EbeLayout::tiles: return "tiles";
    case EbeLayout::columns: return "columns";
    case EbeLayout::tensor: return "tensor";
  }
  return "?";
}

EbeLayout parse_ebe_layout(std::string_view text) {
  for (EbeLayout layout : {EbeLayout::tiles, EbeLayout::columns, EbeLayout::tensor})
    if (text == to_string(layout)) return layout;
  throw InvalidArgument("unknown layout '" + std::string(text) + "': expected tiles, columns or tensor");
}

namespace {
// The element and vector counts the tensor layout's registers hold (ebe.cl).
bool tensor_shape_fits(std::size_t l, std::size_t k) { return l <= kEbeTensorLimit && k <= kEbeTensorLimit; }
}  // namespace

std::string ebe_tensor_refusal(const DeviceInfo& device, std::size_t value_bytes, std::size_t l, std::size_t k) {
  // mma.sync's m8n8k4 in double came with compute capability 8.0 (A100).
  if (device.nvidia_compute_capability < 80)
    return "the tensor layout runs on NVIDIA GPUs of compute capability 8.0 or later (double-precision tensor "
           "cores, through inline PTX); " + device.label() + " is not one: use tiles or columns";
  if (value_bytes != sizeof(double))
    return "the tensor layout computes in double only (the tensor cores have no exact float product): use tiles or "
           "columns";
  if (!tensor_shape_fits(l, k))
    return "the tensor layout takes elements and projections of at most " + std::to_string(kEbeTensorLimit) +
           " DOFs and vectors (these have " + std::to_string(l) + " and " + std::to_string(k) +
           "): use tiles or columns";
  return {};
}

// mma.sync's m16n8k8 in double came with compute capability 9.0 (H100).
bool ebe_tensor_uses_m16n8k8(const DeviceInfo& device) { return device.nvidia_compute_capability >= 90; }

namespace {

constexpr std::size_t kMaxVectors = 64;
constexpr std::size_t kStreamBatchBytes = std::size_t{256} << 20;

cl_uint u32(std::size_t value) { return static_cast<cl_uint>(value); }

std::size_t packed_size(std::size_t l) { return l * (l + 1) / 2; }

// Packed position -> (row << 8) | column, for the kernels' unpacking.
std::vector<cl_ushort> packed_rows_columns(std::size_t l) {
  std::vector<cl_ushort> rc;
  rc.reserve(packed_size(l));
  for (std::size_t r = 0; r < l; ++r)
    for (std::size_t c = r; c < l; ++c) rc.push_back(static_cast<cl_ushort>(r << 8 | c));
  return rc;
}

// The tensor layout's storage order for elements of whole 8-row tiles (ebe.cl's
// tensor_matrix_column): the 8 x 8 blocks above the diagonal, row of blocks by row of blocks, each
// as the tensor cores' B operand lies in a warp (value 2 (4 g + q) + h: row 2 q + h, column g),
// then the diagonal blocks as packed upper triangles; the packed position of each stored value.
// A warp then reads each block above the diagonal whole, 16 bytes a lane, and its transpose below
// the diagonal from the same 512 bytes, faster than reading the packed rows
// (bench/results/2026-11-28-design-measurements.md). The
// device puts each element in this order (ebe_storage.cl) as it arrives.
std::vector<std::size_t> tensor_storage_order(std::size_t l) {
  const std::size_t tiles = l / 8;
  const auto packed_position = [l](std::size_t r, std::size_t c) { return r * (2 * l - 1 - r) / 2 + c; };
  std::vector<std::size_t> order;
  order.reserve(packed_size(l));
  for (std::size_t t = 0; t < tiles; ++t)
    for (std::size_t n = t + 1; n < tiles; ++n)
      for (std::size_t i = 0; i < 64; ++i) {
        const std::size_t lane = i / 2, g = lane / 4, q = lane % 4, h = i % 2;
        order.push_back(packed_position(8 * t + 2 * q + h, 8 * n + g));
      }
  for (std::size_t n = 0; n < tiles; ++n)
    for (std::size_t r = 0; r < 8; ++r)
      for (std::size_t c = r; c < 8; ++c) order.push_back(packed_position(8 * n + r, 8 * n + c));
  return order;
}

// Whether the elements are stored in tensor_storage_order: the tensor layout's, for whole tiles.
bool tensor_storage(EbeLayout layout, std::size_t l) { return layout == EbeLayout::tensor && l % 8 == 0; }

bool has_extension(const DeviceInfo& device, const char* name) {
  if (device.device() == nullptr) return false;
  return device.device.getInfo<CL_DEVICE_EXTENSIONS>().find(name) != std::string::npos;
}

// How the kernels split an element's work (ebe.cl): product tiles of `rows` x 4 vectors, projection
// tiles of 4 x 4, `group` work-items (whole warps of 32), `tiles_per_item` projection tiles each;
// `steps`: the projection's warp-steps of 4 multiply-adds an element.
struct Tiling {
  std::size_t rows = 1, group = 32, tiles_per_item = 1, steps = 0;
};

constexpr std::size_t kWarp = 32;

// Work-items of ebe.cl's product_place: row groups and vector groups each rounded up to even.
std::size_t product_lanes(std::size_t l, std::size_t rows, std::size_t quads) {
  return detail::round_up(l / rows, 2) * detail::round_up(quads, 2);
}

// Work-items of ebe.cl's projection_place: each row of the upper triangle of tiles rounded up to even.
std::size_t projection_lanes(std::size_t quads) {
  std::size_t lanes = 0;
  for (std::size_t a = 0; a < quads; ++a) lanes += detail::round_up(quads - a, 2);
  return lanes;
}

// Warp-steps of the projection's 4 x 4 tiles an element, with work-groups of `group`.
std::size_t projection_tile_steps(std::size_t l, std::size_t quads, std::size_t group) {
  const std::size_t tiles = projection_lanes(quads);
  std::size_t steps = 0;
  for (std::size_t pass = 0; pass * group < tiles; ++pass)
    steps += detail::ceil_div(std::min(group, tiles - pass * group), kWarp) * l * 4;
  return steps;
}

// Warp-steps of multiply-adds per element for product tiles of `rows` rows: the product's warps
// times their steps, plus the projection's. Each divisor of l up to 8 is tried and the cheapest
// kept (the smaller group on a tie). A group holds at least k work-items (each stages one vector).
Tiling choose_tiling(std::size_t l, std::size_t k, std::size_t max_group) {
  const std::size_t quads = detail::ceil_div(k, 4);
  Tiling best;
  best.steps = SIZE_MAX;
  for (std::size_t rows = 1; rows <= std::min<std::size_t>(l, 8); ++rows) {
    if (l % rows != 0) continue;
    const std::size_t group = detail::round_up(std::max(product_lanes(l, rows, quads), k), kWarp);
    if (group > max_group) continue;
    // the product: `rows` steps of 4 vectors per column of L_i
    const std::size_t steps = (group / kWarp) * l * rows + projection_tile_steps(l, quads, group);
    if (steps < best.steps || (steps == best.steps && group < best.group))
      best = {rows, group, detail::ceil_div(projection_lanes(quads), group), steps};
  }
  if (best.steps == SIZE_MAX)
    throw UnsupportedFeature("element-by-element kernels for " + std::to_string(l) + " DOFs and " + std::to_string(k) +
                             " vectors need work-groups of more than " + std::to_string(max_group) +
                             " work-items: use fewer vectors at a time");
  return best;
}

// The column layout: a work-item per vector (k rounded up to whole warps), l^2 multiply-adds each
// for the product, then the same projection tiles. Throws where an element's values would not fit
// registers.
Tiling column_tiling(std::size_t l, std::size_t k, std::size_t max_group) {
  const std::size_t group = detail::round_up(k, kWarp), quads = detail::ceil_div(k, 4);
  if (l > kEbeColumnDofs || group > max_group)
    throw UnsupportedFeature("the column layout takes elements of at most " + std::to_string(kEbeColumnDofs) +
                             " DOFs and work-groups of " + std::to_string(group) + " (these have " + std::to_string(l) +
                             " DOFs; the device takes " + std::to_string(max_group) + "): use the tile layout");
  return {0, group, detail::ceil_div(projection_lanes(quads), group),
          (group / kWarp) * detail::ceil_div(l * l, 4) + projection_tile_steps(l, quads, group)};
}

// The tensor layout's tensor-core products of 8 x 8 x 4 an element (ebe.cl): the product's blocks of
// 16 x 8 with steps of 8 rows, then the projection's. Elements of whole tiles are counted factored
// (ebe_factor.cl: the product takes the upper triangle of R's blocks), as semi-definite ones run.
std::size_t tensor_products(std::size_t l, std::size_t k) {
  const std::size_t rows = detail::ceil_div(l, 8), tiles = detail::ceil_div(k, 8), pairs = detail::ceil_div(k, 16);
  const std::size_t projection_blocks = detail::ceil_div(tiles * (tiles + 1) / 2, 2);  // ebe.cl's PB
  const std::size_t product_blocks = l % 8 == 0 ? rows * (rows + 1) / 2 : rows * rows;
  return 4 * pairs * product_blocks + 4 * projection_blocks * rows;
}

// The work-group size `kernel` declares (reqd_work_group_size): the tensor layout's kernel decides
// how many warps a group has.
std::size_t declared_group(const cl::Kernel& kernel, const DeviceInfo& device) {
  cl_int err = CL_SUCCESS;
  const auto size = kernel.getWorkGroupInfo<CL_KERNEL_COMPILE_WORK_GROUP_SIZE>(device.device, &err);
  check(err, "clGetKernelWorkGroupInfo", "reading ebe_project_tensor's work-group size");
  if (size[0] == 0 || size[0] % kWarp != 0)
    throw Error("ebe_project_tensor declares a work-group of " + std::to_string(size[0]) +
                " work-items: it must be whole warps of 32 (lib/ops/ebe.cl, TENSOR_WARPS)");
  return size[0];
}

// Local memory of the kernels: the unpacked matrix (rows of odd length), X_i and Y_i (rows padded
// to 4 vectors).
template <class T>
std::size_t local_bytes(std::size_t l, std::size_t k) {
  return l * ((l | 1) + 2 * detail::round_up(k, 4)) * sizeof(T);
}

template <class T>
void check_operator(const Context& context, const ElementSet<T>& elements, std::size_t k, const EbeOptions& options) {
  require_precision<T>(context.device(), "an element-by-element operator");
  if (k == 0 || k > kMaxVectors)
    throw InvalidArgument("an element-by-element operator takes 1 to " + std::to_string(kMaxVectors) + " vectors, not " +
                          std::to_string(k));
  if (elements.count() == 0) throw InvalidArgument("the element set is empty");
  const std::size_t local = local_bytes<T>(elements.element_size, k);
  if (local > context.device().local_mem_bytes)
    throw UnsupportedFeature("an element of " + std::to_string(elements.element_size) + " DOFs with " +
                             std::to_string(k) + " vectors needs " + std::to_string(local) +
                             " bytes of local memory; the device has " +
                             std::to_string(context.device().local_mem_bytes) + ": use fewer vectors at a time");
  if (options.projection == EbeLayout::tensor) {
    const std::string refusal = ebe_tensor_refusal(context.device(), sizeof(T), elements.element_size, k);
    if (!refusal.empty()) throw UnsupportedFeature(refusal);
  }
  if (options.scatter == EbeScatter::atomics && std::is_same_v<T, double> &&
      !has_extension(context.device(), "cl_khr_int64_base_atomics"))
    throw UnsupportedFeature(context.device().label() +
                             " has no 64-bit atomics (cl_khr_int64_base_atomics): use --scatter colouring");
}

}  // namespace

std::size_t ebe_projection_steps(EbeLayout layout, std::size_t l, std::size_t k, std::size_t max_group) {
  try {
    switch (layout) {
      case EbeLayout::tiles: return choose_tiling(l, k, max_group).steps;
      case EbeLayout::columns: return column_tiling(l, k, max_group).steps;
      case EbeLayout::tensor:
        // 256 multiply-adds a product: two warp-steps of 4.
        return tensor_shape_fits(l, k) && max_group >= kWarp ? 2 * tensor_products(l, k) : SIZE_MAX;
    }
  } catch (const UnsupportedFeature&) {
  }
  return SIZE_MAX;
}

template <class T>
std::size_t default_batch_elements(const Context& context, const ElementSet<T>& elements, EbeLayout layout,
                                   std::size_t sets) {
  // The packed matrix, the DOF numbers and the element's place in the colour order; the factors.
  const std::size_t l = elements.element_size, element = packed_size(l) * sizeof(T) + l * 4;
  const std::size_t per_element = (tensor_storage(layout, l) ? 2 * element : element) + 4;
  if (per_element * elements.count() * sets <= context.device().global_mem_bytes / 2) return 0;
  return std::max<std::size_t>(kEbeChunk, kStreamBatchBytes / per_element / kEbeChunk * kEbeChunk);
}

// Which order a batch of elements takes: colour after colour (Y = K X, whose launches each take one
// colour), or the caller's (the projection, whose neighbouring elements then share X's rows in the
// device's cache; a generated mesh numbers its elements layer by layer).
enum class BatchOrder { colours, elements };

// The elements on the device: every element in the caller's order, with the colour order as a table
// of element numbers (resident), or two batches with their pinned staging (streamed). Operators for
// other numbers of vectors share it (no second copy). The tensor layout's elements of whole tiles
// are put in the tensor storage order as they arrive (ebe_storage.cl); for the projection, they
// are also factored on the device (ebe_factor.cl) when every one is semi-definite, which factoring
// them all at construction finds out.
template <class T>
struct EbeElements {
  Context context;
  EbeOptions options;
  std::size_t dofs, l, count, packed;
  ElementColouring colouring;
  ElementSet<T> owned;              // a packed copy when the input is stored full
  const ElementSet<T>* source;      // the packed elements, in the caller's order
  DeviceBuffer<cl_ushort> rc;       // stored value -> (row << 8) | column
  DeviceBuffer<cl_ushort> storage;  // stored value -> its packed position (empty: packed order)
  cl::Kernel store;                 // ebe_storage_order, where `storage` is not empty
  cl::Kernel factor;                // ebe_cholesky, where `storage` is not empty, in double
  DeviceBuffer<cl_int> failed;      // ebe_cholesky's flag: an element is not semi-definite
  DeviceBuffer<T> factors[2];             // R of each element (ebe_factor.cl); empty: not factored
  DeviceBuffer<cl_int> factor_indices[2];  // its DOF numbers, permuted alike
  DeviceBuffer<cl_uint> colour_order;  // resident: colouring.order
  DeviceBuffer<T> matrices[2];
  DeviceBuffer<cl_int> indices[2];
  std::optional<PinnedHostBuffer<T>> staged_matrices[2];
  std::optional<PinnedHostBuffer<cl_int>> staged_indices[2];
  std::size_t batch;  // elements per batch; count when resident

  EbeElements(const Context& context_, const ElementSet<T>& elements, EbeOptions options_)
      : context(context_),
        options(options_),
        dofs(elements.dofs),
        l(elements.element_size),
        count(elements.count()),
        packed(packed_size(elements.element_size)),
        colouring(colour_elements(elements)),
        owned(elements.storage == ElementStorage::full ? to_upper(elements) : ElementSet<T>{}),
        source(elements.storage == ElementStorage::full ? &owned : &elements) {
    std::vector<cl_ushort> rows_columns = packed_rows_columns(l);
    if (tensor_storage(options.projection, l)) {
      const std::vector<std::size_t> order = tensor_storage_order(l);
      std::vector<cl_ushort> stored(packed), positions(packed);
      for (std::size_t i = 0; i < packed; ++i) {
        stored[i] = rows_columns[order[i]];
        positions[i] = static_cast<cl_ushort>(order[i]);
      }
      rows_columns = std::move(stored);
      storage = upload(positions, "element storage order");
      store = context.kernel(
          context.program("ebe_storage", BuildOptions().real_type<T>().define("PACKED", packed).str()),
          "ebe_storage_order");
      detail::require_work_group(context.device(), store, kWarp, "ebe_storage_order");
      if constexpr (std::is_same_v<T, double>) {
        factor = context.kernel(context.program("ebe_factor", BuildOptions().real_type<T>().define("L", l).define(
                                                                  "PACKED", packed).str()),
                                "ebe_cholesky");
        failed = upload(std::vector<cl_int>{0}, "element factoring flag", CL_MEM_READ_WRITE);
      }
    }
    batch = options.batch_elements == 0 ? count : detail::round_up(options.batch_elements, kEbeChunk);
    if (batch >= count) {
      batch = count;
      place_resident();
    } else {
      place_streamed();
    }
    rc = upload(rows_columns, "element unpacking table");
  }

  template <class V>
  DeviceBuffer<V> upload(const std::vector<V>& values, const char* purpose, cl_mem_flags flags = CL_MEM_READ_ONLY) {
    DeviceBuffer<V> buffer(context, values.size(), purpose, flags);
    detail::write_buffer(context.compute_queue(), buffer.get(), values.data(), values.size() * sizeof(V));
    return buffer;
  }

  // Copies elements [first, first + n) of `order` into host arrays (the batch's layout).
  void gather(BatchOrder order, std::size_t first, std::size_t n, T* matrices_out, cl_int* indices_out) const {
    detail::parallel_for(n, 1024, [&](std::size_t begin, std::size_t end) {
      for (std::size_t i = begin; i < end; ++i) {
        const std::size_t e = order == BatchOrder::colours ? colouring.order[first + i] : first + i;
        std::memcpy(matrices_out + i * packed, source->matrices.data() + e * packed, packed * sizeof(T));
        std::memcpy(indices_out + i * l, source->indices.data() + e * l, l * sizeof(cl_int));
      }
    });
  }

  // The packed elements go up as the caller holds them: no host copy. They are factored before they
  // are reordered.
  void place_resident() {
    matrices[0] = upload(source->matrices, "element matrices", CL_MEM_READ_WRITE);
    indices[0] = upload(source->indices, "element indices");
    if (factor() != nullptr) {
      allocate_factors(1, count);
      factor_elements(0, count, {});
      settle_factoring();
    }
    if (reordered()) {
      order_storage(0, count, {});
      check(context.compute_queue().finish(), "clFinish", "putting the element matrices in the storage order");
    }
    colour_order = upload(colouring.order, "element colour order");
  }

  // Whether the elements are kept in the tensor storage order (tensor_storage_order).
  bool reordered() const { return storage.size() != 0; }

  void allocate_factors(int slots, std::size_t n) {
    for (int s = 0; s < slots; ++s) {
      factors[s] = DeviceBuffer<T>(context, n * packed, "element factors", CL_MEM_READ_WRITE);
      factor_indices[s] = DeviceBuffer<cl_int>(context, n * l, "element factor indices", CL_MEM_READ_WRITE);
    }
  }

  // Factors the n elements in slot `slot` (packed rows) into the slot's factors, after `wait`.
  cl::Event factor_elements(int slot, std::size_t n, const std::vector<cl::Event>& wait) {
    detail::set_args(factor, "ebe_cholesky", u32(n), matrices[slot].get(), indices[slot].get(), factors[slot].get(),
                     factor_indices[slot].get(), failed.get());
    cl::Event done;
    check(context.compute_queue().enqueueNDRangeKernel(factor, cl::NullRange, cl::NDRange(detail::round_up(n, 64)),
                                                       cl::NullRange, wait.empty() ? nullptr : &wait, &done),
          "clEnqueueNDRangeKernel", "factoring element matrices");
    return done;
  }

  // Once every element is factored: keeps the factors if none was found indefinite.
  void settle_factoring() {
    cl_int flag = 1;
    detail::read_buffer(context.compute_queue(), failed.get(), &flag, sizeof flag);
    if (flag != 0)
      for (int s = 0; s < 2; ++s) factors[s] = {}, factor_indices[s] = {};
  }

  // Whether the projection reads the factors (kept only when every element factored).
  bool factored() const { return factors[0].size() != 0; }

  // Puts the n elements in slot `slot` from packed rows into the storage order, after `wait`.
  cl::Event order_storage(int slot, std::size_t n, const std::vector<cl::Event>& wait) {
    detail::set_args(store, "ebe_storage_order", u32(n), matrices[slot].get(), storage.get());
    const std::size_t groups = std::min<std::size_t>(n, std::size_t{1} << 16);  // grid-stride beyond
    cl::Event done;
    check(context.compute_queue().enqueueNDRangeKernel(store, cl::NullRange, cl::NDRange(groups * kWarp),
                                                       cl::NDRange(kWarp), wait.empty() ? nullptr : &wait, &done),
          "clEnqueueNDRangeKernel", "putting element matrices in the storage order");
    return done;
  }

  // Factoring needs every element semi-definite, so a first pass factors each batch for the flag.
  void place_streamed() {
    for (int s = 0; s < 2; ++s) {
      matrices[s] = DeviceBuffer<T>(context, batch * packed, "element matrix batch", CL_MEM_READ_WRITE);
      indices[s] = DeviceBuffer<cl_int>(context, batch * l, "element index batch", CL_MEM_READ_ONLY);
      staged_matrices[s].emplace(context, batch * packed);
      staged_indices[s].emplace(context, batch * l);
    }
    if (factor() == nullptr) return;
    allocate_factors(2, batch);
    cl::CommandQueue& queue = context.compute_queue();
    for (std::size_t first = 0; first < count; first += batch) {
      const std::size_t n = std::min(batch, count - first);
      gather(BatchOrder::elements, first, n, staged_matrices[0]->data(), staged_indices[0]->data());
      detail::write_buffer(queue, matrices[0].get(), staged_matrices[0]->data(), n * packed * sizeof(T));
      detail::write_buffer(queue, indices[0].get(), staged_indices[0]->data(), n * l * sizeof(cl_int));
      factor_elements(0, n, {});
      check(queue.finish(), "clFinish", "factoring element matrices");
    }
    settle_factoring();
  }

  std::size_t batches() const { return detail::ceil_div(count, batch); }

  // Runs launch(slot, first, n, ready) for every batch of `order` in turn, with the batch's elements
  // in slot `slot` of the device buffers (resident: all of them, in the caller's order); launch
  // enqueues kernels on the compute queue waiting on `ready` and returns the last one's event. Each
  // batch's uploads go into `uploads` (first, last), its ordering into the storage order into
  // `kernels`.
  template <class Launch>
  void for_each_batch(BatchOrder order, Launch launch, std::vector<std::pair<cl::Event, cl::Event>>& uploads,
                      std::vector<std::pair<cl::Event, cl::Event>>& kernels) {
    if (batch == count) {
      launch(0, std::size_t{0}, count, std::vector<cl::Event>{});
      return;
    }
    cl::Event uploaded[2], used[2];
    cl::CommandQueue& up = context.upload_queue();
    for (std::size_t b = 0; b < batches(); ++b) {
      const int s = static_cast<int>(b % 2);
      const std::size_t first = b * batch, n = std::min(batch, count - first);
      if (uploaded[s]() != nullptr) uploaded[s].wait();  // the staging buffer is free again
      gather(order, first, n, staged_matrices[s]->data(), staged_indices[s]->data());
      std::vector<cl::Event> after_use;
      if (used[s]() != nullptr) after_use.push_back(used[s]);
      cl::Event matrices_up;
      check(up.enqueueWriteBuffer(matrices[s].get(), CL_FALSE, 0, n * packed * sizeof(T), staged_matrices[s]->data(),
                                  &after_use, &matrices_up),
            "clEnqueueWriteBuffer", "uploading a batch of element matrices");
      check(up.enqueueWriteBuffer(indices[s].get(), CL_FALSE, 0, n * l * sizeof(cl_int), staged_indices[s]->data(),
                                  &after_use, &uploaded[s]),
            "clEnqueueWriteBuffer", "uploading a batch of element indices");
      check(up.flush(), "clFlush", "uploading element batches");
      uploads.emplace_back(matrices_up, uploaded[s]);
      if (factored() && order == BatchOrder::elements) {  // the projection's
        matrices_up = factor_elements(s, n, {matrices_up, uploaded[s]});
        kernels.emplace_back(matrices_up, matrices_up);
      } else if (reordered()) {
        matrices_up = order_storage(s, n, {matrices_up});
        kernels.emplace_back(matrices_up, matrices_up);
      }
      used[s] = launch(s, first, n, std::vector<cl::Event>{matrices_up, uploaded[s]});
      check(context.compute_queue().flush(), "clFlush", "element batches");
    }
  }
};

template <class T>
struct EbeOperator<T>::Impl {
  std::shared_ptr<EbeElements<T>> el;
  Context context;
  std::size_t k;
  Tiling tiling, columns;  // columns: the projection's, in the column layout
  std::size_t tensor_group = 0;  // the tensor layout's, as ebe.cl declares it
  EbeLayout layout;
  std::size_t reduce_group;
  cl::Kernel multiply_kernel, project_kernel, reduce_kernel;
  DeviceBuffer<T> partial, result;
  EbeTiming timing;
  std::vector<std::pair<cl::Event, cl::Event>> upload_events, kernel_events;

  Impl(std::shared_ptr<EbeElements<T>> elements, std::size_t k_)
      : el(std::move(elements)),
        context(el->context),
        k(k_),
        tiling(choose_tiling(el->l, k_, context.device().max_work_group_size)),
        layout(el->options.projection),
        reduce_group(detail::power_of_two_at_most(std::min<std::size_t>(context.device().max_work_group_size, 256))) {
    if (layout == EbeLayout::columns) columns = column_tiling(el->l, k, context.device().max_work_group_size);
    build_kernels();
    const std::size_t chunks = detail::ceil_div(el->count, kEbeChunk);
    partial = DeviceBuffer<T>(context, chunks * k * (k + 1) / 2, "projection partial sums");
    result = DeviceBuffer<T>(context, k * (k + 1) / 2, "projection");
  }

  void build_kernels() {
    BuildOptions build;
    build.real_type<T>()
        .define("L", el->l)
        .define("K", k)
        .define("TR", tiling.rows)
        .define("WG", tiling.group)
        .define("TPT", tiling.tiles_per_item)
        .define("CHUNK", kEbeChunk)
        .define("REDUCE_GROUP", reduce_group);
    if (el->options.scatter == EbeScatter::atomics) build.define("ATOMICS", 1);
    if (layout == EbeLayout::columns)
      build.define("COLUMNS", 1).define("CWG", columns.group).define("CTPT", columns.tiles_per_item);
    if (layout == EbeLayout::tensor) {
      build.define("TENSOR", 1);
      if (ebe_tensor_uses_m16n8k8(context.device())) build.define("MMA16", 1);
    }
    if (el->factored()) build.define("FACTORED", 1);
    const cl::Program& program = context.program("ebe", build.str());
    multiply_kernel = context.kernel(program, "ebe_multiply");
    project_kernel = context.kernel(program, project_name());
    reduce_kernel = context.kernel(program, "ebe_reduce");
    detail::require_work_group(context.device(), multiply_kernel, tiling.group, "ebe_multiply");
    if (layout == EbeLayout::tensor) tensor_group = declared_group(project_kernel, context.device());
    detail::require_work_group(context.device(), project_kernel, project_group(), project_name());
    detail::require_work_group(context.device(), reduce_kernel, reduce_group, "ebe_reduce");
  }

  const char* project_name() const {
    switch (layout) {
      case EbeLayout::columns: return "ebe_project_columns";
      case EbeLayout::tensor: return "ebe_project_tensor";
      default: return "ebe_project";
    }
  }
  std::size_t project_group() const {
    switch (layout) {
      case EbeLayout::columns: return columns.group;
      case EbeLayout::tensor: return tensor_group;
      default: return tiling.group;
    }
  }

  // The projection's partial sums of elements [first, first + n) of `slot`, chunk sums from
  // first / kEbeChunk on.
  cl::Event project_range(int slot, std::size_t first, std::size_t n, const cl::Buffer& x,
                          const std::vector<cl::Event>& wait) {
    const std::size_t chunks = detail::ceil_div(el->count, kEbeChunk);
    if (el->factored())
      detail::set_args(project_kernel, project_name(), u32(0), u32(n), el->factors[slot].get(),
                       el->factor_indices[slot].get(), x, partial.get(), u32(first / kEbeChunk), u32(chunks));
    else if (layout != EbeLayout::tiles)  // columns and tensor need no unpacking table
      detail::set_args(project_kernel, project_name(), u32(0), u32(n), el->matrices[slot].get(),
                       el->indices[slot].get(), x, partial.get(), u32(first / kEbeChunk), u32(chunks));
    else
      detail::set_args(project_kernel, project_name(), u32(0), u32(n), el->matrices[slot].get(),
                       el->indices[slot].get(), el->rc.get(), x, partial.get(), u32(first / kEbeChunk), u32(chunks));
    // A work-group of the tensor layout takes a chunk a warp.
    const std::size_t chunks_per_group = layout == EbeLayout::tensor ? tensor_group / kWarp : 1;
    return enqueue(project_kernel, detail::ceil_div(n, kEbeChunk * chunks_per_group), project_group(), wait,
                   "running the projection");
  }

  cl::Event enqueue(cl::Kernel& kernel, std::size_t groups, std::size_t items, const std::vector<cl::Event>& wait,
                    const char* what) {
    cl::Event done;
    check(context.compute_queue().enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange(groups * items),
                                                       cl::NDRange(items), wait.empty() ? nullptr : &wait, &done),
          "clEnqueueNDRangeKernel", what);
    kernel_events.emplace_back(done, done);
    ++timing.launches;
    return done;
  }

  // Elements [first, first + n) of the colour order in `slot` (resident: through the colour order's
  // table; streamed batches come in colour order).
  cl::Event multiply_range(int slot, std::size_t first, std::size_t n, const cl::Buffer& x, const cl::Buffer& y,
                           const std::vector<cl::Event>& wait) {
    const cl::Buffer order = el->batch == el->count ? el->colour_order.get() : cl::Buffer();
    detail::set_args(multiply_kernel, "ebe_multiply", u32(first), u32(n), el->matrices[slot].get(),
                     el->indices[slot].get(), el->rc.get(), x, y, order);
    return enqueue(multiply_kernel, detail::ceil_div(n, kEbeChunk), tiling.group, wait, "running ebe_multiply");
  }

  // One batch (elements [first, first + n) of the colour order, in `slot`): one launch per colour
  // it meets, or one launch with atomics.
  cl::Event multiply_batch(int slot, std::size_t first, std::size_t n, const cl::Buffer& x, const cl::Buffer& y,
                           const std::vector<cl::Event>& wait) {
    if (el->options.scatter == EbeScatter::atomics) return multiply_range(slot, 0, n, x, y, wait);
    const ElementColouring& colouring = el->colouring;
    cl::Event last;
    std::vector<cl::Event> ready = wait;
    for (std::size_t c = 0; c < colouring.colours(); ++c) {
      const std::size_t begin = std::max(colouring.colour_start[c], first);
      const std::size_t end = std::min(colouring.colour_start[c + 1], first + n);
      if (begin >= end) continue;
      last = multiply_range(slot, begin - first, end - begin, x, y, ready);
      ready.clear();  // the queue is in order: only the first launch waits for the upload
    }
    return last;
  }

  // Y = 0, then every batch's products: the fill's and the last product's events.
  sparse::Span enqueue_multiply(const sparse::DeviceVectors<T>& x, sparse::DeviceVectors<T>& y) {
    check_vectors(x, "X");
    check_vectors(y, "Y");
    if (x.buffer().get()() == y.buffer().get()()) throw InvalidArgument("Y = K X needs distinct X and Y");
    begin_timing();
    sparse::Span span;
    span.first = detail::enqueue_zero(context, context.compute_queue(), y.buffer().get(), y.buffer().bytes());
    span.last = span.first;
    const cl::Buffer& xb = x.buffer().get();
    const cl::Buffer& yb = y.buffer().get();
    el->for_each_batch(
        BatchOrder::colours,
        [&](int slot, std::size_t first, std::size_t n, const std::vector<cl::Event>& ready) {
          return span.last = multiply_batch(slot, first, n, xb, yb, ready);
        },
        upload_events, kernel_events);
    return span;
  }

  void check_vectors(const sparse::DeviceVectors<T>& v, const char* name) const {
    if (v.rows() != el->dofs || v.k() != k)
      throw InvalidArgument(std::string(name) + " has " + std::to_string(v.rows()) + " x " + std::to_string(v.k()) +
                            " values; the operator takes " + std::to_string(el->dofs) + " x " + std::to_string(k));
  }

  void begin_timing() {
    timing = EbeTiming{};
    upload_events.clear();
    kernel_events.clear();
  }

  void end_timing(std::chrono::steady_clock::time_point start) {
    timing.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!context.device().profiling) return;
    for (const auto& [first, last] : kernel_events) timing.kernels += profiled_seconds(first, last);
    for (const auto& [first, last] : upload_events) timing.uploads += profiled_seconds(first, last);
  }
};

template <class T>
EbeOperator<T>::EbeOperator(const Context& context, const ElementSet<T>& elements, std::size_t k, EbeOptions options) {
  check_operator(context, elements, k, options);
  impl_ = std::make_unique<Impl>(std::make_shared<EbeElements<T>>(context, elements, options), k);
}

template <class T>
EbeOperator<T>::EbeOperator(const EbeOperator& other, std::size_t k) {
  const EbeElements<T>& el = *other.impl_->el;
  check_operator(el.context, *el.source, k, el.options);
  impl_ = std::make_unique<Impl>(other.impl_->el, k);
}

template <class T>
EbeOperator<T>::~EbeOperator() = default;
template <class T>
EbeOperator<T>::EbeOperator(EbeOperator&&) noexcept = default;
template <class T>
EbeOperator<T>& EbeOperator<T>::operator=(EbeOperator&&) noexcept = default;

template <class T>
std::size_t EbeOperator<T>::dofs() const noexcept { return impl_->el->dofs; }
template <class T>
std::size_t EbeOperator<T>::k() const noexcept { return impl_->k; }
template <class T>
std::size_t EbeOperator<T>::elements() const noexcept { return impl_->el->count; }
template <class T>
std::size_t EbeOperator<T>::colours() const noexcept { return impl_->el->colouring.colours(); }
template <class T>
bool EbeOperator<T>::resident() const noexcept { return impl_->el->batch == impl_->el->count; }
template <class T>
bool EbeOperator<T>::factored() const noexcept { return impl_->el->factored(); }
template <class T>
const EbeOptions& EbeOperator<T>::options() const noexcept { return impl_->el->options; }
template <class T>
const EbeTiming& EbeOperator<T>::last_timing() const noexcept { return impl_->timing; }

template <class T>
void EbeOperator<T>::multiply(const sparse::DeviceVectors<T>& x, sparse::DeviceVectors<T>& y) {
  const auto start = std::chrono::steady_clock::now();
  impl_->enqueue_multiply(x, y);
  check(impl_->context.compute_queue().finish(), "clFinish", "an element-by-element product");
  impl_->end_timing(start);
}

template <class T>
sparse::Span EbeOperator<T>::enqueue(const sparse::DeviceVectors<T>& x, sparse::DeviceVectors<T>& y) {
  return impl_->enqueue_multiply(x, y);
}

template <class T>
std::vector<double> EbeOperator<T>::project(const sparse::DeviceVectors<T>& x) {
  Impl& im = *impl_;
  const EbeElements<T>& el = *im.el;
  im.check_vectors(x, "X");
  const auto start = std::chrono::steady_clock::now();
  im.begin_timing();
  const std::size_t chunks = detail::ceil_div(el.count, kEbeChunk);
  im.el->for_each_batch(
      BatchOrder::elements,
      [&](int slot, std::size_t first, std::size_t n, const std::vector<cl::Event>& ready) {
        return im.project_range(slot, first, n, x.buffer().get(), ready);
      },
      im.upload_events, im.kernel_events);
  detail::set_args(im.reduce_kernel, "ebe_reduce", im.partial.get(), u32(chunks), im.result.get());
  im.enqueue(im.reduce_kernel, im.k * (im.k + 1) / 2, im.reduce_group, {}, "reducing the projection");
  std::vector<T> upper(im.k * (im.k + 1) / 2);
  detail::read_buffer(im.context.compute_queue(), im.result.get(), upper.data(), upper.size() * sizeof(T));
  std::vector<double> full(im.k * im.k);
  std::size_t entry = 0;
  for (std::size_t a = 0; a < im.k; ++a)
    for (std::size_t b = a; b < im.k; ++b, ++entry) full[a * im.k + b] = full[b * im.k + a] = upper[entry];
  im.end_timing(start);
  return full;
}

template <class T>
double EbeOperator<T>::project_bytes() const noexcept {
  const EbeElements<T>& el = *impl_->el;
  return static_cast<double>(el.count) * (el.packed * sizeof(T) + el.l * 4) + double(el.dofs) * impl_->k * sizeof(T);
}

template <class T>
double EbeOperator<T>::project_flops() const noexcept {
  const EbeElements<T>& el = *impl_->el;
  const std::size_t k = impl_->k;
  const double per_element = double(el.l) * el.l * k + double(el.l) * k * (k + 1) / 2;
  return 2 * per_element * el.count;
}

template std::size_t default_batch_elements<float>(const Context&, const ElementSet<float>&, EbeLayout, std::size_t);
template std::size_t default_batch_elements<double>(const Context&, const ElementSet<double>&, EbeLayout, std::size_t);
template class EbeOperator<float>;
template class EbeOperator<double>;

}  // namespace ziggurat::fem
