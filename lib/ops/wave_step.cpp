#include "ziggurat/ops/wave_step.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "base/integer_math.hpp"
#include "base/kernel_launch.hpp"
#include "base/parallel.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/precision.hpp"
#include "ziggurat/base/program.hpp"

namespace ziggurat::wave {

namespace {

constexpr double kPi = 3.14159265358979323846;

void check_node(const ElasticGrid2D& grid, std::size_t ix, std::size_t iz, std::size_t margin, const char* what) {
  if (ix < margin || iz < margin || ix + margin >= grid.nx || iz + margin >= grid.nz)
    throw InvalidArgument(std::string(what) + " at node (" + std::to_string(ix) + ", " + std::to_string(iz) +
                          ") lies outside the grid's nodes (" + std::to_string(grid.nx) + " x " +
                          std::to_string(grid.nz) + (margin > 0 ? ", and needs a node on every side)" : ")"));
}

std::uint32_t dof(const ElasticGrid2D& grid, std::size_t ix, std::size_t iz, int c) {
  return static_cast<std::uint32_t>(2 * (iz * grid.nx + ix) + c);
}

std::size_t group_size(const Context& context) {
  return detail::power_of_two_at_most(std::min<std::size_t>(context.device().max_work_group_size, 256));
}

}  // namespace

double ricker(double t, double frequency) {
  const double a = kPi * frequency * (t - ricker_delay(frequency));
  return (1 - 2 * a * a) * std::exp(-a * a);
}

double ricker_delay(double frequency) { return 1.5 / frequency; }

PointSource point_force(const ElasticGrid2D& grid, std::size_t ix, std::size_t iz, double fx, double fz) {
  check_node(grid, ix, iz, 0, "the source");
  PointSource s;
  if (fx != 0) s.dofs.push_back(dof(grid, ix, iz, 0)), s.forces.push_back(fx);
  if (fz != 0) s.dofs.push_back(dof(grid, ix, iz, 1)), s.forces.push_back(fz);
  if (s.dofs.empty()) throw InvalidArgument("a point force needs a direction: fx and fz are both 0");
  return s;
}

PointSource explosion(const ElasticGrid2D& grid, std::size_t ix, std::size_t iz) {
  check_node(grid, ix, iz, 1, "an explosive source");
  return {{dof(grid, ix - 1, iz, 0), dof(grid, ix + 1, iz, 0), dof(grid, ix, iz - 1, 1), dof(grid, ix, iz + 1, 1)},
          {-1.0, 1.0, -1.0, 1.0}};
}

template <class T>
std::vector<T> source_weights(const WaveSystem<T>& system, const PointSource& source) {
  std::vector<T> w(source.dofs.size());
  for (std::size_t s = 0; s < w.size(); ++s) {
    if (source.dofs[s] >= system.dofs()) throw InvalidArgument("a source DOF lies outside the system");
    w[s] = T(system.dt * system.dt * source.forces[s] / double(system.m[source.dofs[s]]));
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
      u3[i] = -acc / system.m[i];
    }
  });
  const T a = T(amplitude);
  for (std::size_t s = 0; s < source.dofs.size(); ++s) u3[source.dofs[s]] += weights[s] * a;
}

template <class T>
WaveStep<T>::WaveStep(const Context& context, const WaveSystem<T>& system, const PointSource& source, DofRange stored)
    : context_(context), n_(system.dofs()), stored_(stored), diagonals_(system.k1.offsets.size()) {
  require_precision<T>(context.device(), "a wave step in double");
  if (stored.count == 0 || stored.end() > n_)
    throw InvalidArgument("the DOFs [" + std::to_string(stored.first) + ", " + std::to_string(stored.end()) +
                          ") are not a part of the system's " + std::to_string(n_));
  if (n_ + std::size_t(system.k1.offsets.back()) >= (std::size_t{1} << 32))
    throw InvalidArgument("a wave system of " + std::to_string(n_) + " DOFs is beyond the kernels' 32-bit indices");
  const auto constant_bytes = context.device().device.getInfo<CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE>();
  if (diagonals_ * sizeof(std::int32_t) > constant_bytes)
    throw UnsupportedFeature(std::to_string(diagonals_) + " diagonals do not fit the constant memory of " +
                             context.device().label());
  // The rows [first, end) of every diagonal, K2 and m.
  const std::size_t len = stored.count;
  std::vector<T> k1(diagonals_ * len);
  for (std::size_t d = 0; d < diagonals_; ++d)
    std::copy_n(system.k1.values.begin() + d * n_ + stored.first, len, k1.begin() + d * len);
  const auto upload = [&](const T* values, std::size_t count, const char* what) {
    DeviceBuffer<T> buffer(context, count, what, CL_MEM_READ_ONLY);
    detail::write_buffer(context.compute_queue(), buffer.get(), values, count * sizeof(T));
    return buffer;
  };
  k1_ = upload(k1.data(), k1.size(), "K1 diagonals");
  k2_ = upload(system.k2.data() + stored.first, len, "K2");
  m_ = upload(system.m.data() + stored.first, len, "lumped mass");
  offsets_ = DeviceBuffer<std::int32_t>(context, diagonals_, "K1 offsets", CL_MEM_READ_ONLY);
  detail::write_buffer(context.compute_queue(), offsets_.get(), system.k1.offsets.data(), diagonals_ * 4);
  // The source DOFs this part holds, at local positions.
  const std::vector<T> all_weights = source_weights(system, source);
  std::vector<T> weights;
  std::vector<std::uint32_t> local;
  for (std::size_t s = 0; s < source.dofs.size(); ++s)
    if (source.dofs[s] >= stored.first && source.dofs[s] < stored.end()) {
      local.push_back(static_cast<std::uint32_t>(source.dofs[s] - stored.first));
      weights.push_back(all_weights[s]);
    }
  sources_ = local.size();
  weights_ = DeviceBuffer<T>(context, std::max<std::size_t>(sources_, 1), "source weights", CL_MEM_READ_ONLY);
  source_dofs_ = DeviceBuffer<std::uint32_t>(context, std::max<std::size_t>(sources_, 1), "source DOFs", CL_MEM_READ_ONLY);
  if (sources_ > 0) {
    detail::write_buffer(context.compute_queue(), weights_.get(), weights.data(), sources_ * sizeof(T));
    detail::write_buffer(context.compute_queue(), source_dofs_.get(), local.data(), sources_ * 4);
  }
  set_receivers({});
  const cl::Program& program = context.program("wave_step", BuildOptions().real_type<T>().str());
  step_ = context.kernel(program, "wave_step");
  inject_ = context.kernel(program, "wave_inject");
  record_ = context.kernel(program, "wave_record");
}

