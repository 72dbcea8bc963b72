#include "ziggurat/ops/wave_step.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <string>

#include "base/integer_math.hpp"
#include "base/kernel_launch.hpp"
#include "base/parallel.hpp"
#include "ops/heat_stencil.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/precision.hpp"
#include "ziggurat/base/program.hpp"

namespace ziggurat::wave {

namespace {

constexpr double kPi = 3.14159265358979323846;

std::string node_text(std::size_t dims, GridNode node) {
  return "node (" + std::to_string(node.ix) + ", " + (dims == 3 ? std::to_string(node.iy) + ", " : std::string()) +
         std::to_string(node.iz) + ")";
}

// InvalidArgument unless `node` lies `margin` nodes or more inside a grid of this shape.
template <class Shape>
void check_inside(const Shape& shape, GridNode node, std::size_t margin, const std::string& what) {
  const auto outside = [margin](std::size_t i, std::size_t n) { return i < margin || i + margin >= n; };
  if (outside(node.ix, shape.nx) || outside(node.iz, shape.nz) ||
      (shape.dims == 3 ? outside(node.iy, shape.ny) : node.iy != 0))
    throw InvalidArgument(what + " at " + node_text(shape.dims, node) + " lies outside the grid's nodes (" +
                          std::to_string(shape.nx) + " x " +
                          (shape.dims == 3 ? std::to_string(shape.ny) + " x " : std::string()) +
                          std::to_string(shape.nz) + (margin > 0 ? ", and needs a node on every side)" : ")"));
}

std::uint32_t dof(const ElasticGrid& grid, GridNode node, std::size_t c) {
  return static_cast<std::uint32_t>(grid.dims * grid.node(node.ix, node.iy, node.iz) + c);
}

std::size_t group_size(const Context& context) {
  return detail::power_of_two_at_most(std::min<std::size_t>(context.device().max_work_group_size, 256));
}

// The values in a read-only buffer (of one element when there are none: OpenCL has no empty buffers).
template <class V>
DeviceBuffer<V> upload_points(const Context& context, const std::vector<V>& values, const char* what) {
  DeviceBuffer<V> buffer(context, std::max<std::size_t>(values.size(), 1), what, CL_MEM_READ_ONLY);
  if (!values.empty())
    detail::write_buffer(context.compute_queue(), buffer.get(), values.data(), values.size() * sizeof(V));
  return buffer;
}

}  // namespace

double ricker(double t, double frequency) {
  const double a = kPi * frequency * (t - ricker_delay(frequency));
  return (1 - 2 * a * a) * std::exp(-a * a);
}

double ricker_delay(double frequency) { return 1.5 / frequency; }

PointSource point_force(const ElasticGrid& grid, GridNode node, const std::array<double, 3>& force) {
  check_inside(grid, node, 0, "the source");
  if (grid.dims == 2 && force[1] != 0) throw InvalidArgument("a 2D grid (x, z) has no force along y");
  PointSource s;
  const std::size_t axis[3] = {0, 1, grid.dims == 3 ? 2u : 1u};  // the DOF of fx, fy, fz
  for (std::size_t k = 0; k < 3; ++k)
    if (force[k] != 0) s.dofs.push_back(dof(grid, node, axis[k])), s.forces.push_back(force[k]);
  if (s.dofs.empty()) throw InvalidArgument("a point force needs a direction: its components are all 0");
  return s;
}

PointSource explosion(const ElasticGrid& grid, GridNode node) {
  check_inside(grid, node, 1, "an explosive source");
  const auto [ix, iy, iz] = node;
  PointSource s{{dof(grid, {ix - 1, iy, iz}, 0), dof(grid, {ix + 1, iy, iz}, 0)}, {-1.0, 1.0}};
  if (grid.dims == 3) {
    s.dofs.insert(s.dofs.end(), {dof(grid, {ix, iy - 1, iz}, 1), dof(grid, {ix, iy + 1, iz}, 1)});
    s.forces.insert(s.forces.end(), {-1.0, 1.0});
  }
  s.dofs.insert(s.dofs.end(), {dof(grid, {ix, iy, iz - 1}, grid.dims - 1), dof(grid, {ix, iy, iz + 1}, grid.dims - 1)});
  s.forces.insert(s.forces.end(), {-1.0, 1.0});
  return s;
}

template <class T>
void check_node(const WaveSystem<T>& system, GridNode node, const std::string& what) {
  check_inside(system, node, 0, what);
}

template <class T>
std::vector<T> source_weights(const WaveSystem<T>& system, const PointSource& source) {
  std::vector<T> w(source.dofs.size());
  for (std::size_t s = 0; s < w.size(); ++s) {
    if (source.dofs[s] >= system.dofs()) throw InvalidArgument("a source DOF lies outside the system");
    w[s] = T(system.dt * system.dt * source.forces[s] * double(system.inverse_mass[source.dofs[s]]));
  }
  return w;
}

template <class T>
void wave_step_reference(const WaveSystem<T>& system, const std::vector<T>& u1, const std::vector<T>& u2,
                         std::vector<T>& u3, const PointSource& source, const std::vector<T>& weights,
                         double amplitude) {
  const std::size_t n = system.dofs();
  const sparse::Dia<T>& k1 = system.k1;
  u3.resize(n);
  detail::parallel_for(n, 1 << 14, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      T acc = 0;
      for (std::size_t d = 0; d < k1.offsets.size(); ++d) {
        const std::size_t o = static_cast<std::size_t>(k1.offsets[d]);
        const T* diagonal = k1.values.data() + d * n;
        if (i + o < n) acc += diagonal[i] * u2[i + o];
        if (o > 0 && i >= o) acc += diagonal[i - o] * u2[i - o];
      }
      acc += system.k2[i] * u1[i];
      u3[i] = -acc * system.inverse_mass[i];
    }
  });
  const T a = T(amplitude);
  for (std::size_t s = 0; s < source.dofs.size(); ++s) u3[source.dofs[s]] += weights[s] * a;
}

