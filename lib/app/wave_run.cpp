#include "ziggurat/app/wave_run.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>

#include "ziggurat/app/text.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/host_memory.hpp"
#include "ziggurat/tuning/wave_planner.hpp"

namespace ziggurat::app {

using namespace ziggurat::wave;

namespace {

// A node index along an axis from a coordinate in metres.
std::size_t node_at(double metres, double dx, std::size_t nodes, const char* what) {
  const double index = std::round(metres / dx);
  if (!(index >= 0 && index < double(nodes)))
    throw InvalidArgument(std::string(what) + " at " + number_text(metres) + " m lies outside the grid (0 to " +
                          number_text(double(nodes - 1) * dx) + " m)");
  return static_cast<std::size_t>(index);
}

// The node nearest a point given by `dims` coordinates (x, z or x, y, z) in metres.
GridNode node_near(const ElasticGrid& grid, const double* xyz, const char* what) {
  if (grid.dims == 2) return {node_at(xyz[0], grid.dx, grid.nx, what), 0, node_at(xyz[1], grid.dx, grid.nz, what)};
  return {node_at(xyz[0], grid.dx, grid.nx, what), node_at(xyz[1], grid.dx, grid.ny, what),
          node_at(xyz[2], grid.dx, grid.nz, what)};
}

std::vector<GridNode> receiver_nodes(const ElasticGrid& grid, const std::vector<double>& xyz) {
  std::vector<GridNode> nodes;
  if (xyz.empty()) {  // every tenth node along x on the surface (through the middle in y)
    for (std::size_t ix = 0; ix < grid.nx; ix += 10) nodes.push_back({ix, grid.dims == 3 ? grid.ny / 2 : 0, 0});
    return nodes;
  }
  if (xyz.size() % grid.dims != 0)
    throw InvalidArgument("receivers take " + std::string(axes_text(grid.dims)) + " of each, in metres");
  for (std::size_t r = 0; r < xyz.size() / grid.dims; ++r) nodes.push_back(node_near(grid, &xyz[grid.dims * r], "a receiver"));
  return nodes;
}

PointSource make_source(const WaveSettings& s, const ElasticGrid& grid, GridNode& node) {
  std::vector<double> at = {double(grid.nx / 2) * grid.dx, double(grid.ny / 2) * grid.dx, double(grid.nz / 3) * grid.dx};
  if (grid.dims == 2) at.erase(at.begin() + 1);
  if (!s.source.empty()) {
    if (s.source.size() != grid.dims)
      throw InvalidArgument("the source takes " + std::string(axes_text(grid.dims)) + " in metres (" +
                            std::to_string(grid.dims) + " numbers)");
    at = s.source;
  }
  node = node_near(grid, at.data(), "the source");
  if (s.source_kind == "explosion") return explosion(grid, node);
  if (s.source_kind == "force") {
    std::array<double, 3> force{0, 0, 1};
    if (!s.force.empty()) {
      if (s.force.size() != grid.dims)
        throw InvalidArgument(std::string("the force takes ") + (grid.dims == 3 ? "fx,fy,fz" : "fx,fz"));
      const std::vector<double>& f = s.force;
      force = grid.dims == 3 ? std::array<double, 3>{f[0], f[1], f[2]} : std::array<double, 3>{f[0], 0, f[1]};
    }
    return point_force(grid, node, force);
  }
  throw InvalidArgument("the source kind is force or explosion, not '" + s.source_kind + "'");
}

}  // namespace

const char* axes_text(std::size_t dims) { return dims == 3 ? "x,y,z" : "x,z"; }

nlohmann::json node_json(std::size_t dims, const GridNode& n) {
  return dims == 3 ? nlohmann::json{n.ix, n.iy, n.iz} : nlohmann::json{n.ix, n.iz};
}

ElasticGrid cell_grid(double dx, const std::vector<std::size_t>& shape, std::vector<double> vp, std::vector<double> vs,
                      std::vector<double> rho) {
  if (shape.size() != 2 && shape.size() != 3)
    throw InvalidArgument("a model's cells are (nz - 1, nx - 1) (2D) or (nz - 1, ny - 1, nx - 1) (3D)");
  ElasticGrid grid;
  grid.dims = shape.size();
  grid.dx = dx;
  grid.nz = shape[0] + 1;
  grid.ny = grid.dims == 3 ? shape[1] + 1 : 1;
  grid.nx = shape.back() + 1;
  grid.vp = std::move(vp);
  grid.vs = std::move(vs);
  grid.rho = std::move(rho);
  validate(grid);
  return grid;
}

void check_wave_memory(const std::vector<std::size_t>& nodes, std::size_t value_bytes) {
  double count = 1;
  for (const std::size_t n : nodes) count *= double(n);
  const double dims = double(nodes.size());
  const double diagonals = nodes.size() == 3 ? 50 : 11;  // K1's half-stored band (elastic_grid.hpp)
  // Cells (vp, vs, rho), and per DOF: K1's diagonals, K2, 1 / m and the solver's three time levels.
  const double bytes = count * 3 * sizeof(double) + count * dims * (diagonals + 5) * double(value_bytes);
  std::string grid;
  for (const std::size_t n : nodes) grid += (grid.empty() ? "" : " x ") + std::to_string(n);
  check_host_memory(bytes < 1.8e19 ? static_cast<std::uint64_t>(bytes) : std::numeric_limits<std::uint64_t>::max(),
                    "a wave run on " + grid + " nodes", "make the grid smaller");
}

template <class T>
void check_seismograms(const WaveRun<T>& r) {
  const auto bad = std::find_if(r.seismograms.begin(), r.seismograms.end(), [](T v) { return !std::isfinite(v); });
  if (bad == r.seismograms.end()) return;
  const std::size_t at = std::size_t(bad - r.seismograms.begin()) / r.components;
  throw Error("the seismogram of receiver " + std::to_string(at / r.steps) + " is " +
              (std::isnan(*bad) ? "NaN" : "infinite") + " from step " + std::to_string(at % r.steps + 1) +
              ": the run overflowed " + (sizeof(T) == 4 ? "float" : "double") +
              " (a source force too large for the precision?): lower the force, or compute in double");
}

WaveSetup wave_setup(ElasticGrid grid, const WaveSettings& settings) {
  WaveSetup w;
  w.grid = std::move(grid);
  w.limit = stable_time_step(w.grid);
  w.dt = settings.dt > 0 ? settings.dt : 0.9 * w.limit;
  w.absorbing = std::min(settings.absorbing, std::min({w.grid.nx, w.grid.nz, w.grid.dims == 3 ? w.grid.ny : w.grid.nx}) / 3);
  w.source = make_source(settings, w.grid, w.source_node);
  w.receivers = receiver_nodes(w.grid, settings.receivers);
  return w;
}

template <class T>
WaveSplit local_split(const WaveSettings& settings, const std::vector<Context>& devices, const WaveSystem<T>& system,
                      const std::function<DeviceProfile(const Context&)>& profile_of) {
  if (settings.split != "measured" && settings.split != "equal")
    throw InvalidArgument("the split is measured or equal, not '" + settings.split + "'");
  WaveSplit split;
  split.halo_steps = settings.halo_steps;
  if (devices.size() == 1) {
    split.halo_steps = std::max<std::size_t>(split.halo_steps, 1);
    return split;
  }
  std::vector<DeviceProfile> profiles;
  if (settings.split == "measured" || split.halo_steps == 0)
    for (const Context& device : devices) profiles.push_back(profile_of(device));
  if (settings.split == "measured") split.weights = block_weights(profiles);
  if (split.halo_steps == 0) split.halo_steps = plan_halo_steps(profiles.front(), system, devices.size());
  return split;
}

nlohmann::json to_json(const WaveProgress& p) { return {{"step", p.step}, {"steps", p.steps}, {"time_s", p.seconds}}; }

template <class T>
nlohmann::json to_json(const WaveRun<T>& r, const DeviceInfo& device, std::size_t devices, int ranks,
                       std::size_t halo_steps, const WaveSetup& w, const WaveSettings& settings) {
  double peak = 0;
  for (const T v : r.seismograms) peak = std::max(peak, std::abs(double(v)));
  return {{"device", device.name},
          {"platform", device.platform_name},
          {"devices", devices},
          {"ranks", ranks},
          {"halo_steps", halo_steps},
          {"halo_steps_chosen_by", settings.halo_steps == 0 ? "model" : "option"},
          {"precision", sizeof(T) == 4 ? "f32" : "f64"},
          {"dims", w.grid.dims},
          {"nx", w.grid.nx},
          {"ny", w.grid.ny},
          {"nz", w.grid.nz},
          {"dx_m", w.grid.dx},
          {"dt_s", w.dt},
          {"dt_limit_s", w.limit},
          {"steps", r.steps},
          {"absorbing_cells", w.absorbing},
          {"source_kind", settings.source_kind},
          {"source_node", node_json(w.grid.dims, w.source_node)},
          {"frequency_hz", settings.frequency},
          {"receivers", r.receivers},
          {"time_s", r.seconds},
          {"nodes_per_s", r.nodes_per_second},
          {"peak_amplitude", peak}};
}

#define ZIGGURAT_WAVE_RUN(T)                                                                                          \
  template void check_seismograms<T>(const WaveRun<T>&);                                                              \
  template WaveSplit local_split<T>(const WaveSettings&, const std::vector<Context>&, const WaveSystem<T>&,           \
                                    const std::function<DeviceProfile(const Context&)>&);                            \
  template nlohmann::json to_json<T>(const WaveRun<T>&, const DeviceInfo&, std::size_t, int, std::size_t,             \
                                     const WaveSetup&, const WaveSettings&);
ZIGGURAT_WAVE_RUN(float)
ZIGGURAT_WAVE_RUN(double)
#undef ZIGGURAT_WAVE_RUN

}  // namespace ziggurat::app
