#include "ziggurat/tuning/calibration.hpp"

#include <clblast.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <functional>
#include <future>
#include <optional>

#include "ops/heat_stencil.hpp"
#include "ops/poisson_stencil.hpp"
#include "ops/stream.hpp"
#include "tuning/timing.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/memory.hpp"
#include "ziggurat/base/timestamp.hpp"
#include "ziggurat/base/version.hpp"
#include "ziggurat/ops/poisson_scheme.hpp"

namespace ziggurat {

namespace {

using detail::Clock;
using detail::DeviceTimer;
using detail::EventPair;
using detail::median;
using detail::seconds_since;

// The least-squares slope of t over x through (x, t) points; 0 when the x do not vary.
double least_squares_slope(const std::vector<std::pair<double, double>>& points) {
  double mean_x = 0, mean_t = 0;
  for (const auto& [x, t] : points) {
    mean_x += x / static_cast<double>(points.size());
    mean_t += t / static_cast<double>(points.size());
  }
  double sxt = 0, sxx = 0;
  for (const auto& [x, t] : points) {
    sxt += (x - mean_x) * (t - mean_t);
    sxx += (x - mean_x) * (x - mean_x);
  }
  return sxx > 0 ? sxt / sxx : 0;
}

// t = latency + bytes / bandwidth in two stages, each where it can be seen: the bandwidth is the
// least-squares slope over the transfers of 1 MiB and more (the pyramid's tasks move megabytes,
// and there the fit must hold), the latency the median of what the smaller transfers take beyond
// that bandwidth (never negative). The error is reported over the large transfers; every sample
// stays in the profile.
TransferFit fit_transfers(std::vector<TimingSample> samples) {
  constexpr double kLarge = 1 << 20;
  std::vector<const TimingSample*> large, small;
  for (const auto& s : samples) (s.bytes >= kLarge ? large : small).push_back(&s);
  if (large.size() < 2) large = small, small.clear();  // a device too small for large transfers
  std::vector<std::pair<double, double>> points;
  for (const auto* s : large) points.emplace_back(s->bytes, s->median_s);
  const double slope = least_squares_slope(points);
  std::vector<double> excess;
  for (const auto* s : small.empty() ? large : small) excess.push_back(s->median_s - s->bytes * slope);
  TransferFit fit;
  fit.bytes_per_s = 1 / slope;
  fit.latency_s = std::max(0.0, median(excess));
  for (const auto* s : large) {
    fit.max_relative_error = std::max(fit.max_relative_error, std::abs(fit.seconds(s->bytes) - s->median_s) / s->median_s);
  }
  fit.samples = std::move(samples);
  return fit;
}

// The largest buffer the measurements use: big enough to reach full speed, small enough for
// any device (a quarter of the largest allocation, an eighth of the memory).
std::size_t measurement_bytes(const DeviceInfo& device, std::size_t wanted) {
  return static_cast<std::size_t>(std::min<std::uint64_t>({wanted, device.max_alloc_bytes / 4, device.global_mem_bytes / 8}));
}

// Buffers of a steady-state rate (a stencil's, a copy's): beyond the device's caches, where the rate
// no longer depends on the size. Twice the global memory cache a buffer (the two buffers of a step
// or copy hold four times it), at least 16 MiB, at most `most` (all of it where the device does not
// say its cache size). A larger buffer only takes longer: on a CPU device a step of 128 MiB takes
// a second when the cores are shared.
std::size_t beyond_cache_bytes(const Context& context, std::size_t most) {
  const DeviceInfo& device = context.device();
  const std::uint64_t cache = device.device() != nullptr ? device.device.getInfo<CL_DEVICE_GLOBAL_MEM_CACHE_SIZE>() : 0;
  const std::uint64_t wanted = cache > 0 ? std::clamp<std::uint64_t>(2 * cache, 16u << 20, most) : most;
  return measurement_bytes(device, static_cast<std::size_t>(wanted));
}

std::vector<std::size_t> transfer_sizes(std::size_t max_bytes) {
  std::vector<std::size_t> sizes;
  for (std::size_t bytes = 4096; bytes <= max_bytes; bytes *= 4) sizes.push_back(bytes);
  return sizes;
}

std::size_t repeats_for(std::size_t bytes) { return bytes <= (1u << 20) ? 5 : 3; }

// Upload and download fits of one kind of transfer.
using Transfers = std::pair<TransferFit, TransferFit>;

// Contiguous transfers between `host` and a device buffer, over the size sweep.
Transfers measure_transfers(const Context& context, const DeviceTimer& timer, unsigned char* host, std::size_t max_bytes) {
  DeviceBuffer<unsigned char> device(context, max_bytes, "calibration buffer");
  std::vector<TimingSample> up, down;
  for (const std::size_t bytes : transfer_sizes(max_bytes)) {
    up.push_back(timer.measure(static_cast<double>(bytes), repeats_for(bytes), [&] {
      cl::Event e;
      check(context.upload_queue().enqueueWriteBuffer(device.get(), CL_FALSE, 0, bytes, host, nullptr, &e),
            "clEnqueueWriteBuffer", "measuring uploads");
      return EventPair{e, e};
    }));
    down.push_back(timer.measure(static_cast<double>(bytes), repeats_for(bytes), [&] {
      cl::Event e;
      check(context.download_queue().enqueueReadBuffer(device.get(), CL_FALSE, 0, bytes, host, nullptr, &e),
            "clEnqueueReadBuffer", "measuring downloads");
      return EventPair{e, e};
    }));
  }
  return {fit_transfers(up), fit_transfers(down)};
}

// Square regions of floats in a pinned 2D host array with rows of 32 KiB: the transfers of block
// decomposition. `side` floats a side, at the array's corner.
struct RectTransfer {
  static constexpr std::size_t kHostRow = 32768;  // bytes: 8192 floats
  std::array<cl::size_type, 3> origin{0, 0, 0}, region;
  explicit RectTransfer(std::size_t side) : region{side * 4, side, 1} {}
  std::size_t bytes() const { return region[0] * region[1]; }

