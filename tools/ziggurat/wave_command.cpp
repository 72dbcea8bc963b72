// `ziggurat wave`: explicit FEM elastic waves (2D P-SV or 3D) on one device, several (--devices),
// or one block a rank under mpirun (solver/wave.hpp, distributed/mpi.hpp): a homogeneous, layered
// or gridded model, a Ricker point source, receivers recorded every step into seismograms.

#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "file_options.hpp"
#include "format.hpp"
#include "picture.hpp"
#include "progress.hpp"
#include "ranks.hpp"
#include "stop_signal.hpp"
#include "ziggurat/app/devices.hpp"
#include "ziggurat/app/json_output.hpp"
#include "ziggurat/app/output_files.hpp"
#include "ziggurat/app/run_profile.hpp"
#include "ziggurat/app/wave_checkpoint.hpp"
#include "ziggurat/app/wave_run.hpp"
#include "ziggurat/base/context.hpp"
#include "ziggurat/base/device.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/files.hpp"
#include "ziggurat/io/npy.hpp"
#include "ziggurat/io/vtk.hpp"
#include "ziggurat/matrix/elastic_grid.hpp"
#include "ziggurat/matrix/grid.hpp"
#include "ziggurat/solver/wave.hpp"
#include "ziggurat/tuning/wave_planner.hpp"

