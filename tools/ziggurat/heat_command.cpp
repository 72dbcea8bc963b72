// `ziggurat heat`: the explicit 2D heat scheme on a grid held in device memory.

#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "format.hpp"
#include "ziggurat/context.hpp"
#include "ziggurat/error.hpp"
#include "ziggurat/heat.hpp"
#include "ziggurat/npy.hpp"

namespace ziggurat::cli {

namespace {

struct HeatOptions {
  std::string size;
  std::size_t steps = 1000;
  double alpha = 0.2;
  std::string precision;  // empty: the --init array's type, else f32
  std::string device;
  std::string init;
  std::string out;
  bool json = false;
};

// The grid's extents, from --size or the --init file's header (W x H for shape (H, W)), checked
// against each other, before any large allocation.
std::vector<std::size_t> grid_extents(const HeatOptions& options) {
  if (options.init.empty()) return parse_extents(options.size.empty() ? "1024x1024" : options.size, 2, 2);
  const auto shape = read_npy_header(options.init).shape;
  if (shape.size() != 2) {
    throw InvalidArgument("--init " + options.init + " holds a " + std::to_string(shape.size()) +
                          "D array; the 2D heat solver needs shape (H, W)");
  }
  const std::vector<std::size_t> extents = {shape[1], shape[0]};
  if (!options.size.empty() && parse_extents(options.size, 2, 2) != extents) {
    throw InvalidArgument("--size " + options.size + " does not match --init " + options.init + ", which is " +
                          extents_string(extents) + " (shape (H, W) is W x H); drop --size or fix it");
  }
  return extents;
}

// The initial field: from --init, or the default, the slowest discrete mode (heat.hpp), whose
// exact solution lets every run measure its own error.
template <class T>
Grid<T> initial_field(const HeatOptions& options, const std::vector<std::size_t>& extents) {
  return options.init.empty() ? heat_mode_field<T>(extents[0], extents[1]) : load_grid<T>(options.init);
}

void check_output_path(const HeatOptions& options) {
  if (options.out.empty()) return;
  const std::filesystem::path out(options.out);
  std::error_code error;
  if (!options.init.empty() && std::filesystem::equivalent(out, options.init, error)) {
    throw InvalidArgument("--out " + options.out + " is the --init file: ziggurat never overwrites its "
                          "input; choose another output path");
  }
  if (std::filesystem::is_directory(out, error)) {
    throw InvalidArgument("--out " + options.out + " is a folder; give a file name, e.g. " +
                          (out / "result.npy").string());
  }
  const auto folder = out.has_parent_path() ? out.parent_path() : std::filesystem::path(".");
  if (!std::filesystem::is_directory(folder, error)) {
    throw InvalidArgument("--out " + options.out + ": folder '" + folder.string() + "' does not exist");
  }
}

template <class T>
void run(const HeatOptions& options) {
  heat_coefficients<T>(options.alpha, 2);  // refuse an unstable A before any work
  check_output_path(options);
  Context context(options.device);
  const auto extents = grid_extents(options);
  InDeviceHeat2D<T>::check_fits(context.device(), extents[0], extents[1]);
  const Grid<T> initial = initial_field<T>(options, extents);
  InDeviceHeat2D<T> solver(context, initial, options.alpha);
  const StepTiming timing = solver.advance(options.steps);
  const Grid<T> result = solver.read();
  if (!options.out.empty()) save_grid(options.out, result);

  const double interior = static_cast<double>((result.width() - 2) * (result.height() - 2));
  const double seconds = timing.device_seconds >= 0 ? timing.device_seconds : timing.wall_seconds;
  const double nodes_per_second = seconds > 0 ? interior * static_cast<double>(options.steps) / seconds : 0;

  nlohmann::json summary = {
      {"device", context.device().name},
      {"platform", context.device().platform_name},
      {"driver", context.device().driver_version},
      {"size", {result.width(), result.height()}},
      {"precision", options.precision},
      {"alpha", options.alpha},
      {"steps", options.steps},
      {"time_s", seconds},
      {"time_source", timing.device_seconds >= 0 ? "device profiling" : "host clock"},
      {"wall_s", timing.wall_seconds},
      {"nodes_per_s", nodes_per_second},
      {"ns_per_node", nodes_per_second > 0 ? 1e9 / nodes_per_second : 0.0},
  };
  if (options.init.empty()) {
    // Distance from the exact discrete solution decay^K * u0.
    const double factor = std::pow(heat_mode_decay(result.width(), result.height(), options.alpha),
                                   static_cast<double>(options.steps));
    double error = 0;
    for (std::size_t i = 0; i < result.size(); ++i) {
      error = std::max(error, std::abs(static_cast<double>(result.data()[i]) - factor * initial.data()[i]));
    }
    summary["initial_field"] = "mode";
    summary["max_error_vs_exact"] = error;
  } else {
    summary["initial_field"] = options.init;
  }
  if (!options.out.empty()) summary["output"] = options.out;

  if (options.json) {
    std::cout << summary.dump(2) << "\n";
    return;
  }
  std::cout << "device      " << context.device().label() << "\n"
            << "grid        " << extents_string(result.extents()) << " " << (sizeof(T) == 4 ? "float" : "double")
            << ", A = " << options.alpha << ", initial field: "
            << (options.init.empty() ? "slowest mode sin(pi x) sin(pi y)" : options.init) << "\n"
            << "steps       " << options.steps << " in " << number_text(seconds) << " s ("
            << summary["time_source"].get<std::string>() << "; " << number_text(timing.wall_seconds) << " s wall)\n"
            << "throughput  " << number_text(nodes_per_second) << " nodes/s, "
            << number_text(summary["ns_per_node"].get<double>()) << " ns/node\n";
  if (options.init.empty()) {
    std::cout << "check       max |u - exact discrete solution| = "
              << number_text(summary["max_error_vs_exact"].get<double>()) << "\n";
  }
  if (!options.out.empty()) std::cout << "output      " << options.out << "\n";
}

}  // namespace

void add_heat_command(CLI::App& app) {
  auto options = std::make_shared<HeatOptions>();
  auto* command = app.add_subcommand("heat", "Solve the 2D heat equation (five-point explicit scheme, "
                                             "Dirichlet boundary) on a grid held in device memory");
  command->add_option("--size", options->size, "Grid nodes WxH including the boundary (default 1024x1024, or the --init array's)");
  command->add_option("--steps", options->steps, "Time steps K")->capture_default_str()->check(whole_number(0));
  command->add_option("--alpha", options->alpha, "The scheme's A = a^2 ht / h^2, 0 < A <= 1/4")->capture_default_str();
  add_precision_option(command, options->precision, "f32 (float) or f64 (double); default: the --init array's type, else f32");
  command->add_option("--device", options->device, "Device selection (see `ziggurat devices`); default: ZIGGURAT_DEVICE, else the first GPU");
  command->add_option("--init", options->init, "Initial field, a .npy float32/float64 array of shape (H, W); "
                                               "default: sin(pi x/(W-1)) sin(pi y/(H-1)), zero on the boundary");
  command->add_option("--out", options->out, "Write the final field here (.npy, same shape; written atomically)");
  command->add_flag("--json", options->json, "Print a machine-readable summary");
  command->callback([options] {
    if (options->precision.empty()) {
      const bool f64 = !options->init.empty() && read_npy_header(options->init).type == NpyType::f64;
      options->precision = f64 ? "f64" : "f32";
    }
    with_precision(options->precision, [&](auto zero) { run<decltype(zero)>(*options); });
  });
}

}  // namespace ziggurat::cli
