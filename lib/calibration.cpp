#include "ziggurat/calibration.hpp"

#include <clblast.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <array>
#include <functional>
#include <limits>

#include "ziggurat/error.hpp"
#include "ziggurat/heat.hpp"
#include "ziggurat/memory.hpp"
#include "ziggurat/program.hpp"
#include "ziggurat/version.hpp"

namespace ziggurat {

namespace {

using Clock = std::chrono::steady_clock;
using EventPair = std::pair<cl::Event, cl::Event>;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// Times device work: `enqueue` issues commands and returns the first and last events; the time
// is from the first's start to the last's end (profiling events), or the host clock around
// issuing and waiting when the device has no profiling. One warm-up, then `repeat` timings.
class Timer {
 public:
  explicit Timer(const Context& context) : context_(context), events_(context.device().profiling) {}

  bool events() const { return events_; }

  TimingSample measure(double size, std::size_t repeat, const std::function<EventPair()>& enqueue) const {
    std::vector<double> times;
    for (std::size_t r = 0; r <= repeat; ++r) {
      const auto start = Clock::now();
      const auto [first, last] = enqueue();
      context_.finish();
      const double t = events_ ? profiled_seconds(first, last) : seconds_since(start);
      if (r > 0) times.push_back(t);
    }
    return {size, median_of(times), *std::min_element(times.begin(), times.end())};
  }