// The strip walk's traffic between the two reads of a diagonal, in units of the cache the device
// reports: on an H100 (4.125 MiB reported, 50 MB of L2) strips of 16, 32 and 64 rows of a 400-node
// plane ran at 0.815, 0.858 and 0.774 of the streaming limit, in order 0.576 (2026-11-28).
constexpr double kStripCaches = 2;
// A work-item's DOFs are held in registers: more than a few only spill (4 already ran slower than 2).
constexpr std::size_t kMostRows = 8;

template <class T>
WaveWalk plan_walk(const DeviceInfo& device, const WaveSystem<T>& system) {
  WaveWalk walk;
  if (system.dims != 3 || system.k1.offsets.empty() || device.device() == nullptr) return walk;
  const double cache = double(device.device.getInfo<CL_DEVICE_GLOBAL_MEM_CACHE_SIZE>());
  const double dof_bytes = double((system.k1.offsets.size() + 5) * sizeof(T));
  if (double(system.k1.offsets.back()) * dof_bytes <= kStripCaches * cache) return walk;  // a plane's traffic fits
  // Strips of equal rows, as many as keep each strip's traffic within that budget.
  const double row_bytes = double(system.dims * system.nx) * dof_bytes;
  const std::size_t most =
      std::clamp<std::size_t>(static_cast<std::size_t>(kStripCaches * cache / row_bytes), 1, system.ny);
  walk.strip_rows = detail::ceil_div(system.ny, detail::ceil_div(system.ny, most));
  return walk;
}