  void upload(cl::CommandQueue& queue, const cl::Buffer& buffer, const unsigned char* host, cl::Event& done) const {
    check(queue.enqueueWriteBufferRect(buffer, CL_FALSE, origin, origin, region, region[0], 0, kHostRow, 0, host, nullptr,
                                       &done),
          "clEnqueueWriteBufferRect", "measuring rectangular uploads");
  }
  void download(cl::CommandQueue& queue, const cl::Buffer& buffer, unsigned char* host, cl::Event& done) const {
    check(queue.enqueueReadBufferRect(buffer, CL_FALSE, origin, origin, region, region[0], 0, kHostRow, 0, host, nullptr,
                                      &done),
          "clEnqueueReadBufferRect", "measuring rectangular downloads");
  }
};

Transfers measure_rect_transfers(const Context& context, const DeviceTimer& timer, unsigned char* host, std::size_t host_bytes) {
  const std::size_t rows = host_bytes / RectTransfer::kHostRow;
  DeviceBuffer<unsigned char> device(context, host_bytes, "calibration buffer");
  std::vector<TimingSample> up, down;
  for (std::size_t side = 32; side <= rows && side * 4 <= RectTransfer::kHostRow; side *= 2) {
    const RectTransfer rect(side);
    up.push_back(timer.measure(static_cast<double>(rect.bytes()), repeats_for(rect.bytes()), [&] {
      cl::Event e;
      rect.upload(context.upload_queue(), device.get(), host, e);
      return EventPair{e, e};
    }));
    down.push_back(timer.measure(static_cast<double>(rect.bytes()), repeats_for(rect.bytes()), [&] {
      cl::Event e;
      rect.download(context.download_queue(), device.get(), host, e);
      return EventPair{e, e};
    }));
  }
  return {fit_transfers(up), fit_transfers(down)};
}

// Launch cost: many empty kernels back to back (per launch), and single launches waited for.
std::pair<double, double> measure_launches(const Context& context) {
  detail::EmptyKernel empty(context);
  const auto launch = [&] { empty.enqueue(context.compute_queue()); };
  const std::vector<double> blocking = detail::kept_rounds(32, [&](std::size_t) {
    const auto start = Clock::now();
    launch();
    check(context.compute_queue().finish(), "clFinish", "measuring launches");
    return seconds_since(start);
  });
  return {detail::seconds_per_call(context, 256, launch), median(blocking)};
}

// The extents of a grid of `dims` dimensions whose rows are whole multiples of the alignment, of
// about `values` values (at least 64 a side).
std::vector<std::size_t> measurement_grid(std::size_t dims, double values, std::size_t align) {
  const auto side = [&](double length, std::size_t multiple) {
    return std::max<std::size_t>(64, static_cast<std::size_t>(length) / multiple * multiple);
  };
  if (dims == 1) return {side(values, 1)};
  if (dims == 2) return {side(std::sqrt(values), align), side(std::sqrt(values), 1)};
  return {side(std::cbrt(values), align), side(std::cbrt(values), 1), side(std::cbrt(values), 1)};
}

// The grid a stencil rate is measured on: about `bytes` per buffer, rows aligned.
struct StencilGrid {
  std::vector<std::size_t> extents;
  detail::BufferShape shape;
  std::size_t values = 0;
};

template <class T>
StencilGrid stencil_grid(const Context& context, std::size_t dims, std::size_t bytes) {
  const std::size_t align = detail::row_alignment(context.device(), sizeof(T));
  StencilGrid g;
  g.extents = measurement_grid(dims, static_cast<double>(bytes / sizeof(T)), align);
  g.shape.pitch = g.extents[0];
  g.shape.plane = g.extents[0] * (dims > 1 ? g.extents[1] : 1);
  g.values = g.shape.plane * (dims > 2 ? g.extents[2] : 1);
  return g;
}

// tau_a of a stencil kernel of `dims` dimensions (the aligned kernels every solver mode runs), on
// the interior of `grid`, in the steady state: well beyond the
// caches. The buffers are zeroed on the device: zero is a fixed point of the heat scheme, so the
// values stay ordinary numbers, and no grid crosses the bus. `step` enqueues one step
// of a box from one buffer into another (extra buffers it needs are its own, made beforehand).
template <class T, class Step>
KernelRate measure_stencil(const Context& context, const DeviceTimer& timer, const StencilGrid& grid,
                           const std::string& name, Step step) {
  const std::vector<std::size_t>& extents = grid.extents;
  const detail::BufferShape& shape = grid.shape;
  const std::size_t dims = extents.size(), values = grid.values;
  DeviceBuffer<T> in(context, values, "calibration grid"), out(context, values, "calibration grid");
  for (const auto* buffer : {&in, &out}) detail::enqueue_zero(context, context.compute_queue(), buffer->get(), buffer->bytes());
  detail::Box interior;
  double nodes = 1;
  for (std::size_t axis = 0; axis < dims; ++axis) {
    interior.begin[axis] = 1;
    interior.end[axis] = extents[axis] - 1;
    nodes *= static_cast<double>(extents[axis] - 2);
  }
  const auto steps_of = [&](std::size_t steps) {
    return [&, steps] {
      cl::Event first, last;
      for (std::size_t s = 0; s < steps; ++s) {
        step((s % 2 ? out : in).get(), (s % 2 ? in : out).get(), shape, interior, &last);
        if (s == 0) first = last;
      }
      return EventPair{first, last};
    };
  };
  // As many steps a round as take about 2 ms (1 to 50): long enough for the device timers.
  const double one = timer.seconds(steps_of(1));
  const std::size_t steps = std::clamp<std::size_t>(static_cast<std::size_t>(std::ceil(0.002 / std::max(one, 1e-9))), 1, 50);
  const double per_step = timer.measure(0, 3, steps_of(steps)).median_s / static_cast<double>(steps);
  return {name, dims, sizeof(T), extents, per_step / nodes * 1e9};
}

template <class T>
KernelRate measure_heat(const Context& context, const DeviceTimer& timer, std::size_t dims, std::size_t bytes) {
  detail::HeatBoxStep<T> step(context, dims, heat_coefficients<T>(0.8 * max_stable_alpha(dims), dims));
  return measure_stencil<T>(context, timer, stencil_grid<T>(context, dims, bytes), "heat" + std::to_string(dims) + "d_box",
                            [&](const cl::Buffer& in, const cl::Buffer& out, const detail::BufferShape& shape,
                                const detail::Box& box, cl::Event* done) {
                              step.enqueue(context.compute_queue(), in, out, shape, box, nullptr, done);
                            });
}

// tau_a of the seven-point Jacobi sweep (the Poisson solver's kernel), with f = 0: the zero field
// stays a fixed point.
template <class T>
KernelRate measure_jacobi(const Context& context, const DeviceTimer& timer, std::size_t bytes) {
  detail::JacobiBoxSweep<T> sweep(context, jacobi_coefficients<T>(1.0));
  const StencilGrid grid = stencil_grid<T>(context, 3, bytes);
  DeviceBuffer<T> f(context, grid.values, "calibration right-hand side");
  detail::enqueue_zero(context, context.compute_queue(), f.get(), f.bytes());
  return measure_stencil<T>(context, timer, grid, kJacobiKernel,
                            [&](const cl::Buffer& in, const cl::Buffer& out, const detail::BufferShape& shape,
                                const detail::Box& box, cl::Event* done) {
                              sweep.enqueue(context.compute_queue(), in, out, f.get(), nullptr, shape, box, nullptr, done);
                            });
}

// The size of the overlap's transfers: the smallest of the pinned sweep's sizes from 4 MiB on whose
// upload takes 2 ms (long beside a launch, and the timers resolve it well), else the largest. A
// PCIe GPU reaches 2 ms only at the largest (64 MiB); a CPU device copies within memory and gets
// there sooner, where larger transfers only make the measurement long.
std::size_t overlap_bytes(const TransferFit& upload, std::size_t largest) {
  for (const std::size_t bytes : transfer_sizes(largest)) {
    if (bytes >= (4u << 20) && upload.seconds(static_cast<double>(bytes)) >= 2e-3) return bytes;
  }
  return largest;
}

// Uploads, downloads and kernels of similar length, alone and issued together on their queues.
// `rect`: the transfers are square regions of a 2D host array with long rows (block
// decomposition's transfers), else contiguous ranges (strips). Drivers may overlap the two kinds
// differently. `host` holds 2 x `bytes`.
OverlapMeasurement measure_overlap(const Context& context, const DeviceTimer& timer, unsigned char* host, std::size_t bytes,
                                   bool rect, const TransferFit& upload_fit) {
  DeviceBuffer<unsigned char> up_buffer(context, bytes, "overlap upload buffer"), down_buffer(context, bytes, "overlap download buffer");
  // The rect transfers: the largest square of floats that a host array of 32 KiB rows holds in
  // `bytes`.
  const RectTransfer square(std::min(RectTransfer::kHostRow / 4, bytes / RectTransfer::kHostRow));
  const std::size_t moved = rect ? square.bytes() : bytes;
  const double upload_s = upload_fit.seconds(static_cast<double>(moved));
  const std::size_t side = std::max<std::size_t>(64, static_cast<std::size_t>(std::sqrt(static_cast<double>(bytes / 4))));
  DeviceBuffer<float> a(context, side * side, "overlap grid"), b(context, side * side, "overlap grid");
  for (const auto* grid : {&a, &b}) detail::enqueue_zero(context, context.compute_queue(), grid->get(), grid->bytes());
  detail::NaiveHeatStep<float> step(context, side, side, side, heat_coefficients<float>(0.2, 2));
  // As many steps as take about as long as one upload, so that each engine has similar work: the
  // step's own time, not a stencil rate, which a run may not have needed.
  const double step_s = timer.measure(0, 3, [&] {
    cl::Event e;
    step.enqueue(context.compute_queue(), a.get(), b.get(), &e);
    return EventPair{e, e};
  }).median_s;
  const std::size_t steps = std::clamp<std::size_t>(static_cast<std::size_t>(upload_s / std::max(step_s, 1e-9)), 1, 200);

  const auto upload = [&](cl::Event& e) {
    if (rect) return square.upload(context.upload_queue(), up_buffer.get(), host, e);
    check(context.upload_queue().enqueueWriteBuffer(up_buffer.get(), CL_FALSE, 0, bytes, host, nullptr, &e),
          "clEnqueueWriteBuffer", "measuring overlap");
  };
  const auto download = [&](cl::Event& e) {
    if (rect) return square.download(context.download_queue(), down_buffer.get(), host + bytes, e);
    check(context.download_queue().enqueueReadBuffer(down_buffer.get(), CL_FALSE, 0, bytes, host + bytes, nullptr, &e),
          "clEnqueueReadBuffer", "measuring overlap");
  };
  const auto compute = [&](cl::Event& first, cl::Event& last) {
    for (std::size_t i = 0; i < steps; ++i) {
      step.enqueue(context.compute_queue(), a.get(), b.get(), &last);
      if (i == 0) first = last;
    }
  };
  const auto flush_all = [&] {
    for (auto* queue : {&context.upload_queue(), &context.download_queue(), &context.compute_queue()}) {
      check(queue->flush(), "clFlush", "measuring overlap");
    }
  };
  const auto wall = [&](const std::function<void()>& issue) {
    const auto start = Clock::now();
    issue();
    flush_all();
    context.finish();
    return seconds_since(start);
  };

  OverlapMeasurement m;
  m.upload_s = timer.measure(static_cast<double>(moved), 3, [&] { cl::Event e; upload(e); return EventPair{e, e}; }).median_s;
  m.download_s = timer.measure(static_cast<double>(moved), 3, [&] { cl::Event e; download(e); return EventPair{e, e}; }).median_s;
  m.compute_s = timer.measure(0, 3, [&] { cl::Event f, l; compute(f, l); return EventPair{f, l}; }).median_s;
  // All three together: the span, and each engine's own time while the others run (device
  // timers only; else their times alone).
  struct Together {
    double all, upload, download, compute;
  };
  const std::vector<Together> together = detail::kept_rounds(3, [&](std::size_t) {
    cl::Event u, d, f, l;
    const double seconds = wall([&] {
      upload(u);
      download(d);
      compute(f, l);
    });
    if (!timer.events()) return Together{seconds, m.upload_s, m.download_s, m.compute_s};
    return Together{DeviceTimer::span({u, d, f, l}), profiled_seconds(u, u), profiled_seconds(d, d), profiled_seconds(f, l)};
  });
  const auto median_of = [&](double Together::*field) {
    std::vector<double> values;
    for (const Together& t : together) values.push_back(t.*field);
    return median(values);
  };
  m.all_three_s = median_of(&Together::all);
  m.upload_together_s = median_of(&Together::upload);
  m.download_together_s = median_of(&Together::download);
  m.compute_together_s = median_of(&Together::compute);
  m.up_and_down_s = median(detail::kept_rounds(3, [&](std::size_t) {
    cl::Event u, d;
    const double seconds = wall([&] {
      upload(u);
      download(d);
    });
    return timer.events() ? DeviceTimer::span({u, d}) : seconds;
  }));
  const auto efficiency = [](double sum, double longest, double issued_together) {
    return sum > longest ? std::clamp((sum - issued_together) / (sum - longest), 0.0, 1.0) : 1.0;
  };
  m.efficiency = efficiency(m.upload_s + m.download_s + m.compute_s, std::max({m.upload_s, m.download_s, m.compute_s}),
                            m.all_three_s);
  m.duplex_efficiency = efficiency(m.upload_s + m.download_s, std::max(m.upload_s, m.download_s), m.up_and_down_s);
  return m;
}

// The long-vector model's constants from the actual vector call, CLBlast's xAXPY: its time
// against the vector length is flat (the call's floor) until the device saturates, then grows
// with the length. Timed at lengths 2^10 .. 2^26 in steps of sqrt(2): the floor is the median of
// the three shortest, numstreams the length at which the time reaches twice the floor
// (interpolated; there the elements cost as much as the call itself, the knee of floor + linear
// growth), and a wave the growth per numstreams elements over the longest vectors. The cost of one
// call comes from one-element calls back to back, timed as the long-vector steps are: from the
// first's start to the last's end (device timers where there are), the median of 5 rounds of 256
// (a CPU device's call cost varies from round to round by tens of percent). The calls are those of the
// long-vector step: odd lengths on sub-vectors that start one element in, where CLBlast runs its
// general kernel (its faster one needs lengths of whole work-groups and no offsets).
// CLBlast builds xAXPY for a context on its first call; one call on a queue of its own (the
// context's queues are busy with the measurements) builds it ahead. CLBlast not running here is
// not an error: measure_axpy finds out.
void build_clblast_axpy(const Context& context) {
  cl_int err = CL_SUCCESS;
  cl::CommandQueue queue(context.cl_context(), context.device().device, 0, &err);
  if (err != CL_SUCCESS) return;
  try {
    DeviceBuffer<float> x(context, 1, "axpy x"), y(context, 1, "axpy y");
    cl_command_queue raw = queue();
    clblast::Axpy<float>(1, 1.0f, x.get()(), 0, 1, y.get()(), 0, 1, &raw, nullptr);
    queue.finish();
  } catch (const Error&) {  // measure_axpy meets the same problem and says so
  }
}

struct VectorConstants {
  std::size_t numstreams = 0;
  double wave_s = 0, call_s = 0;
};

VectorConstants measure_axpy(const Context& context, const DeviceTimer& timer) {
  const std::size_t longest =
      std::max<std::size_t>(4096, std::min<std::size_t>(1u << 26, measurement_bytes(context.device(), 256u << 20) / sizeof(float)));
  DeviceBuffer<float> x(context, longest + 1, "axpy x"), y(context, longest + 1, "axpy y");
  cl_command_queue queue = context.compute_queue()();
  const auto axpy = [&](std::size_t n, bool with_event = true) {
    cl_event raw = nullptr;
    const auto status =
        clblast::Axpy<float>(n | 1, 1.0f, x.get()(), 1, 1, y.get()(), 1, 1, &queue, with_event ? &raw : nullptr);
    if (status != clblast::StatusCode::kSuccess) {
      throw OpenCLError(static_cast<cl_int>(status), "clblast::Axpy", "measuring the long-vector constants");
    }
    return cl::Event(raw);  // takes ownership
  };
  const auto time = [&](std::size_t n) {
    return timer.measure(static_cast<double>(n), 3, [&] {
      const cl::Event event = axpy(n);
      return EventPair{event, event};
    }).median_s;
  };
  VectorConstants c;
  std::vector<std::pair<double, double>> samples;  // (length, seconds)
  for (double length = 1024; length <= static_cast<double>(longest); length *= std::sqrt(2.0)) {
    const auto n = static_cast<std::size_t>(length);
    samples.emplace_back(static_cast<double>(n), time(n));
  }
  const double floor = median({samples[0].second, samples[1].second, samples[2].second});
  const auto crossing = std::find_if(samples.begin(), samples.end(), [&](const auto& s) { return s.second >= 2 * floor; });
  if (crossing == samples.end() || crossing == samples.begin()) {  // never saturated (or noise at the start)
    c.numstreams = crossing == samples.end() ? longest : 1024;
  } else {
    const auto& [x0, t0] = *(crossing - 1);
    const auto& [x1, t1] = *crossing;
    // Log-log interpolation between the samples around the crossing (linear if a time is 0).
    const double f = t0 > 0 && t1 > t0 ? (std::log(2 * floor) - std::log(t0)) / (std::log(t1) - std::log(t0)) : 1.0;
    c.numstreams = static_cast<std::size_t>(std::exp(std::log(x0) + std::clamp(f, 0.0, 1.0) * (std::log(x1) - std::log(x0))));
  }
  // The growth per element: the least-squares slope over the five longest vectors (lengths 1/4 to
  // 1 of the longest). Where noise makes it vanish (a loaded CPU), the longest vector's time per
  // element, which bounds it from above.
  const std::size_t top = std::min<std::size_t>(5, samples.size());
  const double slope = least_squares_slope({samples.end() - static_cast<std::ptrdiff_t>(top), samples.end()});
  const auto& [x_top, t_top] = samples.back();
  c.wave_s = (slope > 0 ? slope : t_top / x_top) * static_cast<double>(c.numstreams);
  constexpr std::size_t kCalls = 256;
  c.call_s = timer.measure(1, 5, [&] {
    const cl::Event first = axpy(1);
    for (std::size_t i = 2; i < kCalls; ++i) axpy(1, false);
    return EventPair{first, axpy(1)};
  }).median_s / kCalls;
  return c;
}

}  // namespace

std::pair<double, double> measure_copy_bandwidth(const Context& context, std::size_t bytes, std::size_t repeat) {
  if (!context.device().profiling) {
    throw UnsupportedFeature(context.device().label() + " cannot profile commands; measuring bandwidth needs device timers");
  }
  const std::size_t count = std::max<std::size_t>(1, bytes / sizeof(float));
  DeviceBuffer<float> in(context, count, "copy source"), out(context, count, "copy target");
  cl::CommandQueue& queue = context.compute_queue();
  detail::CopyKernel<float> copy(context, in.get(), out.get(), count);
  const DeviceTimer timer(context);
  // Each timing covers back-to-back copies adding up to about 2 ms (at most 10), so that fast
  // devices are timed over more than a few microseconds and slow ones are not kept long.
  const auto copies = [&](const std::function<void(cl::Event&)>& one) {
    const auto time_of = [&](int back_to_back) {
      return timer.measure(0, repeat, [&] {
        cl::Event first, last;
        for (int i = 0; i < back_to_back; ++i) {
          one(last);
          if (i == 0) first = last;
        }
        return EventPair{first, last};
      }).min_s / back_to_back;
    };
    const double single = time_of(1);
    const int back_to_back = static_cast<int>(std::clamp(std::ceil(2e-3 / single), 1.0, 10.0));
    return back_to_back == 1 ? single : time_of(back_to_back);
  };
  const double moved = 2.0 * static_cast<double>(in.bytes());
  const double kernel = copies([&](cl::Event& e) { copy.enqueue(queue, &e); });
  const double driver = copies([&](cl::Event& e) {
    check(queue.enqueueCopyBuffer(in.get(), out.get(), 0, 0, in.bytes(), nullptr, &e), "clEnqueueCopyBuffer");
  });
  return {moved / kernel, moved / driver};
}

namespace {

// One stencil rate: the heat kernel of its dimensions, or the Jacobi sweep.
template <class T>
KernelRate measure_rate(const Context& context, const DeviceTimer& timer, const RateNeed& rate) {
  const std::size_t grid_bytes = beyond_cache_bytes(context, 128u << 20);
  return rate.kernel == kJacobiKernel ? measure_jacobi<T>(context, timer, grid_bytes)
                                      : measure_heat<T>(context, timer, rate.dims, grid_bytes);
}

// Records how long each part of a measurement took, in the profile.
class Phases {
 public:
  explicit Phases(DeviceProfile& profile) : profile_(profile) {}
  void operator()(const std::string& name, const std::function<void()>& measure) {
    const auto start = Clock::now();
    measure();
    profile_.phases.push_back({name, seconds_since(start)});
  }

