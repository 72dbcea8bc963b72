// `ziggurat wave`: explicit FEM elastic waves (2D P-SV) on one device, several (--devices), or
// one block a rank under mpirun (solver/wave.hpp, distributed/mpi.hpp): a homogeneous, layered
// or gridded model, a Ricker point source, receivers recorded every step into seismograms.

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "device_list.hpp"
#include "format.hpp"
#include "picture.hpp"
#include "ziggurat/base/context.hpp"
#include "ziggurat/base/device.hpp"
#ifdef ZIGGURAT_HAVE_MPI
#include "ziggurat/distributed/mpi.hpp"
#endif
#include "ziggurat/base/error.hpp"
#include "ziggurat/io/npy.hpp"
#include "ziggurat/matrix/elastic_grid.hpp"
#include "ziggurat/solver/wave.hpp"

namespace ziggurat::cli {

namespace {

using namespace ziggurat::wave;

struct WaveOptions {
  std::size_t dims = 2;
  std::string size;                       // NXxNZ nodes
  double dx = 10;
  std::string medium = "3000,1732,2500";  // vp,vs,rho of a homogeneous model
  std::string model;                      // layers.json
  std::string vp, vs, rho;                // .npy per cell
  double dt = 0;                          // 0: 0.9 of the stability limit
  std::size_t steps = 1000;
  std::string source;                     // x,z in metres; default the centre of the top third
  std::string source_kind = "explosion";
  std::string force = "0,1";
  double frequency = 15;
  std::string receivers;                  // .npy (r, 2) in metres
  std::size_t absorbing = 20;
  std::string device;
  std::string devices;                    // specs separated by '/'
  std::size_t halo_steps = 1;
  std::size_t snapshots = 0;              // every this many steps, a picture of uz
  std::string png_dir;
  std::string precision = "f32";
  std::string out;
  bool quiet = false;
  bool json = false;
};

std::pair<double, double> pair_of(const std::string& text, const char* option) {
  const std::vector<std::string> parts = split(text, ',');
  try {
    if (parts.size() == 2) return {std::stod(parts[0]), std::stod(parts[1])};
  } catch (const std::exception&) {
  }
  throw InvalidArgument(std::string(option) + " takes two numbers a,b, not '" + text + "'");
}

std::pair<std::size_t, std::size_t> grid_size(const std::string& text) {
  const std::size_t x = text.find('x');
  try {
    if (x != std::string::npos) return {std::stoul(text.substr(0, x)), std::stoul(text.substr(x + 1))};
  } catch (const std::exception&) {
  }
  throw InvalidArgument("--size takes nodes NXxNZ (e.g. 2001x801), not '" + text + "'");
}

std::vector<Layer> read_layers(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw IoError("cannot read the layer model " + path);
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    std::vector<Layer> layers;
    for (const auto& l : j) layers.push_back({l.at("top"), l.at("vp"), l.at("vs"), l.at("rho")});
    return layers;
  } catch (const nlohmann::json::exception& e) {
    throw InvalidArgument(path + " is not a layer model (a JSON list of {\"top\", \"vp\", \"vs\", \"rho\"}): " +
                          e.what());
  }
}

// The model's cells from three .npy arrays of shape (nz - 1, nx - 1).
ElasticGrid2D gridded(const WaveOptions& o) {
  if (o.vp.empty() || o.vs.empty() || o.rho.empty()) throw InvalidArgument("a gridded model needs --vp, --vs and --rho");
  ElasticGrid2D grid;
  grid.dx = o.dx;
  std::vector<std::size_t> shape, other;
  grid.vp = read_npy<double>(o.vp, shape);
  if (shape.size() != 2) throw InvalidArgument(o.vp + " must be 2D, (nz - 1, nx - 1) cells");
  for (const auto& [path, values] : {std::pair{&o.vs, &grid.vs}, std::pair{&o.rho, &grid.rho}}) {
    *values = read_npy<double>(*path, other);
    if (other != shape)
      throw InvalidArgument(*path + " has another shape than " + o.vp + ": the three arrays must match");
  }
  grid.nz = shape[0] + 1;
  grid.nx = shape[1] + 1;
  validate(grid);
  return grid;
}

ElasticGrid2D load_grid(const WaveOptions& o) {
  if (!o.vp.empty() || !o.vs.empty() || !o.rho.empty()) {
    if (!o.model.empty()) throw InvalidArgument("give --model or --vp/--vs/--rho, not both");
    return gridded(o);
  }
  if (o.size.empty()) throw InvalidArgument("give the grid: --size NXxNZ (nodes), or --vp/--vs/--rho arrays");
  const auto [nx, nz] = grid_size(o.size);
  if (!o.model.empty()) return layered_grid(nx, nz, o.dx, read_layers(o.model));
  const std::vector<std::string> m = split(o.medium, ',');
  if (m.size() != 3) throw InvalidArgument("--medium takes vp,vs,rho, not '" + o.medium + "'");
  return layered_grid(nx, nz, o.dx, {{0, std::stod(m[0]), std::stod(m[1]), std::stod(m[2])}});
}

std::size_t node_at(double metres, double dx, std::size_t nodes, const char* what) {
  const double index = std::round(metres / dx);
  if (!(index >= 0 && index < double(nodes)))
    throw InvalidArgument(std::string(what) + " at " + number_text(metres) + " m lies outside the grid (0 to " +
                          number_text(double(nodes - 1) * dx) + " m)");
  return static_cast<std::size_t>(index);
}

std::vector<std::size_t> receiver_nodes(const WaveOptions& o, const ElasticGrid2D& grid) {
  std::vector<std::size_t> nodes;
  if (o.receivers.empty()) {  // every tenth node along the surface
    for (std::size_t ix = 0; ix < grid.nx; ix += 10) nodes.insert(nodes.end(), {ix, 0});
    return nodes;
  }
  std::vector<std::size_t> shape;
  const std::vector<double> xz = read_npy<double>(o.receivers, shape);
  if (shape.size() != 2 || shape[1] != 2)
    throw InvalidArgument(o.receivers + " must have shape (receivers, 2): x and z of each, in metres");
  for (std::size_t r = 0; r < shape[0]; ++r) {
    nodes.push_back(node_at(xz[2 * r], grid.dx, grid.nx, "a receiver"));
    nodes.push_back(node_at(xz[2 * r + 1], grid.dx, grid.nz, "a receiver"));
  }
  return nodes;
}

PointSource make_source(const WaveOptions& o, const ElasticGrid2D& grid, std::size_t& ix, std::size_t& iz) {
  const auto [x, z] = o.source.empty() ? std::pair{double(grid.nx / 2) * grid.dx, double(grid.nz / 3) * grid.dx}
                                       : pair_of(o.source, "--source");
  ix = node_at(x, grid.dx, grid.nx, "the source");
  iz = node_at(z, grid.dx, grid.nz, "the source");
  if (o.source_kind == "explosion") return explosion(grid, ix, iz);
  if (o.source_kind == "force") {
    const auto [fx, fz] = pair_of(o.force, "--force");
    return point_force(grid, ix, iz, fx, fz);
  }
  throw InvalidArgument("--source-kind is force or explosion, not '" + o.source_kind + "'");
}

void show_progress(const WaveProgress& p, double nodes) {
  const double rate = p.seconds > 0 ? nodes * double(p.step) / p.seconds : 0;
  const double eta = p.step > 0 ? p.seconds * double(p.steps - p.step) / double(p.step) : 0;
  std::cerr << "\rstep " << p.step << " of " << p.steps << ", " << number_text(rate * 1e-6) << " Mnodes/s, ETA "
            << number_text(eta) << " s   " << std::flush;
}

// The devices of the run: --devices, else --device.
std::vector<Context> contexts(const WaveOptions& o) {
  if (o.devices.empty()) return {Context(o.device)};
  if (!o.device.empty()) throw InvalidArgument("give --device or --devices, not both");
  return contexts_on(o.devices);
}

// What a run is set up with, the same on every rank.
struct WaveSetup {
  ElasticGrid2D grid;
  double limit = 0, dt = 0;
  std::size_t absorbing = 0, ix = 0, iz = 0;
  PointSource source;
  std::vector<std::size_t> receivers;
};

WaveSetup setup(const WaveOptions& o) {
  if (o.dims != 2) throw UnsupportedFeature("--dims 3 (3D elastic waves) is not implemented yet; use --dims 2");
  check_output_path(o.out, "--out", o.vp, "--vp");
  if ((o.snapshots > 0) != !o.png_dir.empty()) throw InvalidArgument("--snapshots N and --png-dir DIR go together");
  if (!o.png_dir.empty() && !std::filesystem::is_directory(o.png_dir))
    throw InvalidArgument("--png-dir " + o.png_dir + " is not a folder: create it first");
  WaveSetup w;
  w.grid = load_grid(o);
  w.limit = stable_time_step(w.grid);
  w.dt = o.dt > 0 ? o.dt : 0.9 * w.limit;
  w.absorbing = std::min(o.absorbing, std::min(w.grid.nx, w.grid.nz) / 3);
  w.source = make_source(o, w.grid, w.ix, w.iz);
  w.receivers = receiver_nodes(o, w.grid);
  return w;
}

std::function<void(const WaveProgress&)> progress_of(const WaveOptions& o, const ElasticGrid2D& grid) {
  if (o.quiet || o.json || !::isatty(STDERR_FILENO)) return nullptr;
  const double nodes = double(grid.nx * grid.nz);
  return [nodes](const WaveProgress& p) {
    show_progress(p, nodes);
    if (p.step == p.steps) std::cerr << "\n";
  };
}

template <class T>
void report(const WaveOptions& o, const WaveSetup& w, const DeviceInfo& device, std::size_t devices, int ranks,
            const WaveRun<T>& r) {
  if (!o.out.empty()) write_npy(o.out, r.seismograms.data(), {r.receivers, r.steps, 2});
  double peak = 0;
  for (const T v : r.seismograms) peak = std::max(peak, std::abs(double(v)));
  if (o.json) {
    nlohmann::json s = {{"device", device.name},
                        {"platform", device.platform_name},
                        {"devices", devices},
                        {"ranks", ranks},
                        {"halo_steps", o.halo_steps},
                        {"precision", sizeof(T) == 4 ? "f32" : "f64"},
                        {"nx", w.grid.nx},
                        {"nz", w.grid.nz},
                        {"dx", w.grid.dx},
                        {"dt", w.dt},
                        {"dt_limit", w.limit},
                        {"steps", r.steps},
                        {"absorbing_cells", w.absorbing},
                        {"source_node", {w.ix, w.iz}},
                        {"receivers", r.receivers},
                        {"seconds", r.seconds},
                        {"mnodes_per_second", r.nodes_per_second * 1e-6},
                        {"peak_amplitude", peak}};
    if (!o.out.empty()) s["output"] = o.out;
    std::cout << s.dump(2) << "\n";
    return;
  }
  const std::string where = ranks > 1 ? std::to_string(ranks) + " MPI ranks, one device each"
                                     : std::to_string(devices) + (devices > 1 ? " devices" : " device");
  std::cout << "device      " << device.label() << " (" << where << ", halos every " << o.halo_steps << " steps)\n"
            << "grid        " << w.grid.nx << " x " << w.grid.nz << " nodes, dx " << number_text(w.grid.dx) << " m, "
            << (sizeof(T) == 4 ? "float" : "double") << ", sponge " << w.absorbing << " cells\n"
            << "time        " << r.steps << " steps of " << number_text(w.dt) << " s (stability limit "
            << number_text(w.limit) << " s) to t = " << number_text(double(r.steps) * w.dt) << " s\n"
            << "source      " << o.source_kind << " at node (" << w.ix << ", " << w.iz << "), Ricker "
            << number_text(o.frequency) << " Hz\n"
            << "receivers   " << r.receivers << ", peak amplitude " << number_text(peak) << " m\n"
            << "run         " << number_text(r.seconds) << " s, " << number_text(r.nodes_per_second * 1e-6)
            << " Mnodes/s\n";
  if (!o.out.empty()) std::cout << "output      " << o.out << " (receivers x steps x 2: ux, uz)\n";
}

// uz of the whole grid as a picture, the free surface at the top.
template <class T>
void snapshot(const WaveOptions& o, const ElasticGrid2D& grid, const std::vector<T>& u, std::size_t step) {
  std::vector<T> uz(grid.nx * grid.nz);
  for (std::size_t iz = 0; iz < grid.nz; ++iz)
    for (std::size_t ix = 0; ix < grid.nx; ++ix) uz[(grid.nz - 1 - iz) * grid.nx + ix] = u[2 * (iz * grid.nx + ix) + 1];
  char name[32];
  std::snprintf(name, sizeof name, "uz-%06zu.png", step);
  write_field_png(std::filesystem::path(o.png_dir) / name, uz.data(), {grid.nx, grid.nz});
}

// The run in pieces of --snapshots steps, a picture after each; the seismograms joined.
template <class T>
WaveRun<T> run_with_snapshots(const WaveOptions& o, const ElasticGrid2D& grid, WaveSolver<T>& solver) {
  WaveRun<T> all;
  all.steps = o.steps;
  for (std::size_t done = 0; done < o.steps;) {
    const std::size_t n = std::min(o.snapshots, o.steps - done);
    const WaveRun<T> part = solver.run(n);
    if (all.seismograms.empty()) all.seismograms.assign(part.receivers * o.steps * 2, T(0));
    all.receivers = part.receivers;
    all.seconds += part.seconds;
    for (std::size_t r = 0; r < part.receivers; ++r)
      std::copy_n(part.seismograms.begin() + r * n * 2, n * 2, all.seismograms.begin() + (r * o.steps + done) * 2);
    done += n;
    snapshot(o, grid, solver.current(), done);
  }
  all.nodes_per_second = all.seconds > 0 ? double(grid.nx * grid.nz) * double(o.steps) / all.seconds : 0;
  return all;
}

// One process, one device or several (--devices).
template <class T>
void run_local(const WaveOptions& o) {
  const std::vector<Context> devices = contexts(o);
  for (const Context& c : devices) require_device_precision(c.device(), o.precision);
  const WaveSetup w = setup(o);
  WaveSolver<T> solver(devices, wave_system<T>(w.grid, w.dt, {w.absorbing}), w.source, o.frequency, w.receivers,
                       {{}, o.halo_steps});
  const WaveRun<T> r = o.snapshots > 0 ? run_with_snapshots(o, w.grid, solver)
                                       : solver.run(o.steps, progress_of(o, w.grid));
  report(o, w, devices.front().device(), devices.size(), 1, r);
}

#ifdef ZIGGURAT_HAVE_MPI
// Rank r on device r of its host (the GPUs, else the CPU devices), unless --device or
// ZIGGURAT_DEVICE names one for every rank.
Context rank_device(const WaveOptions& o, const mpi::Communicator& world) {
  if (!o.devices.empty()) throw InvalidArgument("under mpirun each rank takes one device: use --device, not --devices");
  if (o.snapshots > 0) throw UnsupportedFeature("--snapshots draws the field of one process; run it without mpirun");
  if (!o.device.empty() || std::getenv("ZIGGURAT_DEVICE") != nullptr) return Context(o.device);
  const std::vector<DeviceInfo> all = list_devices();
  std::vector<DeviceInfo> pool = filter_devices(all, "gpu");
  if (pool.empty()) pool = filter_devices(all, "cpu");
  if (static_cast<std::size_t>(world.local_rank()) >= pool.size())
    throw InvalidArgument(std::to_string(world.local_size()) + " ranks on this host but " +
                          std::to_string(pool.size()) + " device(s) for them: start fewer ranks, or give --device "
                          "(e.g. --device cpu) for ranks to share one");
  return Context(pool[static_cast<std::size_t>(world.local_rank())]);
}

// mpirun -np R: one block a rank; a rank that fails ends the job with its message.
template <class T>
void run_ranks(const WaveOptions& o) {
  static mpi::Environment environment;  // finalised at exit, after every rank's last call
  const mpi::Communicator world;
  try {
    const Context device = rank_device(o, world);
    require_device_precision(device.device(), o.precision);
    const WaveSetup w = setup(o);
    mpi::DistributedWave<T> solver(world, device, wave_system<T>(w.grid, w.dt, {w.absorbing}), w.source, o.frequency,
                                   w.receivers, o.halo_steps);
    const WaveRun<T> r = solver.run(o.steps, world.rank() == 0 ? progress_of(o, w.grid) : nullptr);
    if (world.rank() == 0) report(o, w, device.device(), static_cast<std::size_t>(world.size()), world.size(), r);
  } catch (const std::exception& e) {
    world.abort(e.what());
  }
}
#endif

template <class T>
void run(const WaveOptions& o) {
#ifdef ZIGGURAT_HAVE_MPI
  if (mpi::launched_with_ranks()) return run_ranks<T>(o);
#else
  if (std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr && std::atoi(std::getenv("OMPI_COMM_WORLD_SIZE")) > 1)
    throw UnsupportedFeature("this ziggurat was built without MPI: rebuild with libopenmpi-dev installed to run "
                             "under mpirun");
#endif
  run_local<T>(o);
}

}  // namespace

