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
    std::sort(times.begin(), times.end());
    const std::size_t n = times.size();
    return {size, n % 2 == 1 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]), times.front()};
  }

 private:
  const Context& context_;
  bool events_;
};

double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// Least squares of t = a + b x on the medians, with a >= 0. The large transfers dominate, as
// they should: the pyramid's tasks move megabytes, and the fit must hold there. The error is
// reported over the transfers of 1 MiB and more; every sample stays in the profile.
TransferFit fit_transfers(std::vector<TimingSample> samples) {
  double n = 0, sx = 0, st = 0, sxx = 0, sxt = 0;
  for (const auto& s : samples) {
    n += 1;
    sx += s.bytes;
    st += s.median_s;
    sxx += s.bytes * s.bytes;
    sxt += s.bytes * s.median_s;
  }
  double b = (n * sxt - sx * st) / (n * sxx - sx * sx);
  double a = (st - b * sx) / n;
  if (!(a >= 0)) {  // no negative latency: fit the bandwidth alone
    a = 0;
    b = sxt / sxx;
  }
  TransferFit fit;
  fit.latency_s = a;
  fit.bytes_per_s = 1 / b;
  for (const auto& s : samples) {
    if (s.bytes >= (1 << 20)) {
      fit.max_relative_error = std::max(fit.max_relative_error, std::abs(fit.seconds(s.bytes) - s.median_s) / s.median_s);
    }
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

// Launch cost: many empty kernels back to back (per launch), and single launches waited for.
std::pair<double, double> measure_launches(const Context& context) {
  cl::Kernel empty = context.kernel(context.program("calibrate"), "empty");
  cl::CommandQueue& queue = context.compute_queue();
  const auto launch = [&] {
    check(queue.enqueueNDRangeKernel(empty, cl::NullRange, cl::NDRange(1), cl::NDRange(1)), "clEnqueueNDRangeKernel",
          "measuring launches");
  };
  constexpr int kBatch = 256;
  std::vector<double> pipelined, blocking;
  for (int round = 0; round < 4; ++round) {
    const auto start = Clock::now();
    for (int i = 0; i < kBatch; ++i) launch();
    check(queue.finish(), "clFinish", "measuring launches");
    if (round > 0) pipelined.push_back(seconds_since(start) / kBatch);
  }
  for (int i = 0; i < 33; ++i) {
    const auto start = Clock::now();
    launch();
    check(queue.finish(), "clFinish", "measuring launches");
    if (i > 0) blocking.push_back(seconds_since(start));
  }
  return {median_of(pipelined), median_of(blocking)};
}

// tau_a of the 2D heat step, run by the solver itself, on a grid of about `bytes` per buffer (in
// the steady state: well beyond the caches). A constant field is a fixed point of the scheme, so
// the values stay ordinary numbers; the side is a multiple of the row alignment, so the upload
// needs no staging.
template <class T>
KernelRate measure_heat2d(const Context& context, std::size_t bytes) {
  const std::size_t align = std::max<std::size_t>(1, context.device().base_address_align_bytes / sizeof(T));
  const std::size_t side =
      std::max<std::size_t>(64, static_cast<std::size_t>(std::sqrt(static_cast<double>(bytes / sizeof(T)))) / align * align);
  InDeviceHeat2D<T> solver(context, Grid<T>({side, side}, T(0.5)), 0.2);
  const auto per_step = [&](std::size_t steps) {
    const StepTiming t = solver.advance(steps);
    return (t.device_seconds >= 0 ? t.device_seconds : t.wall_seconds) / static_cast<double>(steps);
  };
  per_step(1);  // warm-up: some drivers finish compiling at the first launch
  const std::size_t steps = std::clamp<std::size_t>(static_cast<std::size_t>(std::ceil(0.005 / per_step(1))), 1, 50);
  std::vector<double> rounds;
  for (int r = 0; r < 3; ++r) rounds.push_back(per_step(steps));
  const double interior = static_cast<double>((side - 2) * (side - 2));
  return {"heat2d_step", 2, sizeof(T), {side, side}, median_of(rounds) / interior * 1e9};
}

// Uploads, downloads and kernels of similar length, alone and issued together on their queues.
OverlapMeasurement measure_overlap(const Context& context, const Timer& timer, unsigned char* host, std::size_t bytes,
                                   double upload_s, double step_s_per_node) {
  DeviceBuffer<unsigned char> up_buffer(context, bytes, "overlap upload buffer"), down_buffer(context, bytes, "overlap download buffer");
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
    check(context.upload_queue().enqueueWriteBuffer(up_buffer.get(), CL_FALSE, 0, bytes, host, nullptr, &e),
          "clEnqueueWriteBuffer", "measuring overlap");
  };
  const auto download = [&](cl::Event& e) {
    check(context.download_queue().enqueueReadBuffer(down_buffer.get(), CL_FALSE, 0, bytes, host + bytes, nullptr, &e),
          "clEnqueueReadBuffer", "measuring overlap");
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
    cl::Event first = events.front(), last = events.front();
    cl_int e = CL_SUCCESS;
    for (const auto& event : events) {
      if (event.getProfilingInfo<CL_PROFILING_COMMAND_START>(&e) < first.getProfilingInfo<CL_PROFILING_COMMAND_START>(&e)) first = event;
      if (event.getProfilingInfo<CL_PROFILING_COMMAND_END>(&e) > last.getProfilingInfo<CL_PROFILING_COMMAND_END>(&e)) last = event;
    }
    check(e, "clGetEventProfilingInfo", "measuring overlap");
    return {first, last};
  };
  const auto flush_all = [&] {
    for (auto* queue : {&context.upload_queue(), &context.download_queue(), &context.compute_queue()}) {
      check(queue->flush(), "clFlush", "measuring overlap");
    }
  };

  OverlapMeasurement m;
  m.upload_s = timer.measure(static_cast<double>(bytes), 3, [&] { cl::Event e; upload(e); return EventPair{e, e}; }).median_s;
  m.download_s = timer.measure(static_cast<double>(bytes), 3, [&] { cl::Event e; download(e); return EventPair{e, e}; }).median_s;
  m.compute_s = timer.measure(0, 3, [&] { cl::Event f, l; compute(f, l); return EventPair{f, l}; }).median_s;
  m.all_three_s = timer.measure(static_cast<double>(bytes), 3, [&] {
    cl::Event u, d, f, l;
    upload(u);
    download(d);
    compute(f, l);
    flush_all();
    context.finish();
    return span({u, d, f, l});
  }).median_s;
  m.up_and_down_s = timer.measure(static_cast<double>(bytes), 3, [&] {
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
// one wave per numstreams elements. numstreams is the length where the time leaves the floor
// (1.5 x), the wave time comes from the slope over the longest vectors, and the cost of one call
// from many one-element calls back to back (host clock).
struct VectorConstants {
  std::size_t numstreams = 0;
  double wave_s = 0, call_s = 0;
};

VectorConstants measure_axpy(const Context& context, const Timer& timer) {
  const std::size_t longest = std::max<std::size_t>(4096, measurement_bytes(context.device(), 256u << 20) / sizeof(float));
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
  const double floor = time(1024);
  std::size_t low = 1024, high = 1024;
  while (high < longest && time(high) < 1.5 * floor) {
    low = high;
    high = std::min(longest, high * 2);
  }
  while (high - low > std::max<std::size_t>(low / 16, 1)) {  // to within 1/16
    const std::size_t mid = (low + high) / 2;
    (time(mid) < 1.5 * floor ? low : high) = mid;
  }
  c.numstreams = low;
  const double slope = std::max(0.0, (time(longest) - time(longest / 4)) / static_cast<double>(longest - longest / 4));
  c.wave_s = slope * static_cast<double>(c.numstreams);
  constexpr int kCalls = 64;
  std::vector<double> per_call;
  for (int round = 0; round < 4; ++round) {
    const auto start = Clock::now();
    for (int i = 0; i < kCalls; ++i) axpy(1);
    context.finish();
    if (round > 0) per_call.push_back(seconds_since(start) / kCalls);
  }
  c.call_s = median_of(per_call);
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

double DeviceProfile::copy_bytes_per_s() const { return std::max(copy_kernel_bytes_per_s, copy_driver_bytes_per_s); }

model::DeviceConstants DeviceProfile::constants(std::size_t dims, std::size_t value_bytes,
                                                std::optional<double> tau_a_ns) const {
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
  k.upload = per_value(upload_pinned);
  k.download = per_value(download_pinned);
  k.rect_upload = per_value(upload_rect);
  k.rect_download = per_value(download_rect);
  k.tau_a_ns = tau_a_ns ? *tau_a_ns : rate->ns_per_node;
  k.launch_ns = launch_pipelined_s * 1e9;
  k.transfers_overlap_compute = overlap.transfers_overlap_compute();
  k.duplex = overlap.duplex();
  return k;
}

model::LongVectorConstants DeviceProfile::long_vector_constants(std::size_t value_bytes, double values) const {
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
    const auto time_of = [&](int count) {
      return timer.measure(0, repeat, [&] {
        cl::Event first, last;
        for (int i = 0; i < count; ++i) {
          one(last);
          if (i == 0) first = last;
        }
        return EventPair{first, last};
      }).min_s / count;
    };
    const double single = time_of(1);
    const int count = static_cast<int>(std::clamp(std::ceil(2e-3 / single), 1.0, 10.0));
    return count == 1 ? single : time_of(count);
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
  PinnedHostBuffer<unsigned char> pinned(context, 2 * bytes);
  std::fill(pinned.begin(), pinned.end(), static_cast<unsigned char>(1));
  std::vector<unsigned char> pageable(bytes, 1);

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
  p.kernels.push_back(measure_heat2d<float>(context, grid_bytes));
  if (device.fp64) p.kernels.push_back(measure_heat2d<double>(context, grid_bytes));
  p.overlap = measure_overlap(context, timer, pinned.data(), bytes, p.upload_pinned.seconds(static_cast<double>(bytes)),
                              p.kernels.front().ns_per_node * 1e-9);
  const VectorConstants vector = measure_axpy(context, timer);
  p.numstreams = vector.numstreams;
  p.axpy_wave_s = vector.wave_s;
  p.axpy_call_s = vector.call_s;
  p.calibration_s = seconds_since(start);
  return p;
}

}  // namespace ziggurat