namespace ziggurat::cli {

namespace {

using namespace ziggurat::wave;

struct WaveOptions {
  FileOptions files;  // every file read or written, checked before any work
  std::size_t dims = 2;
  std::string size;                       // NXxNZ or NXxNYxNZ nodes
  double dx = 10;
  std::string medium;                     // vp,vs,rho of a homogeneous model; empty: kDefaultMedium
  std::string model;                      // layers.json
  std::string vp, vs, rho;                // .npy per cell
  double dt = 0;                          // 0: 0.9 of the stability limit
  std::size_t steps = 1000;
  std::string source;                     // x,z or x,y,z in metres; default the centre of the top third
  std::string source_kind = "explosion";
  std::string force;                      // fx,fz or fx,fy,fz; default straight down
  double frequency = 15;
  std::string receivers;                  // .npy (r, dims) in metres
  std::size_t absorbing = 20;
  std::string device;
  std::string devices;                    // specs separated by '/'
  std::string halo_steps = "auto";        // s, or the cost model's
  std::string split = "measured";         // block shares by measured copy bandwidth, or equal
  std::string profile;                    // plan with this profile file
  std::size_t snapshots = 0;              // every this many steps, a picture of uz
  std::string png_dir;
  std::string vtk;                        // NAME.pvd: the --snapshots as a VTK time series
  std::string precision = "f32";
  std::string out;
  std::string seismograms;                // NAME.npz: the seismograms with dt, receivers, components
  std::string checkpoint;                 // where a run stopped by a signal writes its state
  std::string resume;                     // a --checkpoint file to go on from
  bool quiet = false;
  ProgressOption progress;
  bool json = false;
};

constexpr const char* kDefaultMedium = "3000,1732,2500";
// Steps a pass without --snapshots: after each, a progress line, and a signal stops the run there.
constexpr std::size_t kPassSteps = 256;

std::string grid_text(const ElasticGrid& grid) {
  return std::to_string(grid.nx) + " x " + (grid.dims == 3 ? std::to_string(grid.ny) + " x " : std::string()) +
         std::to_string(grid.nz);
}

// `dims` numbers separated by `separator`.
std::vector<double> numbers(const std::string& text, std::size_t dims, char separator, const char* option,
                            const char* what) {
  const std::vector<std::string> parts = split(text, separator);
  std::vector<double> values;
  try {
    for (const std::string& part : parts) {
      std::size_t used = 0;
      values.push_back(std::stod(part, &used));
      if (used != part.size() || !std::isfinite(values.back())) values.clear();
    }
  } catch (const std::exception&) {
    values.clear();
  }
  if (values.size() != dims || parts.size() != dims)
    throw InvalidArgument(std::string(option) + " takes " + what + " (" + std::to_string(dims) + " finite numbers with --dims " +
                          std::to_string(dims) + "), not '" + text + "'");
  return values;
}

std::vector<Layer> read_layers(const std::string& path) {
  const std::vector<unsigned char> bytes = read_file(path);  // IoError naming the file (a folder too)
  try {
    const nlohmann::json j = nlohmann::json::parse(bytes.begin(), bytes.end());
    if (!j.is_array()) throw InvalidArgument(path + " is not a layer model: a JSON list of {\"top\", \"vp\", \"vs\", \"rho\"} is");
    std::vector<Layer> layers;
    for (const auto& l : j) layers.push_back({l.at("top"), l.at("vp"), l.at("vs"), l.at("rho")});
    return layers;
  } catch (const nlohmann::json::exception& e) {
    throw InvalidArgument(path + " is not a layer model (a JSON list of {\"top\", \"vp\", \"vs\", \"rho\"}): " +
                          e.what());
  }
}

// The model's nodes from --size (NX, NZ or NX, NY, NZ), checked against --dims.
std::vector<std::size_t> size_nodes(const WaveOptions& o) {
  const char* sizes = o.dims == 3 ? "NXxNYxNZ (e.g. 201x201x101)" : "NXxNZ (e.g. 2001x801)";
  std::vector<std::size_t> n;
  for (const double v : numbers(o.size, o.dims, 'x', "--size", sizes)) {
    if (!(v >= 1 && v <= 1e15 && v == std::floor(v)))
      throw InvalidArgument("--size takes whole numbers of nodes, not '" + o.size + "'");
    n.push_back(static_cast<std::size_t>(v));
  }
  return n;
}

// The model's nodes from the cells of --vp (the header alone), checked against --dims and --size.
std::vector<std::size_t> gridded_nodes(const WaveOptions& o) {
  if (o.vp.empty() || o.vs.empty() || o.rho.empty()) throw InvalidArgument("a gridded model needs --vp, --vs and --rho");
  const std::vector<std::size_t> shape = read_npy_header(o.vp).shape;
  if (shape.size() != o.dims)
    throw InvalidArgument(o.vp + " must be " + std::to_string(o.dims) + "D with --dims " + std::to_string(o.dims) +
                          ": cells " + (o.dims == 3 ? "(nz - 1, ny - 1, nx - 1)" : "(nz - 1, nx - 1)"));
  std::vector<std::size_t> n;
  for (auto cells = shape.rbegin(); cells != shape.rend(); ++cells) n.push_back(*cells + 1);
  if (!o.size.empty() && size_nodes(o) != n)
    throw InvalidArgument("--size " + o.size + " does not match --vp " + o.vp + ", whose cells make a grid of " +
                          extents_string(n) + " nodes: drop --size, or give arrays of its cells");
  return n;
}

// The model's cells from three .npy arrays of shape (nz - 1, nx - 1) or (nz - 1, ny - 1, nx - 1).
ElasticGrid gridded(const WaveOptions& o) {
  std::vector<std::size_t> shape, other;
  std::vector<double> vp = read_npy<double>(o.vp, shape), vs, rho;
  for (const auto& [path, values] : {std::pair{&o.vs, &vs}, std::pair{&o.rho, &rho}}) {
    *values = read_npy<double>(*path, other);
    if (other != shape)
      throw InvalidArgument(*path + " has another shape than " + o.vp + ": the three arrays must match");
  }
  return app::cell_grid(o.dx, shape, std::move(vp), std::move(vs), std::move(rho));
}

// Each source of the model alone: --medium, --model, or the arrays (with --size at most).
void check_model_sources(const WaveOptions& o) {
  const bool arrays = !o.vp.empty() || !o.vs.empty() || !o.rho.empty();
  if (arrays + !o.model.empty() + !o.medium.empty() > 1)
    throw InvalidArgument("give one model: --medium vp,vs,rho, --model layers.json, or --vp/--vs/--rho arrays");
  if (!arrays && o.size.empty())
    throw InvalidArgument(std::string("give the grid: --size ") +
                          (o.dims == 3 ? "NXxNYxNZ (e.g. 201x201x101)" : "NXxNZ (e.g. 2001x801)") +
                          ", or --vp/--vs/--rho arrays");
}

template <class T>
ElasticGrid load_grid(const WaveOptions& o) {
  check_model_sources(o);
  const bool arrays = !o.vp.empty() || !o.vs.empty() || !o.rho.empty();
  const std::vector<std::size_t> n = arrays ? gridded_nodes(o) : size_nodes(o);
  app::check_wave_memory(n, sizeof(T));  // before the model and the system are built
  if (arrays) return gridded(o);
  std::vector<Layer> layers;
  if (!o.model.empty()) {
    layers = read_layers(o.model);
  } else {
    const std::vector<double> m = numbers(o.medium.empty() ? kDefaultMedium : o.medium, 3, ',', "--medium", "vp,vs,rho");
    layers = {{0, m[0], m[1], m[2]}};
  }
  return o.dims == 3 ? layered_grid(n[0], n[1], n[2], o.dx, layers) : layered_grid(n[0], n[1], o.dx, layers);
}

// "wave: step 300 of 2000, 41.2 Mnodes/s, ETA 3.1 s"; this process ran steps `first` to p.step.
std::string progress_text(const WaveProgress& p, double nodes, std::size_t first) {
  const double run = double(p.step - first);
  const double rate = p.seconds > 0 ? nodes * run / p.seconds : 0;
  const double eta = run > 0 ? p.seconds * double(p.steps - p.step) / run : 0;
  return "wave: step " + std::to_string(p.step) + " of " + std::to_string(p.steps) + ", " + number_text(rate * 1e-6) +
         " Mnodes/s, ETA " + number_text(eta) + " s";
}

// The devices of the run: --devices, else --device.
std::vector<Context> contexts(const WaveOptions& o) {
  if (o.devices.empty()) return {Context(o.device)};
  if (!o.device.empty()) throw InvalidArgument("give --device or --devices, not both");
  return app::contexts_on(o.devices);
}

// The receivers of --receivers: r x dims coordinates in metres (none: the default line).
std::vector<double> receiver_coordinates(const WaveOptions& o, std::size_t dims) {
  if (o.receivers.empty()) return {};
  std::vector<std::size_t> shape;
  std::vector<double> xyz = read_npy<double>(o.receivers, shape);
  if (shape.size() != 2 || shape[1] != dims)
    throw InvalidArgument(o.receivers + " must have shape (receivers, " + std::to_string(dims) + "): " +
                          app::axes_text(dims) + " of each, in metres");
  if (shape[0] == 0)
    throw InvalidArgument("--receivers " + o.receivers + " holds no receiver: give at least one, or drop --receivers "
                          "for the default line (every tenth surface node)");
  return xyz;
}

app::WaveSettings settings_of(const WaveOptions& o, std::size_t dims) {
  if (o.split != "measured" && o.split != "equal") throw InvalidArgument("--split is measured or equal, not '" + o.split + "'");
  if (o.source_kind != "explosion" && o.source_kind != "force")
    throw InvalidArgument("--source-kind is force or explosion, not '" + o.source_kind + "'");
  app::WaveSettings s;
  s.dt = o.dt;
  if (!o.source.empty()) s.source = numbers(o.source, dims, ',', "--source", app::axes_text(dims));
  s.source_kind = o.source_kind;
  if (!o.force.empty()) s.force = numbers(o.force, dims, ',', "--force", dims == 3 ? "fx,fy,fz" : "fx,fz");
  s.frequency = o.frequency;
  s.receivers = receiver_coordinates(o, dims);
  s.absorbing = o.absorbing;
  s.halo_steps = parse_auto_count(o.halo_steps, "--halo-steps", "steps between halo exchanges; auto: the cost model's");
  s.split = o.split;
  return s;
}

// The run's grid and set-up, the same on every rank.
template <class T>
std::pair<app::WaveSettings, app::WaveSetup> setup(const WaveOptions& o) {
  if ((o.snapshots > 0) != (!o.png_dir.empty() || !o.vtk.empty()))
    throw InvalidArgument("--snapshots N goes with --png-dir DIR or --vtk NAME.pvd (or both)");
  if (!o.vtk.empty() && std::filesystem::path(o.vtk).extension() != ".pvd")
    throw InvalidArgument("--vtk " + o.vtk + " must end in .pvd (a time series of NAME-STEP.vti beside it)");
  if (!o.seismograms.empty()) app::check_ending(o.seismograms, {".npz"}, "--seismograms");
  ElasticGrid grid = load_grid<T>(o);
  app::WaveSettings settings = settings_of(o, grid.dims);
  app::WaveSetup w = app::wave_setup(std::move(grid), settings);
  return {std::move(settings), std::move(w)};
}

template <class T>
void report(const WaveOptions& o, const app::WaveSettings& settings, const app::WaveSetup& w, const DeviceInfo& device,
            std::size_t devices, int ranks, std::size_t halo_steps, const WaveRun<T>& r) {
  app::check_seismograms(r);
  if (!o.out.empty()) write_npy(o.out, r.seismograms.data(), {r.receivers, r.steps, r.components});
  if (!o.seismograms.empty()) app::write_seismograms_npz(o.seismograms, r, w);
  nlohmann::json s = app::to_json(r, device, devices, ranks, halo_steps, w, settings);
  if (o.json) {
    if (!o.out.empty()) s["output"] = o.out;
    if (!o.seismograms.empty()) s["seismograms"] = o.seismograms;
    std::cout << app::json_output(s);
    return;
  }
  const std::string where = ranks > 1 ? std::to_string(ranks) + " MPI ranks, one device each"
                                     : std::to_string(devices) + (devices > 1 ? " devices" : " device");
  std::cout << "device      " << device.label() << " (" << where << ", halos every " << halo_steps << " steps"
            << (o.halo_steps == "auto" && devices > 1 ? ", the model's choice" : "") << ")\n"
            << "grid        " << grid_text(w.grid) << " nodes, dx " << number_text(w.grid.dx) << " m, "
            << (sizeof(T) == 4 ? "float" : "double") << ", sponge " << w.absorbing << " cells\n"
            << "time        " << r.steps << " steps of " << number_text(w.dt) << " s (stability limit "
            << number_text(w.limit) << " s) to t = " << number_text(double(r.steps) * w.dt) << " s\n"
            << "source      " << o.source_kind << " at node " << app::node_json(w.grid.dims, w.source_node).dump()
            << ", Ricker " << number_text(o.frequency) << " Hz\n"
            << "receivers   " << r.receivers << ", peak amplitude " << number_text(s["peak_amplitude"].get<double>()) << " m\n"
            << "run         " << number_text(r.seconds) << " s, " << number_text(r.nodes_per_second * 1e-6)
            << " Mnodes/s\n";
  if (!o.out.empty())
    std::cout << "output      " << o.out << " (receivers x steps x " << r.components << ": "
              << (r.components == 3 ? "ux, uy, uz" : "ux, uz") << ")\n";
  if (!o.seismograms.empty())
    std::cout << "seismograms " << o.seismograms << " (data, dt, t0, receivers, components, units)\n";
}

// Adds the snapshot of `step`, NAME-STEP.vti beside the .pvd, to the series.
void vtk_series_step(const WaveOptions& o, const app::WaveSetup& w, std::size_t step, std::vector<vtk::TimeStep>& series) {
  char suffix[32];
  std::snprintf(suffix, sizeof suffix, "-%06zu.vti", step);
  series.push_back({double(step) * w.dt, std::filesystem::path(o.vtk).stem().string() + suffix});
}

// The displacement at `step` as NAME-STEP.vti beside the .pvd (ux, uz, or ux, uy, uz a node; x
// to the right, z down), and the .pvd rewritten to name every snapshot so far: a run that ends
// early leaves a series ParaView opens.
template <class T>
void vtk_snapshot(const WaveOptions& o, const app::WaveSetup& w, const std::vector<T>& u, std::size_t step,
                  std::vector<vtk::TimeStep>& series) {
  vtk_series_step(o, w, step, series);
  app::write_displacement_vtk(std::filesystem::path(o.vtk).replace_filename(series.back().file).string(), w.grid,
                              u.data());
  vtk::write_collection(o.vtk, series);
}

// uz of the grid (2D) or of its x-z slice through the source (3D) as a picture, the free surface
// at the top.
template <class T>
void snapshot(const WaveOptions& o, const app::WaveSetup& w, const std::vector<T>& u, std::size_t step) {
  if (o.png_dir.empty()) return;
  const ElasticGrid& grid = w.grid;
  std::vector<T> uz(grid.nx * grid.nz);
  for (std::size_t iz = 0; iz < grid.nz; ++iz)
    for (std::size_t ix = 0; ix < grid.nx; ++ix)
      uz[(grid.nz - 1 - iz) * grid.nx + ix] = u[grid.dims * grid.node(ix, w.source_node.iy, iz) + grid.dims - 1];
  char name[32];
  std::snprintf(name, sizeof name, "uz-%06zu.png", step);
  write_field_png(std::filesystem::path(o.png_dir) / name, uz.data(), {grid.nx, grid.nz});
}

// The first `steps` samples of each receiver's seismogram of `all` (receivers x all.steps x c).
template <class T>
std::vector<T> first_samples(const WaveRun<T>& all, std::size_t steps) {
  const std::size_t c = all.components;
  std::vector<T> first(all.receivers * steps * c);
  for (std::size_t r = 0; r < all.receivers; ++r)
    std::copy_n(all.seismograms.begin() + r * all.steps * c, steps * c, first.begin() + r * steps * c);
  return first;
}

// What identifies the run in a checkpoint, where one is written or read (a checksum of the whole
// system: not computed for runs that need none).
template <class T>
nlohmann::json identity_of(const WaveOptions& o, const app::WaveSetup& w, const WaveSystem<T>& system) {
  if (o.checkpoint.empty() && o.resume.empty()) return nullptr;
  return app::wave_run_identity(w, system, o.frequency);
}

// The state --resume names (none: the medium at rest), refused when it holds more steps than the run.
template <class T>
app::WaveCheckpoint<T> resumed_state(const WaveOptions& o, const nlohmann::json& identity) {
  if (o.resume.empty()) return {};
  app::WaveCheckpoint<T> state = app::read_wave_checkpoint<T>(o.resume, identity);
  if (state.steps_done > o.steps)
    throw InvalidArgument("--resume " + o.resume + " holds " + std::to_string(state.steps_done) + " steps, more than --steps " +
                          std::to_string(o.steps) + ": give the stopped run's --steps");
  return state;
}

// A run stopped by `signal` after `done` steps, a whole pass: its state goes to --checkpoint and
// its seismograms so far to --out and --seismograms (written by the root process; every rank
// gathers), and the process ends with 128 + the signal's number.
template <class T, class Solver>
[[noreturn]] void end_stopped(const WaveOptions& o, const app::WaveSetup& w, Solver& solver, const WaveRun<T>& all,
                              const nlohmann::json& identity, bool root, int signal) {
  const std::size_t done = solver.steps_done();
  const app::WaveCheckpoint<T> state{done, solver.previous(), solver.current(), first_samples(all, done)};
  if (root) {
    std::string where = "; no --checkpoint was given, so the run cannot go on from here";
    if (!o.out.empty()) write_npy(o.out, state.seismograms.data(), {all.receivers, done, all.components});
    if (!o.seismograms.empty()) {
      WaveRun<T> so_far = all;
      so_far.steps = done;
      so_far.seismograms = state.seismograms;
      app::write_seismograms_npz(o.seismograms, so_far, w);
    }
    if (!o.checkpoint.empty()) {
      app::write_wave_checkpoint(o.checkpoint, state, identity);
      where = "; its state is in " + o.checkpoint + ": go on with the same options and --resume " + o.checkpoint;
    }
    std::cerr << "ziggurat wave: " << RunStopped(signal).what() << " after " << done << " of " << o.steps
              << " steps (a whole pass)" << (o.out.empty() ? "" : "; the seismograms so far are in " + o.out) << where
              << std::endl;
  }
  std::cout.flush();
  std::exit(stopped_exit_status(signal));
}

// The run from `start` in passes of --snapshots steps (else kPassSteps): after each, the snapshots,
// a progress line (on the root process) and stop(), the signal every process agrees stops the run
// there (0: none); the seismograms joined after the start's.
template <class T, class Solver>
WaveRun<T> run_in_passes(const WaveOptions& o, const app::WaveSetup& w, Solver& solver, const app::WaveCheckpoint<T>& start,
                         const nlohmann::json& identity, bool root, const std::function<int()>& stop) {
  WaveRun<T> all;
  all.steps = o.steps;
  all.receivers = w.receivers.size();
  all.components = w.grid.dims;
  const std::size_t c = all.components, first = start.steps_done, pass = o.snapshots > 0 ? o.snapshots : kPassSteps;
  all.seismograms.assign(all.receivers * o.steps * c, T(0));
  for (std::size_t r = 0; r < all.receivers; ++r)
    std::copy_n(start.seismograms.begin() + r * first * c, first * c, all.seismograms.begin() + r * o.steps * c);
  std::vector<vtk::TimeStep> series;  // the snapshots of the stopped run too, by their names
  for (std::size_t step = pass; step <= first && !o.vtk.empty(); step += pass) vtk_series_step(o, w, step, series);
  ProgressLines lines(root && o.progress.enabled(o.quiet, o.json));
  for (std::size_t done = first; done < o.steps;) {
    const std::size_t n = std::min(pass, o.steps - done);
    const WaveRun<T> part = solver.run(n);
    all.seconds += part.seconds;
    for (std::size_t r = 0; r < part.receivers; ++r)
      std::copy_n(part.seismograms.begin() + r * n * c, n * c, all.seismograms.begin() + (r * o.steps + done) * c);
    done += n;
    if (o.snapshots > 0) {
      snapshot(o, w, solver.current(), done);
      if (!o.vtk.empty()) vtk_snapshot(o, w, solver.current(), done, series);
    }
    lines.show(progress_text({done, o.steps, all.seconds}, double(w.grid.nodes()), first), done == o.steps);
    if (const int signal = stop(); signal != 0 && done < o.steps) {
      lines.finish();
      end_stopped(o, w, solver, all, identity, root, signal);
    }
  }
  lines.finish();
  all.nodes_per_second = all.seconds > 0 ? double(w.grid.nodes()) * double(o.steps - first) / all.seconds : 0;
  return all;
}

DeviceProfile planning_profile(const WaveOptions& o, const Context& device) {
  return app::run_profile(device, o.profile, o.progress.enabled(o.quiet, o.json), ProfileNeeds{}).profile;
}

// One process, one device or several (--devices).
template <class T>
void run_local(const WaveOptions& o) {
  const std::vector<Context> devices = contexts(o);
  if (devices.size() == 1 && !o.profile.empty())
    throw InvalidArgument("--profile plans the split over several devices (--devices) or MPI ranks; a run on one "
                          "device plans nothing with it: drop --profile");
  for (const Context& c : devices) require_device_precision(c.device(), o.precision);
  const auto [settings, w] = setup<T>(o);
  WaveSystem<T> system = wave_system<T>(w.grid, w.dt, {w.absorbing});
  const WaveSplit split =
      app::local_split(settings, devices, system, [&](const Context& device) { return planning_profile(o, device); });
  const nlohmann::json identity = identity_of(o, w, system);
  const app::WaveCheckpoint<T> start = resumed_state<T>(o, identity);
  WaveSolver<T> solver(devices, std::move(system), w.source, o.frequency, w.receivers, split);
  if (!o.resume.empty()) solver.restore(start.previous, start.current, start.steps_done);
  const StopOnSignal stop_on_signal;
  const WaveRun<T> r = run_in_passes(o, w, solver, start, identity, true, stop_requested);
  report(o, settings, w, devices.front().device(), devices.size(), 1, split.halo_steps, r);
}

#ifdef ZIGGURAT_HAVE_MPI
// mpirun -np R: one block a rank.
template <class T>
void run_ranks(const WaveOptions& o) {
  on_ranks({{"--precision", o.precision}, {"--steps", std::to_string(o.steps)}, {"--halo-steps", o.halo_steps}},
           [&](const mpi::Communicator& world) {
    if (!o.devices.empty()) throw InvalidArgument("under mpirun each rank takes one device: use --device, not --devices");
    if (o.snapshots > 0)
      throw UnsupportedFeature("--snapshots draws and writes the field of one process; run it without mpirun");
    const Context device = rank_device(o.device, world);
    require_device_precision(device.device(), o.precision);
    const auto [settings, w] = setup<T>(o);
    WaveSystem<T> system = wave_system<T>(w.grid, w.dt, {w.absorbing});
    // s: given, else the model's for this rank's device, the smallest over the ranks (one for all).
    std::size_t s = settings.halo_steps;
    if (s == 0) s = world.min(plan_halo_steps(planning_profile(o, device), system, std::size_t(world.size())));
    const nlohmann::json identity = identity_of(o, w, system);
    const app::WaveCheckpoint<T> start = resumed_state<T>(o, identity);
    mpi::DistributedWave<T> solver(world, device, std::move(system), w.source, o.frequency, w.receivers, s);
    if (!o.resume.empty()) solver.restore(start.previous, start.current, start.steps_done);
    const StopOnSignal stop_on_signal;
    const WaveRun<T> r = run_in_passes(o, w, solver, start, identity, world.rank() == 0, [&] { return agreed_stop(world); });
    if (world.rank() == 0)
      report(o, settings, w, device.device(), static_cast<std::size_t>(world.size()), world.size(), s, r);
  });
}
#endif

template <class T>
void run(const WaveOptions& o) {
  if (launched_with_ranks()) {  // a tool without MPI refuses
#ifdef ZIGGURAT_HAVE_MPI
    return run_ranks<T>(o);
#endif
  }
  run_local<T>(o);
}

}  // namespace

void add_wave_command(CLI::App& app) {
  auto options = std::make_shared<WaveOptions>();
  auto* command = app.add_subcommand("wave", "Elastic waves (2D P-SV or 3D) by explicit FEM on a device: seismograms "
                                             "of a Ricker point source");
  command->add_option("--dims", options->dims, "2 (P-SV in the x-z plane) or 3")->capture_default_str()->check(whole_number(2, 3));
  command->add_option("--size", options->size, "Nodes NXxNZ, or NXxNYxNZ with --dims 3 (x right, y across, z down; "
                                               "the top is a free surface)");
  command->add_option("--dx", options->dx, "Node spacing, m")->capture_default_str()->check(positive_number());
  command->add_option("--medium", options->medium, std::string("vp,vs,rho of a homogeneous model (m/s, m/s, kg/m^3); "
                                                   "default ") + kDefaultMedium + " without --model or arrays");
  options->files.add_input(command, "--model", options->model, "Layers: a JSON list of {\"top\", \"vp\", \"vs\", \"rho\"}");
  options->files.add_input(command, "--vp", options->vp, "vp per cell, .npy of shape (nz - 1, nx - 1), or (nz - 1, ny - 1, nx - 1) "
                                           "with --dims 3");
  options->files.add_input(command, "--vs", options->vs, "vs per cell, the same shape");
  options->files.add_input(command, "--rho", options->rho, "rho per cell, the same shape");
  command->add_option("--dt", options->dt, "Time step, s (default 0.9 of the stability limit; above it is refused)")
      ->check(positive_number());
  command->add_option("--steps", options->steps, "Time steps")->capture_default_str()->check(whole_number(1));
  command->add_option("--source", options->source, "x,z (x,y,z with --dims 3) of the source in metres (default: "
                                                   "centre, a third down)");
  command->add_option("--source-kind", options->source_kind, "force or explosion")->capture_default_str();
  command->add_option("--force", options->force, "fx,fz (fx,fy,fz) of a force source (default: down)");
  command->add_option("--freq", options->frequency, "Peak frequency of the Ricker wavelet, Hz")
      ->capture_default_str()
      ->check(positive_number());
  options->files.add_input(command, "--receivers", options->receivers, ".npy of shape (r, dims): x, z (x, y, z) in metres "
                                                         "(default: every tenth surface node along x)");
  command->add_option("--absorbing", options->absorbing, "Sponge cells on every side but the top")
      ->capture_default_str()
      ->check(whole_number(0));
  command->add_option("--device", options->device, "Device selection (see `ziggurat devices`)");
  command->add_option("--devices", options->devices, "Several devices: a spec matching them all (all, gpu), or "
                                                     "one spec each separated by '/' (0/1); the vector is split "
                                                     "into one block a device");
  command->add_option("--halo-steps", options->halo_steps, "With several devices or ranks: exchange halos s bands "
                                                           "wide every s steps; auto: the cost model's s from the "
                                                           "measured transfer latencies")
      ->capture_default_str();
  command->add_option("--split", options->split, "With several devices: blocks by each device's measured copy "
                                                 "bandwidth (measured) or equal")
      ->capture_default_str();
  options->files.add_input(command, "--profile", options->profile, "Plan with this device profile (`ziggurat calibrate --json`) "
                                                     "instead of each device's cached or measured one");
  add_precision_option(command, options->precision);
  options->files.add_output(command, "--out", options->out, "Write the seismograms here: .npy (receivers, steps, dims)");
  options->files.add_output(command, "--seismograms", options->seismograms, "Write the seismograms with what they are "
                                                                           "as NAME.npz (numpy.load): data (receivers, "
                                                                           "steps, dims; m), dt, t0 (s), receivers "
                                                                           "(positions, m), components, units");
  options->files.add_output(command, "--checkpoint", options->checkpoint, "Where a run stopped by SIGTERM or SIGINT (after "
                                                                           "its current pass) writes its state, for --resume");
  command->add_option("--resume", options->resume, "Go on from this --checkpoint file of a stopped run, given the same "
                                                   "options: ends with the bits of the run that was not stopped")
      ->check(CLI::ExistingFile);
  command->add_option("--snapshots", options->snapshots, "Every this many steps, a picture of uz in --png-dir (3D: "
                                                         "the x-z slice through the source)")
      ->check(whole_number(1));
  options->files.add_output_folder(command, "--png-dir", options->png_dir, "The folder of the --snapshots pictures (uz-STEP.png)");
  options->files.add_output(command, "--vtk", options->vtk, "The --snapshots as a VTK time series for ParaView: "
                                                             "NAME.pvd naming NAME-STEP.vti beside it (the displacement "
                                                             "a node, time in s, spacing dx)");
  command->add_flag("--quiet", options->quiet, "No progress on stderr");
  options->progress.add(command);
  command->add_flag("--json", options->json, "Print a machine-readable summary");
  command->callback([options] {
    options->files.check();
    with_precision(options->precision, [&](auto zero) { run<decltype(zero)>(*options); });
  });
}

}  // namespace ziggurat::cli