template <class T>
WaveStep<T>::WaveStep(const Context& context, const WaveSystem<T>& system, const PointSource& source)
    : WaveStep(context, system, source, DofRange{0, system.dofs()}) {}

template <class T>
cl::Event WaveStep<T>::enqueue(const cl::Buffer& u1, const cl::Buffer& u2, const cl::Buffer& u3, double amplitude,
                               DofRange computed) {
  if (computed.end() > stored_.count) throw InvalidArgument("a wave step outside the part's stored DOFs");
  const std::size_t group = group_size(context_);
  cl::CommandQueue& queue = context_.compute_queue();
  cl::Event done;
  if (computed.count > 0) {
    detail::set_args(step_, "wave_step", offsets_.get(), static_cast<cl_uint>(diagonals_), k1_.get(), k2_.get(),
                     m_.get(), u1, u2, u3, static_cast<cl_uint>(n_), static_cast<cl_uint>(stored_.first),
                     static_cast<cl_uint>(stored_.count), static_cast<cl_uint>(computed.first),
                     static_cast<cl_uint>(computed.count));
    check(queue.enqueueNDRangeKernel(step_, cl::NullRange, cl::NDRange(detail::round_up(computed.count, group)),
                                     cl::NDRange(group), nullptr, &done),
          "clEnqueueNDRangeKernel", "a wave step");
  }
  if (sources_ == 0) return done;
  detail::set_args(inject_, "wave_inject", u3, source_dofs_.get(), weights_.get(), static_cast<cl_uint>(sources_),
                   T(amplitude));
  check(queue.enqueueNDRangeKernel(inject_, cl::NullRange, cl::NDRange(detail::round_up(sources_, 64)), cl::NDRange(64),
                                   nullptr, &done),
        "clEnqueueNDRangeKernel", "adding the source");
  return done;
}

template <class T>
void WaveStep<T>::set_receivers(const std::vector<std::uint32_t>& dofs) {
  for (const std::uint32_t d : dofs)
    if (d >= stored_.count) throw InvalidArgument("a receiver DOF lies outside the part's stored DOFs");
  receivers_ = dofs.size();
  receiver_dofs_ = DeviceBuffer<std::uint32_t>(context_, std::max<std::size_t>(receivers_, 1), "receiver DOFs",
                                               CL_MEM_READ_ONLY);
  if (receivers_ > 0)
    detail::write_buffer(context_.compute_queue(), receiver_dofs_.get(), dofs.data(), receivers_ * 4);
}

template <class T>
cl::Event WaveStep<T>::record(const cl::Buffer& u, const cl::Buffer& out, std::size_t offset) {
  cl::Event done;
  if (receivers_ == 0) return done;
  detail::set_args(record_, "wave_record", u, receiver_dofs_.get(), static_cast<cl_uint>(receivers_), out,
                   static_cast<cl_uint>(offset));
  check(context_.compute_queue().enqueueNDRangeKernel(record_, cl::NullRange,
                                                      cl::NDRange(detail::round_up(receivers_, 64)), cl::NDRange(64),
                                                      nullptr, &done),
        "clEnqueueNDRangeKernel", "recording the receivers");
  return done;
}

template std::vector<float> source_weights<float>(const WaveSystem<float>&, const PointSource&);
template std::vector<double> source_weights<double>(const WaveSystem<double>&, const PointSource&);
template void wave_step_reference<float>(const WaveSystem<float>&, const std::vector<float>&, const std::vector<float>&,
                                         std::vector<float>&, const PointSource&, const std::vector<float>&, double);
template void wave_step_reference<double>(const WaveSystem<double>&, const std::vector<double>&,
                                          const std::vector<double>&, std::vector<double>&, const PointSource&,
                                          const std::vector<double>&, double);
template class WaveStep<float>;
template class WaveStep<double>;

}  // namespace ziggurat::wave
