// ziggurat.model(): what-if predictions of the explicit scheme's cost model, without a device or
// with a calibrated one's constants, as `ziggurat model` makes them.

#include <pybind11/stl.h>

#include <optional>

#include "module.hpp"
#include "ziggurat/app/cost_model.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/matrix/grid.hpp"
#include "ziggurat/tuning/cost_model.hpp"
#include "ziggurat/tuning/model_constants.hpp"
#include "ziggurat/tuning/profile_store.hpp"

namespace ziggurat::python {

namespace {

using namespace ziggurat::model;

struct ModelArguments {
  std::vector<std::size_t> extents;  // fastest first
  std::size_t steps = 0, value_bytes = 4;
  py::object device_memory, context, profile;
  std::optional<double> tau_c, tau_a;
  std::string decomposition;
  bool serial = false;
  std::optional<std::size_t> height;
};

// The model's constants: from a profile (given, or the context's device's) with tau_a and tau_c
// overridden where given, else the paper's two constants.
DeviceConstants constants_of(const ModelArguments& a, const std::optional<DeviceProfile>& profile) {
  const std::size_t dims = a.extents.size();
  for (const auto& [name, tau] : {std::pair{"tau_c", a.tau_c}, std::pair{"tau_a", a.tau_a}}) {
    if (tau && !(*tau > 0)) throw InvalidArgument(std::string(name) + " is a time in ns, > 0; not " + std::to_string(*tau));
  }
  DeviceConstants k;
  if (profile) {
    if (!a.tau_a && !profile->tau_a_ns(dims, a.value_bytes)) {
      throw InvalidArgument("the profile of " + profile->device + " has no measured compute rate for a " +
                            std::to_string(dims) + "D " + (a.value_bytes == 4 ? "float32" : "float64") +
                            " stencil: give tau_a");
    }
    k = heat_constants(*profile, dims, a.value_bytes, a.tau_a);
  } else if (!a.tau_a || !a.tau_c) {
    throw InvalidArgument("the model needs tau_c and tau_a (ns per value moved, ns per node computed), or the constants "
                          "of a calibration: give profile= or context=");
  } else {
    k = DeviceConstants::paper(*a.tau_c, *a.tau_a);
  }
  if (a.tau_c) k.set_tau_c(*a.tau_c);
  return k;
}

// The prediction, like `ziggurat model --json`'s (the keys the package documents in model()).
py::object predict(const ModelArguments& a) {
  std::optional<DeviceProfile> profile;
  std::uint64_t device_bytes = 0;
  if (!a.profile.is_none()) {
    profile = profile_of(a.profile.cast<py::dict>());
  } else if (!a.context.is_none()) {
    const Context context = context_of(a.context);
    const ReleasedGil release;
    const DeviceWork work;
    profile = load_or_calibrate(context, a.tau_a ? ProfileNeeds{} : ProfileNeeds::heat(a.extents.size(), a.value_bytes));
    device_bytes = context.device().global_mem_bytes;
  }
  const DeviceConstants k = constants_of(a, profile);
  std::uint64_t budget = device_bytes;
  if (!a.device_memory.is_none()) budget = memory_size(a.device_memory);
  if (budget == 0) throw InvalidArgument("give device_memory (e.g. '512MiB'), or a context whose device's memory to use");
  Problem problem{a.extents, a.steps, a.value_bytes};
  problem.validate();
  const Schedule schedule = a.serial ? Schedule::serial : Schedule::overlapped;
  const Budget paper = paper_budget(budget, schedule);
  Plan plan;
  if (a.decomposition == "auto") {
    plan = best_plan_auto(problem, paper, k, schedule, a.height);
  } else if (a.decomposition == "strip" || a.decomposition == "block") {
    plan = best_plan(problem, paper, k, schedule, a.decomposition == "block" ? Decomposition::block : Decomposition::strip,
                     a.height);
  } else {
    throw InvalidArgument("decomposition is 'auto', 'strip' or 'block', not '" + a.decomposition + "'");
  }
  return to_python({{"grid", a.extents},
                    {"steps", a.steps},
                    {"dtype", a.value_bytes == 4 ? "float32" : "float64"},
                    {"budget_bytes", budget},
                    {"schedule", to_string(schedule)},
                    {"constants", app::to_json(k)},
                    {"plan", app::to_json(plan)}});
}

}  // namespace

void register_model(py::module_& module) {
  module.def(
      "model",
      [](std::vector<std::size_t> extents, std::size_t steps, std::size_t value_bytes, py::object device_memory,
         std::optional<double> tau_c, std::optional<double> tau_a, py::object profile, py::object context,
         std::string decomposition, bool serial, std::optional<std::size_t> height) {
        return predict({std::move(extents), steps, value_bytes, std::move(device_memory), std::move(context),
                        std::move(profile), tau_c, tau_a, std::move(decomposition), serial, height});
      },
      py::arg("extents"), py::arg("steps"), py::arg("value_bytes"), py::arg("device_memory"), py::arg("tau_c"),
      py::arg("tau_a"), py::arg("profile"), py::arg("context"), py::arg("decomposition"), py::arg("serial"),
      py::arg("height"));
}

}  // namespace ziggurat::python