 private:
  DeviceProfile& profile_;
};

// The rates and vector calls of `needs` into `p`, each a phase.
void measure_needs(const Context& context, const DeviceTimer& timer, DeviceProfile& p, const ProfileNeeds& needs) {
  Phases phase(p);
  for (const RateNeed& rate : needs.rates) {
    phase("rate " + rate.label(), [&] {
      p.kernels.push_back(rate.value_bytes == 4 ? measure_rate<float>(context, timer, rate)
                                                : measure_rate<double>(context, timer, rate));
    });
  }
  if (!needs.vector_calls) return;
  phase("vector calls (CLBlast)", [&] {
    try {
      const VectorConstants vector = measure_axpy(context, timer);
      p.numstreams = vector.numstreams;
      p.axpy_wave_s = vector.wave_s;
      p.axpy_call_s = vector.call_s;
    } catch (const OpenCLError&) {
      // CLBlast does not run here: the long-vector constants stay unmeasured (numstreams 0).
    }
    p.vector_calls_measured = true;
  });
}

// Work is issued without waiting: if a measurement throws, wait for the device before the host
// memory it uses is freed.
struct FinishOnExit {
  const Context& context;
  ~FinishOnExit() {
    try {
      context.finish();
    } catch (const Error&) {  // nothing more can be done in a destructor
    }
  }
};

// A measurement that came out impossible (a zero timer, a negative slope) is an error, not a
// profile that the model would trust.
void refuse_impossible(const DeviceInfo& device, const DeviceProfile& p) {
  try {
    validate(p);
  } catch (const InvalidArgument& problem) {
    throw Error("calibrating " + device.label() + " gave an impossible result (" + problem.what() +
                "): the device's timers may be unreliable; try again, and report it if it persists");
  }
}

}  // namespace

ProfileNeeds measurable_needs(const DeviceInfo& device, const ProfileNeeds& needs) {
  ProfileNeeds measurable = needs;
  measurable.rates.clear();
  for (const RateNeed& rate : needs.rates) {
    const bool kernel_exists = rate.dims >= 1 && rate.dims <= 3;  // ziggurat's stencils: 1D to 3D
    if (kernel_exists && (rate.value_bytes == 4 || device.fp64)) measurable.rates.push_back(rate);
  }
  return measurable;
}

DeviceProfile calibrate(const Context& context) { return calibrate(context, ProfileNeeds::everything()); }

void add_measurements(const Context& context, DeviceProfile& profile, const ProfileNeeds& needs) {
  const ProfileNeeds missing = missing_from(profile, measurable_needs(context.device(), needs));
  if (missing.empty()) return;
  const auto start = Clock::now();
  DeviceProfile added = profile;
  {
    const FinishOnExit finish_on_exit{context};
    measure_needs(context, DeviceTimer(context), added, missing);
  }
  added.calibration_s += seconds_since(start);
  refuse_impossible(context.device(), added);
  profile = std::move(added);
}

DeviceProfile calibrate(const Context& context, const ProfileNeeds& wanted) {
  const auto start = Clock::now();
  const DeviceInfo& device = context.device();
  const ProfileNeeds needs = measurable_needs(device, wanted);
  const DeviceTimer timer(context);
  DeviceProfile p;
  p.library_version = version;
  p.platform = device.platform_name;
  p.device = device.name;
  p.vendor = device.vendor;
  p.driver = device.driver_version;
  p.date = utc_timestamp();
  p.timer = timer.events() ? "profiling events" : "host clock";
  p.host_unified_memory = device.host_unified_memory;
  Phases phase(p);

  const std::size_t bytes = measurement_bytes(device, 64u << 20);
  // Pageable transfers serve only where pinning fails; 16 MiB shows their bandwidth.
  const std::size_t pageable_bytes = std::min<std::size_t>(bytes, 16u << 20);
  if (bytes < (4u << 20)) {
    throw UnsupportedFeature(device.label() + " has too little memory to calibrate: the measurements need buffers of "
                             "4 MiB, at most a quarter of the largest allocation (" +
                             std::to_string(device.max_alloc_bytes >> 20) + " MiB) and an eighth of the memory (" +
                             std::to_string(device.global_mem_bytes >> 20) + " MiB)");
  }
  // On a discrete device the kernels compile on host threads while the transfers and the first
  // stencil rates are measured: compiled cold, they take longer than all of those together.
  // (Uses of a program wait for its build.) A CPU device would compute on the cores that compile.
  // Three threads take the programs in the order they are used: NVIDIA's compiler slows each
  // build it runs beside others, so that one thread took 1.90 s of process wall for a whole
  // calibration on an H200, two 1.75 s, three 1.62-1.66 s, and one a program (7) 1.83-2.16 s.
  std::vector<std::function<void()>> tasks;
  const auto build = [&](std::function<void()> work) { tasks.push_back(std::move(work)); };
  if (!device.host_unified_memory) {
    const auto needed = [&](const char* kernel, std::size_t value_bytes) {
      return std::any_of(needs.rates.begin(), needs.rates.end(), [&](const RateNeed& rate) {
        return (rate.kernel == kJacobiKernel) == (std::string(kernel) == kJacobiKernel) && rate.value_bytes == value_bytes;
      });
    };
    build([&context] { detail::heat_stencil_program<float>(context); });  // the overlap's step too
    build([&context] { detail::stream_program<float>(context); });  // zeroes the grids of both precisions
    if (needed("heat", 8)) build([&context] { detail::heat_stencil_program<double>(context); });
    if (needed(kJacobiKernel, 4)) build([&context] { detail::poisson_stencil_program<float>(context); });
    if (needed(kJacobiKernel, 8)) build([&context] { detail::poisson_stencil_program<double>(context); });
    if (needs.vector_calls) build([&context] { build_clblast_axpy(context); });
  }
  std::atomic<std::size_t> next{0};
  std::vector<std::future<void>> builds;
  for (std::size_t t = 0; t < std::min<std::size_t>(tasks.size(), 3); ++t) {
    builds.push_back(std::async(std::launch::async, [&] {
      for (std::size_t i = next++; i < tasks.size(); i = next++) tasks[i]();
    }));
  }
  const auto builds_done = [&] {
    for (auto& built : builds) built.get();
    builds.clear();
  };
  std::optional<PinnedHostBuffer<unsigned char>> pinned;
  std::vector<unsigned char> pageable;
  phase("host memory", [&] {
    pinned.emplace(context, 2 * bytes);
    std::fill(pinned->begin(), pinned->end(), static_cast<unsigned char>(1));
    pageable.assign(pageable_bytes, 1);
  });
  const FinishOnExit finish_on_exit{context};

  phase("pinned transfers", [&] {
    std::tie(p.upload_pinned, p.download_pinned) = measure_transfers(context, timer, pinned->data(), bytes);
  });
  phase("pageable transfers", [&] {
    std::tie(p.upload_pageable, p.download_pageable) =
        measure_transfers(context, timer, pageable.data(), pageable_bytes);
  });
  phase("rect transfers", [&] {
    std::tie(p.upload_rect, p.download_rect) = measure_rect_transfers(context, timer, pinned->data(), bytes);
  });
  measure_needs(context, timer, p, {needs.rates, false});
  // Launches and what follows are timed with no build running beside them.
  if (!builds.empty()) phase("remaining builds", builds_done);
  phase("launches", [&] { std::tie(p.launch_pipelined_s, p.launch_blocking_s) = measure_launches(context); });
  if (device.profiling) {
    phase("copy bandwidth", [&] {
      std::tie(p.copy_kernel_bytes_per_s, p.copy_driver_bytes_per_s) =
          measure_copy_bandwidth(context, beyond_cache_bytes(context, 256u << 20), 2);
    });
  }
  phase("overlap", [&] {
    const std::size_t moved = overlap_bytes(p.upload_pinned, bytes);
    p.overlap = measure_overlap(context, timer, pinned->data(), moved, false, p.upload_pinned);
    p.rect_overlap = measure_overlap(context, timer, pinned->data(), moved, true, p.upload_rect);
  });
  measure_needs(context, timer, p, {{}, needs.vector_calls});
  p.calibration_s = seconds_since(start);
  refuse_impossible(device, p);
  return p;
}

}  // namespace ziggurat
