#pragma once
// What `ziggurat wave` and ziggurat.wave() share: a model of cells from arrays, the run's set-up
// (time step, sponge, the source and receiver nodes from coordinates in metres), the split over
// several devices of one process, and the run's summary (to_json: the CLI prints it as --json, the
// Python module returns it as its report).

#include <cstddef>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ziggurat/base/context.hpp"
#include "ziggurat/matrix/elastic_grid.hpp"
#include "ziggurat/ops/wave_step.hpp"
#include "ziggurat/solver/wave.hpp"
#include "ziggurat/tuning/device_profile.hpp"

namespace ziggurat::app {

/// A run's settings as the user gives them.
struct WaveSettings {
  double dt = 0;                          ///< 0: 0.9 of the stability limit
  std::vector<double> source;             ///< x, z (x, y, z) in metres; empty: the centre of the top third
  std::string source_kind = "explosion";  ///< or "force"
  std::vector<double> force;              ///< fx, fz (fx, fy, fz); empty: straight down
  double frequency = 15;                  ///< the Ricker wavelet's peak, Hz
  std::vector<double> receivers;          ///< r x dims coordinates in metres; empty: every tenth surface node
  std::size_t absorbing = 20;             ///< sponge cells (at most a third of the smallest side)
  std::size_t halo_steps = 0;             ///< several devices: s; 0: the cost model's
  std::string split = "measured";         ///< several devices: block shares by measured copy bandwidth, or "equal"
};

/// The model of `shape` cells (nz - 1, nx - 1) or (nz - 1, ny - 1, nx - 1), slowest axis first,
/// vp, vs and rho each one value a cell; validated (wave::validate()).
wave::ElasticGrid cell_grid(double dx, const std::vector<std::size_t>& shape, std::vector<double> vp,
                            std::vector<double> vs, std::vector<double> rho);

/// Throws InvalidArgument, before anything of that size is built, unless the host's memory holds
/// a run on `nodes` (nx, nz or nx, ny, nz) in values of `value_bytes`: the model's cells (vp, vs,
/// rho in double), the system (K1's half-stored diagonals, K2, 1 / m) and the solver's vectors.
void check_wave_memory(const std::vector<std::size_t>& nodes, std::size_t value_bytes);

/// Throws Error naming the first receiver and step whose seismogram is not finite: the run
/// overflowed (a force too large for the precision) or was unstable.
template <class T>
void check_seismograms(const wave::WaveRun<T>& run);

/// The set-up of a run, the same on every rank.
struct WaveSetup {
  wave::ElasticGrid grid;
  double limit = 0, dt = 0;  ///< the stability limit and the time step
  std::size_t absorbing = 0;
  wave::GridNode source_node;
  wave::PointSource source;
  std::vector<wave::GridNode> receivers;
};

/// InvalidArgument for a source or receiver outside the grid, coordinates or a force of the wrong
/// length, a force of zero, or a source kind other than explosion and force.
WaveSetup wave_setup(wave::ElasticGrid grid, const WaveSettings& settings);

/// The split over the devices of one process: s (the settings', else the model's from the first
/// device's profile) and the blocks' shares (each device's measured copy bandwidth, or equal).
template <class T>
wave::WaveSplit local_split(const WaveSettings& settings, const std::vector<Context>& devices,
                            const wave::WaveSystem<T>& system,
                            const std::function<DeviceProfile(const Context&)>& profile_of);

/// What ziggurat.wave() tells its progress callback every few hundred steps: step, steps, seconds.
nlohmann::json to_json(const wave::WaveProgress& progress);

/// The summary of `run` on `devices` devices (the first is `device`) in `ranks` processes, halos
/// exchanged every `halo_steps` steps: device, platform, devices, ranks, halo_steps,
/// halo_steps_chosen_by, precision, dims, nx, ny, nz, dx, dt, dt_limit, steps, absorbing_cells,
/// source_kind, source_node, frequency_hz, receivers, seconds, mnodes_per_second, peak_amplitude.
template <class T>
nlohmann::json to_json(const wave::WaveRun<T>& run, const DeviceInfo& device, std::size_t devices, int ranks,
                       std::size_t halo_steps, const WaveSetup& setup, const WaveSettings& settings);

/// "x,z" or "x,y,z": the axes of a grid's coordinates.
const char* axes_text(std::size_t dims);
/// A node's indices as JSON: [ix, iz] or [ix, iy, iz].
nlohmann::json node_json(std::size_t dims, const wave::GridNode& node);

}  // namespace ziggurat::app
