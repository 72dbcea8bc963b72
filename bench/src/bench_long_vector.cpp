// `ziggurat-bench long-vector`: the long-vector algorithm (solver/long_vector_heat.hpp) timed over
// a range of grid sizes beside model (1) of the method notes (section 2), fed only by the device
// profile's constants, which calibration measures on the vector calls alone (the paper's test of
// its model): per size the time of one step, measured and modelled, and over all sizes the
// paper's normalised deviation and the RMS relative error.

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "bench.hpp"
#include "file_options.hpp"
#include "format.hpp"
#include "plot.hpp"
#include "ziggurat/base/timestamp.hpp"
#include "ziggurat/app/json_output.hpp"
#include "ziggurat/app/run_profile.hpp"
#include "ziggurat/base/context.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/host_memory.hpp"
#include "ziggurat/base/precision.hpp"
#include "ziggurat/base/version.hpp"
#include "ziggurat/solver/long_vector_heat.hpp"
#include "ziggurat/tuning/model_constants.hpp"

namespace ziggurat::cli {

namespace {

struct LongVectorOptions {
  FileOptions files;  // --profile and --plot, checked before any work
  std::size_t min_n = 10;
  std::size_t max_n = 2000;
  std::size_t step_small = 2;    // N below 100
  std::size_t step_large = 20;   // N from 100
  std::size_t steps = 0;         // 0: enough for --min-time
  double min_time_ms = 20;
  std::size_t repeat = 3;
  std::string profile;
  std::string plot;
  std::string precision = "f32";
  std::string device;
  bool json = false;
};

// N = min_n, min_n + step_small, ... below 100, then 100, 100 + step_large, ... up to max_n (the
// issue's 10..98 step 2 and 100..2000 step 20 by default).
std::vector<std::size_t> interior_sizes(const LongVectorOptions& o) {
  if (o.min_n < 1 || o.max_n < o.min_n) {
    throw InvalidArgument("--min-n must be at least 1 and at most --max-n");
  }
  const double side = double(o.max_n) + 2, bytes = 3 * side * side * sizeof(double);  // the largest grid, thrice
  check_host_memory(bytes < 1.8e19 ? std::uint64_t(bytes) : std::numeric_limits<std::uint64_t>::max(),
                    "--max-n " + std::to_string(o.max_n), "give a smaller --max-n");
  std::vector<std::size_t> sizes;
  for (std::size_t n = o.min_n; n < 100 && n <= o.max_n; n += o.step_small) sizes.push_back(n);
  for (std::size_t n = std::max<std::size_t>(100, o.min_n); n <= o.max_n; n += o.step_large) sizes.push_back(n);
  return sizes;
}

struct Point {
  std::size_t n = 0, steps = 0;
  double measured_s = 0, modelled_s = 0;  // per step
  double relative() const { return (measured_s - modelled_s) / measured_s; }
};

// The paper's eps = (1/M) sqrt(sum rel^2) over M sizes, the RMS relative error sqrt(mean rel^2),
// and the largest |rel|, rel = (t - tau) / t.
struct Deviation {
  double paper_eps = 0, rms = 0, max_abs = 0, mean = 0;
};

Deviation deviation(const std::vector<Point>& points) {
  Deviation d;
  double squares = 0;
  for (const Point& p : points) {
    squares += p.relative() * p.relative();
    d.max_abs = std::max(d.max_abs, std::abs(p.relative()));
    d.mean += p.relative() / static_cast<double>(points.size());
  }
  d.paper_eps = std::sqrt(squares) / static_cast<double>(points.size());
  d.rms = std::sqrt(squares / static_cast<double>(points.size()));
  return d;
}

// One size: a warm-up, a short run that sets the steps, then the median of `repeat` runs of `steps` steps (enough for the minimum
// time unless --steps fixes them), per step, on the device's timers where it has them.
template <class T>
Point measure(const Context& context, std::size_t n, const LongVectorOptions& o) {
  const std::vector<std::size_t> extents{n + 2, n + 2};
  LongVectorHeat<T> solver(context, heat_mode_field<T>(extents), 0.2);
  const auto per_step = [&](std::size_t steps) {
    const StepTiming t = solver.advance(steps);
    return (t.device_seconds >= 0 ? t.device_seconds : t.wall_seconds) / static_cast<double>(steps);
  };
  per_step(1);  // the first calls on a context build CLBlast's kernels
  const double first = per_step(4);
  Point p;
  p.n = n;
  p.steps = o.steps > 0 ? o.steps
                        : static_cast<std::size_t>(std::clamp(std::ceil(o.min_time_ms * 1e-3 / first), 4.0, 1e5));
  std::vector<double> times;
  for (std::size_t r = 0; r < o.repeat; ++r) times.push_back(per_step(p.steps));
  std::sort(times.begin(), times.end());
  p.measured_s = times[times.size() / 2];
  return p;
}

template <class T>
void bench(const LongVectorOptions& o) {
  const std::vector<std::size_t> sizes = interior_sizes(o);
  Context context(o.device);
  const DeviceInfo& device = context.device();
  require_device_precision(device, o.precision);
  const bool progress = !o.json && ::isatty(STDERR_FILENO);
  const DeviceProfile profile = app::run_profile(context, o.profile, progress, ProfileNeeds::long_vector()).profile;
  if (profile.numstreams == 0) {
    throw UnsupportedFeature("the profile of " + device.label() + " has no long-vector constants (CLBlast could not "
                             "run there), so model (1) has nothing to predict with");
  }
  // The steps alone are compared: T_cpu/gpu (the grid's transfers) is left out of both.
  const auto modelled_step_s = [&](std::size_t n) {
    const double values = static_cast<double>((n + 2) * (n + 2));
    const auto c = model::long_vector_constants(profile, sizeof(T), values);
    return (model::long_vector_ns(n, 1, c) - c.transfer_ns) * 1e-9;
  };
  const auto constants = model::long_vector_constants(profile, sizeof(T), 1);

  std::vector<Point> points;
  for (const std::size_t n : sizes) {
    Point p = measure<T>(context, n, o);
    p.modelled_s = modelled_step_s(n);
    points.push_back(p);
    if (progress) std::cerr << "\rN = " << n << " (" << points.size() << "/" << sizes.size() << ")   " << std::flush;
  }
  if (progress) std::cerr << "\r                                        \r";
  const Deviation d = deviation(points);

  std::string calls_text;
  for (const VectorCall& call : LongVectorHeat<T>::step_calls({12, 12})) {
    calls_text += (calls_text.empty() ? "" : ", ") + call.routine;
  }
  nlohmann::json report = {
      {"benchmark", "long-vector"}, {"date", utc_timestamp()},
      {"device", {{"name", device.name}, {"platform", device.platform_name}, {"driver", device.driver_version}}},
      {"precision", sizeof(T) == 4 ? "f32" : "f64"}, {"calls_per_step", calls_text},
      {"profile", o.profile.empty() ? "cached or measured now" : o.profile}, {"profile_date", profile.date},
      {"constants", {{"t_kernel_ns", constants.t_kernel_ns}, {"t_add_ns", constants.t_add_ns},
                     {"t_saxpy_ns", constants.t_saxpy_ns}, {"t0_ns", constants.t0_ns},
                     {"numstreams", constants.numstreams}}},
      {"paper_eps", d.paper_eps}, {"rms_relative_error", d.rms}, {"max_relative_error", d.max_abs},
      {"mean_relative_error", d.mean}, {"points", nlohmann::json::array()}};
  Table table({"N", "n = N^2", "steps", "measured us/step", "model (1) us/step", "(t - tau)/t %", "waves"});
  Series measured{"measured", {}, {}, false}, modelled{"model (1)", {}, {}, true};
  for (const Point& p : points) {
    const double length = static_cast<double>(p.n * (p.n + 2) - 2);
    const double waves = std::ceil(length / constants.numstreams);
    report["points"].push_back({{"N", p.n}, {"steps", p.steps}, {"measured_s", p.measured_s},
                                {"modelled_s", p.modelled_s}, {"relative_error", p.relative()}});
    table.add({std::to_string(p.n), std::to_string(p.n * p.n), std::to_string(p.steps), number_text(p.measured_s * 1e6),
               number_text(p.modelled_s * 1e6), number_text(100 * p.relative(), 2), number_text(waves)});
    measured.x.push_back(static_cast<double>(p.n * p.n));
    measured.y.push_back(p.measured_s * 1e6);
    modelled.x.push_back(static_cast<double>(p.n * p.n));
    modelled.y.push_back(p.modelled_s * 1e6);
  }
  const auto draw = [&] {
    if (o.plot.empty()) return;
    plot_lines(o.plot, "long-vector algorithm, " + device.name + ", " + type_name<T>(), "n = N^2 (interior nodes)",
               "time of one step, us", {measured, modelled});
  };
  if (o.json) {
    std::cout << app::json_output(report);
    draw();
    return;
  }
  std::cout << "ziggurat " << version << " bench long-vector, " << utc_timestamp() << "\n"
            << "device: " << device.label() << ", driver " << device.driver_version << "\n\n"
            << type_name<T>() << "; " << points.size() << " sizes N = " << sizes.front() << ".." << sizes.back()
            << " (interior nodes a side; grid (N+2)^2); a step is " << LongVectorHeat<T>::step_calls({12, 12}).size()
            << " CLBlast calls (" << calls_text << "); time of one step: median of " << o.repeat << " runs of "
            << (o.steps > 0 ? std::to_string(o.steps) + " steps" : "at least " + number_text(o.min_time_ms) + " ms")
            << ", " << (device.profiling ? "device timers" : "host clock") << ", transfers left out.\n"
            << "model (1) per step: 4 t_kernel + t_add ceil(((N+2)^2-1)/s) + t_add ceil((N(N+2)-2)/s) + t0 + t_saxpy "
               "ceil((N(N+2)-2)/s), with the profile's constants (measured "
            << profile.date << " on the CLBlast xAXPY calls alone, not on this benchmark): t_kernel "
            << number_text(constants.t_kernel_ns * 1e-3) << " us, t_add " << number_text(constants.t_add_ns * 1e-3)
            << " us, t_saxpy " << number_text(constants.t_saxpy_ns * 1e-3) << " us, t0 " << number_text(constants.t0_ns * 1e-3) << " us, numstreams s = "
            << static_cast<std::size_t>(constants.numstreams) << ". waves: ceil((N(N+2)-2)/s).\n\n";
  table.print_markdown(std::cout);
  std::cout << "\nmodel (1) against the measurement over " << points.size() << " sizes, rel = (t - tau)/t:\n"
            << "  RMS relative error sqrt(mean rel^2) = " << number_text(100 * d.rms, 3)
            << " % (the issue's 5 % target)\n"
            << "  the paper's eps = (1/M) sqrt(sum rel^2) = " << number_text(100 * d.paper_eps, 3) << " % (M = "
            << points.size() << ": the RMS over sqrt(M))\n"
            << "  max |rel| = " << number_text(100 * d.max_abs, 3) << " %, mean rel = " << number_text(100 * d.mean, 3)
            << " % (> 0: the model is too fast)\n";
  draw();  // last: everything measured is printed even where the plot cannot be drawn
  if (!o.plot.empty()) std::cout << "plot: " << o.plot << "\n";
}

}  // namespace

void add_bench_long_vector_command(CLI::App& app) {
  auto o = std::make_shared<LongVectorOptions>();
  auto* command = app.add_subcommand("long-vector", "The long-vector algorithm (CLBlast calls) over grid sizes "
                                                    "beside model (1) of the method notes");
  command->add_option("--min-n", o->min_n, "Smallest N (interior nodes a side)")->capture_default_str()
      ->check(whole_number(1));
  command->add_option("--max-n", o->max_n, "Largest N")->capture_default_str()->check(whole_number(1));
  command->add_option("--step-small", o->step_small, "Step of N below 100")->capture_default_str()
      ->check(whole_number(1));
  command->add_option("--step-large", o->step_large, "Step of N from 100 (the paper's ~450 sizes: --step-small 2 "
                                                     "--step-large 5)")
      ->capture_default_str()->check(whole_number(1));
  command->add_option("--steps", o->steps, "Steps of each timed run (default: enough for --min-time)")
      ->check(whole_number(1));
  command->add_option("--min-time", o->min_time_ms, "Milliseconds each timed run lasts at least")
      ->capture_default_str()
      ->check(positive_number());
  command->add_option("--repeat", o->repeat, "Timed runs per size (their median counts)")->capture_default_str()
      ->check(whole_number(1));
  o->files.add_input(command, "--profile", o->profile, "Model with this device profile (`ziggurat calibrate --json`) "
                                               "instead of the device's cached or measured one");
  o->files.add_output(command, "--plot", o->plot, "Draw measured and modelled time per step against n = N^2 (PNG)");
  add_precision_option(command, o->precision);
  command->add_option("--device", o->device, "Device selection (see `ziggurat devices`)");
  command->add_flag("--json", o->json, "Print JSON");
  command->callback([o] {
    o->files.check();
    with_precision(o->precision, [&](auto zero) { bench<decltype(zero)>(*o); });
  });
}

}  // namespace ziggurat::cli