void add_wave_command(CLI::App& app) {
  auto options = std::make_shared<WaveOptions>();
  auto* command = app.add_subcommand("wave", "Elastic waves (2D P-SV) by explicit FEM on a device: seismograms of a "
                                             "Ricker point source");
  command->add_option("--dims", options->dims, "2 (P-SV); 3 is not implemented yet")->capture_default_str();
  command->add_option("--size", options->size, "Nodes NXxNZ (x right, z down; the top row is a free surface)");
  command->add_option("--dx", options->dx, "Node spacing, m")->capture_default_str()->check(CLI::PositiveNumber);
  command->add_option("--medium", options->medium, "vp,vs,rho of a homogeneous model (m/s, m/s, kg/m^3)")
      ->capture_default_str();
  command->add_option("--model", options->model, "Layers: a JSON list of {\"top\", \"vp\", \"vs\", \"rho\"}");
  command->add_option("--vp", options->vp, "vp per cell, .npy of shape (nz - 1, nx - 1)");
  command->add_option("--vs", options->vs, "vs per cell, the same shape");
  command->add_option("--rho", options->rho, "rho per cell, the same shape");
  command->add_option("--dt", options->dt, "Time step, s (default 0.9 of the stability limit; above it is refused)")
      ->check(CLI::PositiveNumber);
  command->add_option("--steps", options->steps, "Time steps")->capture_default_str()->check(whole_number(1));
  command->add_option("--source", options->source, "x,z of the source in metres (default: centre, a third down)");
  command->add_option("--source-kind", options->source_kind, "force or explosion")->capture_default_str();
  command->add_option("--force", options->force, "fx,fz of a force source")->capture_default_str();
  command->add_option("--freq", options->frequency, "Peak frequency of the Ricker wavelet, Hz")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  command->add_option("--receivers", options->receivers, ".npy of shape (r, 2): x, z in metres (default: every "
                                                         "tenth surface node)");
  command->add_option("--absorbing", options->absorbing, "Sponge cells on the left, right and bottom")
      ->capture_default_str();
  command->add_option("--device", options->device, "Device selection (see `ziggurat devices`)");
  command->add_option("--devices", options->devices, "Several devices: a spec matching them all (all, gpu), or "
                                                     "one spec each separated by '/' (0/1); the vector is split "
                                                     "into one block a device");
  command->add_option("--halo-steps", options->halo_steps, "With several devices: exchange halos s bands wide "
                                                           "every s steps")
      ->capture_default_str()
      ->check(whole_number(1));
  add_precision_option(command, options->precision);
  command->add_option("--out", options->out, "Write the seismograms here: .npy (receivers, steps, 2)");
  command->add_option("--snapshots", options->snapshots, "Every this many steps, a picture of uz in --png-dir");
  command->add_option("--png-dir", options->png_dir, "The folder of the --snapshots pictures (uz-STEP.png)");
  command->add_flag("--quiet", options->quiet, "No progress on stderr");
  command->add_flag("--json", options->json, "Print a machine-readable summary");
  command->callback([options] { with_precision(options->precision, [&](auto zero) { run<decltype(zero)>(*options); }); });
}

}  // namespace ziggurat::cli