template <class T>
WaveStep<T>::WaveStep(const Context& context, const WaveSystem<T>& system, const PointSource& source, DofRange stored,
                      std::size_t part_bytes, std::optional<WaveWalk> walk)
    : context_(context),
      n_(system.dofs()),
      stored_(stored),
      diagonals_(system.k1.offsets.size()),
      plane_dofs_(system.dims * system.nx * (system.dims == 3 ? system.ny : 1)),
      walk_(walk ? *walk : plan_walk(context.device(), system)),
      band_(system.k1.offsets.empty() ? 0 : system.k1.offsets.back()),
      points_in_step_(!detail::runs_flat_kernels(context.device())) {
  require_precision<T>(context.device(), "a wave step in double");
  if (stored.count == 0 || stored.end() > n_)
    throw InvalidArgument("the DOFs [" + std::to_string(stored.first) + ", " + std::to_string(stored.end()) +
                          ") are not a part of the system's " + std::to_string(n_));
  const std::vector<std::int32_t>& offsets = system.k1.offsets;
  if (offsets.empty() || offsets.front() != 0 || std::adjacent_find(offsets.begin(), offsets.end(), std::greater_equal<>()) != offsets.end())
    throw InvalidArgument("K1 must be half-stored from its main diagonal: offsets 0, then increasing");
  if (n_ + std::size_t(system.k1.offsets.back()) >= (std::size_t{1} << 32))
    throw InvalidArgument("a wave system of " + std::to_string(n_) + " DOFs is beyond the kernels' 32-bit indices");
  if (walk_.rows_per_item == 0 || walk_.rows_per_item > kMostRows || (walk_.strip_rows > 0 && system.dims != 3))
    throw InvalidArgument("a wave step's walk takes 1 to " + std::to_string(kMostRows) +
                          " DOFs a work-item, and strips of planes in 3D only");
  walk_.strip_rows = std::min(walk_.strip_rows, system.ny);
  if (walk_.strip_rows > 0 && n_ + 2 * plane_dofs_ >= (std::size_t{1} << 32))
    throw InvalidArgument("a wave system of " + std::to_string(n_) + " DOFs is beyond the strip walk's 32-bit indices");
  const auto constant_bytes = context.device().device.getInfo<CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE>();
  if (diagonals_ * sizeof(std::int32_t) > constant_bytes)
    throw UnsupportedFeature(std::to_string(diagonals_) + " diagonals do not fit the constant memory of " +
                             context.device().label());
  // The rows [first, end) of every diagonal (each straight from the system, no host copy), K2 and m.
  const std::size_t len = stored.count;
  upload_k1(system, part_bytes > 0 ? part_bytes : context.device().max_alloc_bytes);
  const auto upload = [&](const T* values, std::size_t count, const char* what) {
    DeviceBuffer<T> buffer(context, count, what, CL_MEM_READ_ONLY);
    detail::write_buffer(context.compute_queue(), buffer.get(), values, count * sizeof(T));
    return buffer;
  };
  k2_ = upload(system.k2.data() + stored.first, len, "K2");
  inverse_mass_ = upload(system.inverse_mass.data() + stored.first, len, "inverse mass");
  // The source DOFs this part holds, at local positions, in DOF order (the kernel searches them;
  // a stable sort keeps the order of the terms a DOF adds).
  const std::vector<T> all_weights = source_weights(system, source);
  std::vector<std::pair<std::uint32_t, T>> held;
  for (std::size_t s = 0; s < source.dofs.size(); ++s)
    if (source.dofs[s] >= stored.first && source.dofs[s] < stored.end())
      held.emplace_back(static_cast<std::uint32_t>(source.dofs[s] - stored.first), all_weights[s]);
  std::stable_sort(held.begin(), held.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::uint32_t> local;
  std::vector<T> weights;
  for (const auto& [dof, weight] : held) {
    local.push_back(dof);
    weights.push_back(weight);
  }
  sources_ = local.size();
  weights_ = upload_points(context, weights, "source weights");
  source_dofs_ = upload_points(context, local, "source DOFs");
  set_receivers({});
  std::string offset_list;
  for (const std::int32_t o : offsets) offset_list += (offset_list.empty() ? "" : ",") + std::to_string(o);
  strip_dofs_ = walk_.strip_rows * system.dims * system.nx;
  const cl::Program& program = context.program("wave_step", BuildOptions()
                                                                .real_type<T>()
                                                                .define("WAVE_DIAGONALS", diagonals_)
                                                                .define("WAVE_OFFSETS", offset_list)
                                                                .define("WAVE_PER_PART", per_part_)
                                                                .define("WAVE_ROWS", walk_.rows_per_item)
                                                                .define("WAVE_PLANE", plane_dofs_)
                                                                .define("WAVE_STRIP", strip_dofs_)
                                                                .define("WAVE_POINTS_IN_STEP", points_in_step_ ? 1 : 0)
                                                                .str());
  step_ = context.kernel(program, "wave_step");
  if (!points_in_step_) {
    points_ = context.kernel(program, "wave_points");
    flat_ = context.kernel(program, "wave_step_flat");
  }
}

// K1's rows [first, end) of every diagonal, straight from the system (no host copy), in as few
// parts of at most part_bytes as hold them; the kernel takes four.
template <class T>
void WaveStep<T>::upload_k1(const WaveSystem<T>& system, std::size_t part_bytes) {
  constexpr std::size_t kMaxParts = 4;
  const std::size_t len = stored_.count, diagonal_bytes = len * sizeof(T);
  per_part_ = std::max<std::size_t>(1, part_bytes / diagonal_bytes);
  const std::size_t parts = (diagonals_ + per_part_ - 1) / per_part_;
  if (parts > kMaxParts)
    throw OutOfDeviceMemory("K1's " + std::to_string(diagonals_) + " diagonals of " + std::to_string(diagonal_bytes >> 20) +
                            " MiB need " + std::to_string(parts) + " buffers of at most " +
                            std::to_string(part_bytes >> 20) + " MiB on " +
                            context_.device().label() + ", more than the step's " + std::to_string(kMaxParts) +
                            ": make the problem smaller, or split it over several devices");
  for (std::size_t p = 0; p < parts; ++p) {
    const std::size_t first = p * per_part_, count = std::min(per_part_, diagonals_ - first);
    DeviceBuffer<T> part(context_, count * len, "K1 diagonals", CL_MEM_READ_ONLY);
    for (std::size_t d = 0; d < count; ++d)
      detail::write_buffer(context_.compute_queue(), part.get(), system.k1.values.data() + (first + d) * n_ + stored_.first,
                           diagonal_bytes, d * diagonal_bytes);
    k1_parts_.push_back(std::move(part));
  }
}

template <class T>
WaveStep<T>::WaveStep(const Context& context, const WaveSystem<T>& system, const PointSource& source)
    : WaveStep(context, system, source, DofRange{0, system.dofs()}) {}

template <class T>
cl::Event WaveStep<T>::update(const cl::Buffer& u1, const cl::Buffer& u2, const cl::Buffer& u3, DofRange computed,
                              double amplitude, const Recording& recording, const std::vector<cl::Event>& wait_for) {
  if (computed.end() > stored_.count) throw InvalidArgument("a wave step outside the part's stored DOFs");
  const Launch launch{u1, u2, u3, amplitude, recorded_in(recording), recording.offset,
                      wait_for.empty() ? nullptr : &wait_for};
  if (points_in_step_) return walk(launch, computed);
  // CPU devices: the interior (every term there) flat, the vector's ends through the walk.
  const std::size_t band = std::size_t(band_), a = stored_.first + computed.first, e = a + computed.count;
  const std::size_t lo = std::clamp(band, a, e), hi = std::clamp(n_ > band ? n_ - band : 0, lo, e);
  cl::Event done;
  if (lo > a) done = walk(launch, {computed.first, lo - a});
  if (hi > lo) done = flat(launch, {lo - stored_.first, hi - lo});
  if (e > hi) done = walk(launch, {hi - stored_.first, e - hi});
  return done;
}

template <class T>
cl::Event WaveStep<T>::walk(const Launch& launch, DofRange computed) {
  cl::Event done;
  if (computed.count == 0) return done;
  const std::size_t group = group_size(context_), rows = walk_.rows_per_item;
  // The walk's positions: the range's DOFs in order, or every strip of every plane it touches.
  const std::size_t a = stored_.first + computed.first;
  const std::size_t planes = (a + computed.count - 1) / plane_dofs_ - a / plane_dofs_ + 1;
  const std::size_t positions =
      strip_dofs_ == 0 ? computed.count : detail::ceil_div(plane_dofs_, strip_dofs_) * planes * strip_dofs_;
  detail::set_args(step_, "wave_step", k1_part(0), k1_part(1), k1_part(2), k1_part(3), k2_.get(), inverse_mass_.get(),
                   launch.u1, launch.u2, launch.u3, static_cast<cl_uint>(n_), static_cast<cl_uint>(stored_.first),
                   static_cast<cl_uint>(stored_.count), static_cast<cl_uint>(computed.first),
                   static_cast<cl_uint>(computed.count), static_cast<cl_uint>(planes), source_dofs_.get(),
                   weights_.get(), static_cast<cl_uint>(sources_), T(launch.amplitude), receiver_dofs_.get(),
                   receiver_slots_.get(), static_cast<cl_uint>(receivers_), launch.recorded,
                   static_cast<cl_uint>(launch.offset));
  check(context_.compute_queue().enqueueNDRangeKernel(
            step_, cl::NullRange, cl::NDRange(detail::ceil_div(positions, rows * group) * group), cl::NDRange(group),
            launch.wait_for, &done),
        "clEnqueueNDRangeKernel", "a wave step");
  return done;
}

template <class T>
cl::Event WaveStep<T>::flat(const Launch& launch, DofRange interior) {
  detail::set_args(flat_, "wave_step_flat", k1_part(0), k1_part(1), k1_part(2), k1_part(3), k2_.get(), inverse_mass_.get(),
                   launch.u1, launch.u2, launch.u3, static_cast<cl_uint>(stored_.count),
                   static_cast<cl_uint>(interior.first), static_cast<cl_uint>(interior.count));
  const std::size_t group = group_size(context_);
  cl::Event done;
  check(context_.compute_queue().enqueueNDRangeKernel(flat_, cl::NullRange, cl::NDRange(detail::round_up(interior.count, group)),
                                                      cl::NDRange(group), launch.wait_for, &done),
        "clEnqueueNDRangeKernel", "a wave step");
  return done;
}

template <class T>
const cl::Buffer& WaveStep<T>::k1_part(std::size_t p) const {
  return k1_parts_[std::min(p, k1_parts_.size() - 1)].get();  // the kernels take four: the last stands in
}

// The buffer the receivers' values go to; without receivers the kernels write none, and any buffer
// of the type stands in.
template <class T>
const cl::Buffer& WaveStep<T>::recorded_in(const Recording& recording) const {
  if (receivers_ == 0) return weights_.get();
  if (recording.recorded.get() == nullptr)
    throw InvalidArgument("a wave step with receivers needs a buffer to record them in");
  return recording.recorded;
}

template <class T>
cl::Event WaveStep<T>::finish(const cl::Buffer& u3, double amplitude, const Recording& recording) {
  cl::Event done;
  if (points_in_step_ || (sources_ == 0 && receivers_ == 0)) return done;
  const cl::Buffer& recorded = recorded_in(recording);
  detail::set_args(points_, "wave_points", u3, source_dofs_.get(), weights_.get(), static_cast<cl_uint>(sources_),
                   T(amplitude), receiver_dofs_.get(), receiver_slots_.get(), static_cast<cl_uint>(receivers_), recorded,
                   static_cast<cl_uint>(recording.offset));
  check(context_.compute_queue().enqueueNDRangeKernel(points_, cl::NullRange, cl::NDRange(1), cl::NDRange(1), nullptr,
                                                      &done),
        "clEnqueueNDRangeKernel", "adding the source and recording the receivers");
  return done;
}

template <class T>
void WaveStep<T>::set_receivers(const std::vector<std::uint32_t>& dofs) {
  for (const std::uint32_t d : dofs)
    if (d >= stored_.count) throw InvalidArgument("a receiver DOF lies outside the part's stored DOFs");
  // Sorted by DOF for the kernel's search, each with its slot (its place in `dofs`).
  std::vector<std::uint32_t> slots(dofs.size());
  std::iota(slots.begin(), slots.end(), 0u);
  std::stable_sort(slots.begin(), slots.end(), [&](std::uint32_t a, std::uint32_t b) { return dofs[a] < dofs[b]; });
  std::vector<std::uint32_t> sorted(dofs.size());
  for (std::size_t r = 0; r < dofs.size(); ++r) sorted[r] = dofs[slots[r]];
  receivers_ = dofs.size();
  receiver_dofs_ = upload_points(context_, sorted, "receiver DOFs");
  receiver_slots_ = upload_points(context_, slots, "receiver slots");
}

template void check_node(const WaveSystem<float>&, GridNode, const std::string&);
template void check_node(const WaveSystem<double>&, GridNode, const std::string&);
template std::vector<float> source_weights<float>(const WaveSystem<float>&, const PointSource&);
template std::vector<double> source_weights<double>(const WaveSystem<double>&, const PointSource&);
template void wave_step_reference<float>(const WaveSystem<float>&, const std::vector<float>&, const std::vector<float>&,
                                         std::vector<float>&, const PointSource&, const std::vector<float>&, double);
template void wave_step_reference<double>(const WaveSystem<double>&, const std::vector<double>&,
                                          const std::vector<double>&, std::vector<double>&, const PointSource&,
                                          const std::vector<double>&, double);
template WaveWalk plan_walk(const DeviceInfo&, const WaveSystem<float>&);
template WaveWalk plan_walk(const DeviceInfo&, const WaveSystem<double>&);
template class WaveStep<float>;
template class WaveStep<double>;

}  // namespace ziggurat::wave