 private:
  const Context& context_;
  bool events_;
};

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
  fit.latency_s = std::max(0.0, median_of(excess));
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

std::vector<std::size_t> transfer_sizes(std::size_t max_bytes) {
  std::vector<std::size_t> sizes;
  for (std::size_t bytes = 4096; bytes <= max_bytes; bytes *= 4) sizes.push_back(bytes);
  return sizes;
}

std::size_t repeats_for(std::size_t bytes) { return bytes <= (1u << 20) ? 5 : 3; }

struct Transfers {
  TransferFit up, down;
};

// Contiguous transfers between `host` and a device buffer, over the size sweep.
Transfers measure_transfers(const Context& context, const Timer& timer, unsigned char* host, std::size_t max_bytes) {
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

// Square regions (side x side floats) between a pinned 2D host array with long rows and a
// contiguous device buffer: the transfers of block decomposition.
Transfers measure_rect_transfers(const Context& context, const Timer& timer, unsigned char* host, std::size_t host_bytes) {
  const std::size_t host_row = 32768;  // bytes: 8192 floats
  const std::size_t rows = host_bytes / host_row;
  DeviceBuffer<unsigned char> device(context, host_bytes, "calibration buffer");
  std::vector<TimingSample> up, down;
  for (std::size_t side = 32; side <= rows && side * 4 <= host_row; side *= 2) {
    const std::size_t bytes = side * side * 4;
    const std::array<cl::size_type, 3> origin{0, 0, 0}, region{side * 4, side, 1};
    up.push_back(timer.measure(static_cast<double>(bytes), repeats_for(bytes), [&] {
      cl::Event e;
      check(context.upload_queue().enqueueWriteBufferRect(device.get(), CL_FALSE, origin, origin, region, side * 4, 0,
                                                          host_row, 0, host, nullptr, &e),
            "clEnqueueWriteBufferRect", "measuring rectangular uploads");
      return EventPair{e, e};
    }));
    down.push_back(timer.measure(static_cast<double>(bytes), repeats_for(bytes), [&] {
      cl::Event e;
      check(context.download_queue().enqueueReadBufferRect(device.get(), CL_FALSE, origin, origin, region, side * 4, 0,
                                                           host_row, 0, host, nullptr, &e),
            "clEnqueueReadBufferRect", "measuring rectangular downloads");
      return EventPair{e, e};
    }));
  }
  return {fit_transfers(up), fit_transfers(down)};
}

// The host time of one call in a stream of `calls` calls issued back to back and then waited for:
// the median over three rounds after a warm-up round.
double seconds_per_call(const Context& context, int calls, const std::function<void()>& call) {
  std::vector<double> rounds;
  for (int round = 0; round < 4; ++round) {
    const auto start = Clock::now();
    for (int i = 0; i < calls; ++i) call();
    context.finish();
    if (round > 0) rounds.push_back(seconds_since(start) / calls);
  }
  return median_of(rounds);
}

// Launch cost: many empty kernels back to back (per launch), and single launches waited for.
std::pair<double, double> measure_launches(const Context& context) {
  cl::Kernel empty = context.kernel(context.program("calibrate"), "empty");
  const auto launch = [&] {
    check(context.compute_queue().enqueueNDRangeKernel(empty, cl::NullRange, cl::NDRange(1), cl::NDRange(1)),
          "clEnqueueNDRangeKernel", "measuring launches");
  };
  std::vector<double> blocking;
  for (int i = 0; i < 33; ++i) {
    const auto start = Clock::now();
    launch();
    check(context.compute_queue().finish(), "clFinish", "measuring launches");
    if (i > 0) blocking.push_back(seconds_since(start));
  }
  return {seconds_per_call(context, 256, launch), median_of(blocking)};
}

// tau_a of the heat step kernel of `dims` dimensions (the aligned kernels every solver mode runs),
// on a grid of about `bytes` per buffer (in the steady state: well beyond the caches). A constant
// field is a fixed point of the scheme, so the values stay ordinary numbers; 2D and 3D rows are a
// multiple of the row alignment, so the upload needs no staging.
template <class T>
KernelRate measure_heat(const Context& context, std::size_t dims, std::size_t bytes) {
  const std::size_t align = std::max<std::size_t>(1, context.device().base_address_align_bytes / sizeof(T));
  const double values = static_cast<double>(bytes / sizeof(T));
  const auto side = [&](double length, std::size_t multiple) {
    return std::max<std::size_t>(64, static_cast<std::size_t>(length) / multiple * multiple);
  };
  std::vector<std::size_t> extents;
  if (dims == 1) extents = {side(values, 1)};
  if (dims == 2) extents = {side(std::sqrt(values), align), side(std::sqrt(values), 1)};
  if (dims == 3) extents = {side(std::cbrt(values), align), side(std::cbrt(values), 1), side(std::cbrt(values), 1)};
  InDeviceHeat<T> solver(context, Grid<T>(extents, T(0.5)), 0.5 / static_cast<double>(dims) * 0.8);
  const auto per_step = [&](std::size_t steps) {
    const StepTiming t = solver.advance(steps);
    return (t.device_seconds >= 0 ? t.device_seconds : t.wall_seconds) / static_cast<double>(steps);
  };
  per_step(1);  // warm-up: some drivers finish compiling at the first launch
  const std::size_t steps = std::clamp<std::size_t>(static_cast<std::size_t>(std::ceil(0.005 / per_step(1))), 1, 50);
  std::vector<double> rounds;
  for (int r = 0; r < 3; ++r) rounds.push_back(per_step(steps));
  double interior = 1;
  for (const std::size_t extent : extents) interior *= static_cast<double>(extent - 2);
  return {"heat" + std::to_string(dims) + "d_box", dims, sizeof(T), extents, median_of(rounds) / interior * 1e9};
}

// Uploads, downloads and kernels of similar length, alone and issued together on their queues.
// `rect`: the transfers are square regions of a 2D host array with long rows (block
// decomposition's transfers), else contiguous ranges (strips). Drivers may overlap the two kinds
// differently. `host` holds 2 x `bytes`.
OverlapMeasurement measure_overlap(const Context& context, const Timer& timer, unsigned char* host, std::size_t bytes,
                                   bool rect, const TransferFit& upload_fit, double step_s_per_node) {
  DeviceBuffer<unsigned char> up_buffer(context, bytes, "overlap upload buffer"), down_buffer(context, bytes, "overlap download buffer");
  // The rect transfers: the largest square of floats that a host array of 32 KiB rows holds in
  // `bytes`.
  const std::size_t host_row = 32768, square = std::min(host_row / 4, bytes / host_row);
  const std::array<cl::size_type, 3> origin{0, 0, 0}, region{square * 4, square, 1};
  const std::size_t moved = rect ? square * square * 4 : bytes;
  const double upload_s = upload_fit.seconds(static_cast<double>(moved));
  const std::size_t side = std::max<std::size_t>(64, static_cast<std::size_t>(std::sqrt(static_cast<double>(bytes / 4))));
  cl::Kernel step = context.kernel(context.program("heat2d", BuildOptions().real_type<float>().str()), "heat2d_step");
  DeviceBuffer<float> a(context, side * side, "overlap grid"), b(context, side * side, "overlap grid");
  for (const auto* grid : {&a, &b}) {
    check(context.upload_queue().enqueueFillBuffer(grid->get(), 0.5f, 0, grid->bytes()), "clEnqueueFillBuffer",
          "measuring overlap");
  }
  check(step.setArg(0, a.get()), "clSetKernelArg");
  check(step.setArg(1, b.get()), "clSetKernelArg");
  check(step.setArg(2, static_cast<cl_uint>(side)), "clSetKernelArg");
  check(step.setArg(3, static_cast<cl_uint>(side)), "clSetKernelArg");
  check(step.setArg(4, static_cast<cl_uint>(side)), "clSetKernelArg");
  check(step.setArg(5, 0.2f), "clSetKernelArg");
  check(step.setArg(6, 0.2f), "clSetKernelArg");
  const cl::NDRange global((side - 2 + 31) / 32 * 32, side - 2);
  // As many steps as take about as long as one upload, so that each engine has similar work.
  const std::size_t steps = std::clamp<std::size_t>(
      static_cast<std::size_t>(upload_s / std::max(step_s_per_node * static_cast<double>(side * side), 1e-9)), 1, 200);

  const auto upload = [&](cl::Event& e) {
    if (rect) {
      check(context.upload_queue().enqueueWriteBufferRect(up_buffer.get(), CL_FALSE, origin, origin, region, region[0], 0,
                                                          host_row, 0, host, nullptr, &e),
            "clEnqueueWriteBufferRect", "measuring overlap");
    } else {
      check(context.upload_queue().enqueueWriteBuffer(up_buffer.get(), CL_FALSE, 0, bytes, host, nullptr, &e),
            "clEnqueueWriteBuffer", "measuring overlap");
    }
  };
  const auto download = [&](cl::Event& e) {
    if (rect) {
      check(context.download_queue().enqueueReadBufferRect(down_buffer.get(), CL_FALSE, origin, origin, region, region[0],
                                                           0, host_row, 0, host + bytes, nullptr, &e),
            "clEnqueueReadBufferRect", "measuring overlap");
    } else {
      check(context.download_queue().enqueueReadBuffer(down_buffer.get(), CL_FALSE, 0, bytes, host + bytes, nullptr, &e),
            "clEnqueueReadBuffer", "measuring overlap");
    }
  };
  const auto compute = [&](cl::Event& first, cl::Event& last) {
    for (std::size_t i = 0; i < steps; ++i) {
      check(context.compute_queue().enqueueNDRangeKernel(step, cl::NullRange, global, cl::NullRange, nullptr, &last),
            "clEnqueueNDRangeKernel", "measuring overlap");
      if (i == 0) first = last;
    }
  };
  // The span of several commands: earliest start to latest end.
  const auto span = [&](std::vector<cl::Event> events) -> EventPair {
    if (!timer.events()) return {events.front(), events.back()};
    const auto when = [](const cl::Event& event, cl_profiling_info what) {
      cl_ulong time = 0;
      check(event.getProfilingInfo(what, &time), "clGetEventProfilingInfo", "measuring overlap");
      return time;
    };
    cl::Event first = events.front(), last = events.front();
    for (const auto& event : events) {
      if (when(event, CL_PROFILING_COMMAND_START) < when(first, CL_PROFILING_COMMAND_START)) first = event;
      if (when(event, CL_PROFILING_COMMAND_END) > when(last, CL_PROFILING_COMMAND_END)) last = event;
    }
    return {first, last};
  };
  const auto flush_all = [&] {
    for (auto* queue : {&context.upload_queue(), &context.download_queue(), &context.compute_queue()}) {
      check(queue->flush(), "clFlush", "measuring overlap");
    }
  };

  OverlapMeasurement m;
  m.upload_s = timer.measure(static_cast<double>(moved), 3, [&] { cl::Event e; upload(e); return EventPair{e, e}; }).median_s;
  m.download_s = timer.measure(static_cast<double>(moved), 3, [&] { cl::Event e; download(e); return EventPair{e, e}; }).median_s;
  m.compute_s = timer.measure(0, 3, [&] { cl::Event f, l; compute(f, l); return EventPair{f, l}; }).median_s;
  // Each transfer's own time while all three run, too (device timers only).
  std::vector<double> uploads_together, downloads_together, computes_together;
  m.all_three_s = timer.measure(static_cast<double>(moved), 3, [&] {
    cl::Event u, d, f, l;
    upload(u);
    download(d);
    compute(f, l);
    flush_all();
    context.finish();
    if (timer.events()) {
      uploads_together.push_back(profiled_seconds(u, u));
      downloads_together.push_back(profiled_seconds(d, d));
      computes_together.push_back(profiled_seconds(f, l));
    }
    return span({u, d, f, l});
  }).median_s;
  m.upload_together_s = uploads_together.empty() ? m.upload_s : median_of(uploads_together);
  m.download_together_s = downloads_together.empty() ? m.download_s : median_of(downloads_together);
  m.compute_together_s = computes_together.empty() ? m.compute_s : median_of(computes_together);
  m.up_and_down_s = timer.measure(static_cast<double>(moved), 3, [&] {
    cl::Event u, d;
    upload(u);
    download(d);
    flush_all();
    context.finish();
    return span({u, d});
  }).median_s;
  const auto efficiency = [](double sum, double longest, double together) {
    return sum > longest ? std::clamp((sum - together) / (sum - longest), 0.0, 1.0) : 1.0;
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
// call comes from many one-element calls back to back (host clock).
struct VectorConstants {
  std::size_t numstreams = 0;
  double wave_s = 0, call_s = 0;
};

VectorConstants measure_axpy(const Context& context, const Timer& timer) {
  const std::size_t longest =
      std::max<std::size_t>(4096, std::min<std::size_t>(1u << 26, measurement_bytes(context.device(), 256u << 20) / sizeof(float)));
  DeviceBuffer<float> x(context, longest, "axpy x"), y(context, longest, "axpy y");
  cl_command_queue queue = context.compute_queue()();
  const auto axpy = [&](std::size_t n) {
    cl_event raw = nullptr;
    const auto status = clblast::Axpy<float>(n, 1.0f, x.get()(), 0, 1, y.get()(), 0, 1, &queue, &raw);
    if (status != clblast::StatusCode::kSuccess) {
      throw OpenCLError(static_cast<cl_int>(status), "clblast::Axpy", "measuring the long-vector constants");
    }
    return cl::Event(raw);  // takes ownership
  };
  const auto time = [&](std::size_t n) {
    return timer.measure(static_cast<double>(n), 5, [&] {
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
  const double floor = median_of({samples[0].second, samples[1].second, samples[2].second});
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
  c.call_s = seconds_per_call(context, 64, [&] { axpy(1); });
  return c;
}

std::string now_iso8601() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

}  // namespace

model::TransferEngines OverlapMeasurement::engines() const {
  const auto slowdown = [](double together, double alone) { return alone > 0 ? std::max(1.0, together / alone) : 1.0; };
  return {transfers_overlap_compute(), duplex(), slowdown(upload_together_s, upload_s),
          slowdown(download_together_s, download_s), slowdown(compute_together_s, compute_s)};
}

double DeviceProfile::copy_bytes_per_s() const { return std::max(copy_kernel_bytes_per_s, copy_driver_bytes_per_s); }

model::DeviceConstants DeviceProfile::constants(std::size_t dims, std::size_t value_bytes,
                                                std::optional<double> tau_a_ns, bool pinned_host) const {
  const auto rate = std::find_if(kernels.begin(), kernels.end(), [&](const KernelRate& k) {
    return k.dims == dims && k.value_bytes == value_bytes;
  });
  if (rate == kernels.end() && !tau_a_ns) {
    throw UnsupportedFeature("the profile of " + device + " has no measured compute rate for a " + std::to_string(dims) +
                             "D " + (value_bytes == 4 ? "float" : "double") + " stencil (ziggurat has no such kernel "
                             "yet, or the device lacks fp64): give tau_a yourself (--tau-a)");
  }
  const auto per_value = [&](const TransferFit& fit) {
    return model::TransferCost{fit.latency_s * 1e9, static_cast<double>(value_bytes) / fit.bytes_per_s * 1e9};
  };
  model::DeviceConstants k;
  k.upload = per_value(pinned_host ? upload_pinned : upload_pageable);
  k.download = per_value(pinned_host ? download_pinned : download_pageable);
  k.rect_upload = per_value(upload_rect);
  k.rect_download = per_value(download_rect);
  k.tau_a_ns = tau_a_ns ? *tau_a_ns : rate->ns_per_node;
  k.launch_ns = launch_pipelined_s * 1e9;
  k.engines = overlap.engines();
  k.rect_engines = rect_overlap.engines();
  return k;
}

model::LongVectorConstants DeviceProfile::long_vector_constants(std::size_t value_bytes, double values) const {
  if (numstreams == 0) {
    throw UnsupportedFeature("the profile of " + device + " has no long-vector constants: CLBlast could not run there");
  }
  model::LongVectorConstants c;
  c.t_kernel_ns = axpy_call_s * 1e9;
  c.t_add_ns = c.t_saxpy_ns = axpy_wave_s * 1e9 * static_cast<double>(value_bytes) / 4;  // measured in float
  c.t0_ns = launch_pipelined_s * 1e9;  // restoring the boundary: one small kernel
  c.numstreams = static_cast<double>(numstreams);
  const double bytes = values * static_cast<double>(value_bytes);
  c.transfer_ns = (upload_pinned.seconds(bytes) + download_pinned.seconds(bytes)) * 1e9;
  return c;
}

std::pair<double, double> measure_copy_bandwidth(const Context& context, std::size_t bytes, std::size_t repeat) {
  if (!context.device().profiling) {
    throw UnsupportedFeature(context.device().label() + " cannot profile commands; measuring bandwidth needs device timers");
  }
  const std::size_t count = std::max<std::size_t>(1, bytes / sizeof(float));
  DeviceBuffer<float> in(context, count, "copy source"), out(context, count, "copy target");
  cl::CommandQueue& queue = context.compute_queue();
  cl::Kernel copy = context.kernel(context.program("stream", BuildOptions().real_type<float>().str()), "copy");
  check(copy.setArg(0, in.get()), "clSetKernelArg");
  check(copy.setArg(1, out.get()), "clSetKernelArg");
  check(copy.setArg(2, static_cast<cl_ulong>(count)), "clSetKernelArg");
  cl_int err = CL_SUCCESS;
  const std::size_t group =
      std::min<std::size_t>(256, copy.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(context.device().device, &err));
  check(err, "clGetKernelWorkGroupInfo", "asking for the copy kernel's work-group limit");
  const cl::NDRange global((count + group - 1) / group * group), local(group);
  const Timer timer(context);
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
  const double kernel = copies([&](cl::Event& e) {
    check(queue.enqueueNDRangeKernel(copy, cl::NullRange, global, local, nullptr, &e), "clEnqueueNDRangeKernel");
  });
  const double driver = copies([&](cl::Event& e) {
    check(queue.enqueueCopyBuffer(in.get(), out.get(), 0, 0, in.bytes(), nullptr, &e), "clEnqueueCopyBuffer");
  });
  return {moved / kernel, moved / driver};
}

DeviceProfile calibrate(const Context& context) {
  const auto start = Clock::now();
  const DeviceInfo& device = context.device();
  const Timer timer(context);
  DeviceProfile p;
  p.library_version = version;
  p.platform = device.platform_name;
  p.device = device.name;
  p.vendor = device.vendor;
  p.driver = device.driver_version;
  p.date = now_iso8601();
  p.timer = timer.events() ? "profiling events" : "host clock";
  p.host_unified_memory = device.host_unified_memory;

  const std::size_t bytes = measurement_bytes(device, 64u << 20);
  if (bytes < (4u << 20)) {
    throw UnsupportedFeature(device.label() + " has too little memory to calibrate (its largest allocation is " +
                             std::to_string(device.max_alloc_bytes >> 20) + " MiB; 16 MiB are needed)");
  }
  PinnedHostBuffer<unsigned char> pinned(context, 2 * bytes);
  std::fill(pinned.begin(), pinned.end(), static_cast<unsigned char>(1));
  std::vector<unsigned char> pageable(bytes, 1);
  // Transfers are issued without waiting: if a measurement throws, wait for the device before the
  // host memory above is freed.
  struct FinishOnExit {
    const Context& context;
    ~FinishOnExit() {
      try {
        context.finish();
      } catch (const Error&) {  // nothing more can be done in a destructor
      }
    }
  } finish_on_exit{context};

  const auto [up_pinned, down_pinned] = measure_transfers(context, timer, pinned.data(), bytes);
  p.upload_pinned = up_pinned;
  p.download_pinned = down_pinned;
  const auto [up_pageable, down_pageable] = measure_transfers(context, timer, pageable.data(), bytes);
  p.upload_pageable = up_pageable;
  p.download_pageable = down_pageable;
  const auto [up_rect, down_rect] = measure_rect_transfers(context, timer, pinned.data(), bytes);
  p.upload_rect = up_rect;
  p.download_rect = down_rect;

  std::tie(p.launch_pipelined_s, p.launch_blocking_s) = measure_launches(context);
  if (device.profiling) {
    std::tie(p.copy_kernel_bytes_per_s, p.copy_driver_bytes_per_s) =
        measure_copy_bandwidth(context, measurement_bytes(device, 256u << 20), 2);
  }
  const std::size_t grid_bytes = measurement_bytes(device, 128u << 20);
  for (const std::size_t dims : {2, 1, 3}) {  // 2D float first: the overlap measurement uses it
    p.kernels.push_back(measure_heat<float>(context, dims, grid_bytes));
    if (device.fp64) p.kernels.push_back(measure_heat<double>(context, dims, grid_bytes));
  }
  const double step_s_per_node = p.kernels.front().ns_per_node * 1e-9;
  p.overlap = measure_overlap(context, timer, pinned.data(), bytes, false, p.upload_pinned, step_s_per_node);
  p.rect_overlap = measure_overlap(context, timer, pinned.data(), bytes, true, p.upload_rect, step_s_per_node);
  try {
    const VectorConstants vector = measure_axpy(context, timer);
    p.numstreams = vector.numstreams;
    p.axpy_wave_s = vector.wave_s;
    p.axpy_call_s = vector.call_s;
  } catch (const OpenCLError&) {
    // CLBlast does not run here: the long-vector constants stay unmeasured (numstreams 0).
  }
  p.calibration_s = seconds_since(start);
  // A measurement that came out impossible (a zero timer, a negative slope) is an error here, not
  // a profile that the model would trust.
  try {
    return profile_from_json(profile_to_json(p));
  } catch (const IoError& problem) {
    throw Error("calibrating " + device.label() + " gave an impossible result (" + problem.what() +
                "): the device's timers may be unreliable; try again, and report it if it persists");
  }
}

}  // namespace ziggurat
