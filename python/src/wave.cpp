// ziggurat.wave(): explicit FEM elastic waves on one device or several, as `ziggurat wave` runs
// them: the same set-up, split and summary (app/wave_run.hpp). The seismograms come back
// as a NumPy array that owns the solver's result: no copy.

#include <pybind11/stl.h>

#include "module.hpp"
#include "ziggurat/app/devices.hpp"
#include "ziggurat/app/output_files.hpp"
#include "ziggurat/app/run_profile.hpp"
#include "ziggurat/app/wave_run.hpp"

namespace ziggurat::python {

namespace {

struct WaveArguments {
  double dx = 0;
  std::size_t steps = 0;
  app::WaveSettings settings;
  py::object devices, progress, context;
  std::string vtk;  // the last step's displacement as a .vti; empty: none
};

std::vector<double> cells(const py::handle& values, const char* what) {
  const auto array = real_array<double>(values, what);
  return std::vector<double>(array.data(), array.data() + array.size());
}

template <class T>
py::tuple run(const py::handle& vp, const py::handle& vs, const py::handle& rho, const WaveArguments& a) {
  const auto shape_of = py::array::ensure(vp);
  const std::vector<std::size_t> shape(shape_of.shape(), shape_of.shape() + shape_of.ndim());
  std::vector<std::size_t> nodes;
  for (auto cells = shape.rbegin(); cells != shape.rend(); ++cells) nodes.push_back(*cells + 1);
  app::check_wave_memory(nodes, sizeof(T));  // the system is built from the cells
  wave::ElasticGrid grid = app::cell_grid(a.dx, shape, cells(vp, "vp"), cells(vs, "vs"), cells(rho, "rho"));
  const std::vector<Context> devices =
      a.devices.is_none() ? std::vector<Context>{context_of(a.context)} : app::contexts_on(a.devices.cast<std::string>());
  const std::size_t dims = grid.dims;
  app::WaveSetup w;
  std::size_t halo_steps = 1;
  wave::WaveRun<T> r;
  {
    const ReleasedGil release;
    const DeviceWork work;
    w = app::wave_setup(std::move(grid), a.settings);
    wave::WaveSystem<T> system = wave::wave_system<T>(w.grid, w.dt, {w.absorbing});
    const wave::WaveSplit split = app::local_split(a.settings, devices, system, [](const Context& device) {
      return app::planning_profile(device, std::nullopt, ProfileNeeds{}).profile;
    });
    halo_steps = split.halo_steps;
    wave::WaveSolver<T> solver(devices, std::move(system), w.source, a.settings.frequency, w.receivers, split);
    // Always a hook, so that Ctrl-C stops the run after the steps it interrupted.
    r = solver.run(a.steps, [&a](const wave::WaveProgress& p) {
      report_progress(a.progress, [&] { return app::to_json(p); });
    });
    if (!a.vtk.empty()) app::write_displacement_vtk(a.vtk, w.grid, solver.current().data());
  }
  app::check_seismograms(r);
  const py::object report =
      to_python(app::to_json(r, devices.front().device(), devices.size(), 1, halo_steps, w, a.settings));
  const std::vector<py::ssize_t> seismogram_shape{py::ssize_t(r.receivers), py::ssize_t(r.steps), py::ssize_t(dims)};
  return py::make_tuple(array_owning(std::move(r.seismograms), seismogram_shape), report);
}

}  // namespace

void register_wave(py::module_& module) {
  module.def(
      "wave",
      [](const py::object& vp, const py::object& vs, const py::object& rho, double dx, std::size_t steps, double dt,
         std::vector<double> source, const std::string& source_kind, std::vector<double> force, double frequency,
         std::vector<double> receivers, std::size_t absorbing, const std::string& dtype, py::object devices,
         std::size_t halo_steps, const std::string& split, py::object progress, py::object context, std::string vtk) {
        WaveArguments a{dx, steps, {}, std::move(devices), std::move(progress), std::move(context), std::move(vtk)};
        a.settings = {dt, std::move(source), source_kind, std::move(force), frequency, std::move(receivers),
                      absorbing, halo_steps, split};
        return dtype == "float64" ? run<double>(vp, vs, rho, a) : run<float>(vp, vs, rho, a);
      },
      py::arg("vp"), py::arg("vs"), py::arg("rho"), py::arg("dx"), py::arg("steps"), py::arg("dt"), py::arg("source"),
      py::arg("source_kind"), py::arg("force"), py::arg("frequency"), py::arg("receivers"), py::arg("absorbing"),
      py::arg("dtype"), py::arg("devices"), py::arg("halo_steps"), py::arg("split"), py::arg("progress"),
      py::arg("context"), py::arg("vtk"), "Elastic waves: the checked arguments of ziggurat.wave().");
}

}  // namespace ziggurat::python
