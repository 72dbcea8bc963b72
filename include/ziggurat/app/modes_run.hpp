#pragma once
// What `ziggurat modes` and ziggurat.modes() share: the model (a generated brick cantilever or the
// user's element matrices), the subspace iteration's settings with this device's choices, and the
// run's summary (to_json: the CLI prints it as --json, the Python module returns it as its report).

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "ziggurat/base/context.hpp"
#include "ziggurat/matrix/elements.hpp"
#include "ziggurat/matrix/hex_mesh.hpp"
#include "ziggurat/solver/subspace_iteration.hpp"

namespace ziggurat::app {

/// The solver's settings as the user gives them (text where the CLI takes text).
struct ModesSettings {
  std::size_t modes = 10;
  std::size_t vectors = 0;  ///< 0: min(2p, p + 8)
  double tolerance = 0;     ///< 0: the precision's default
  std::size_t max_iterations = 100;
  double solve_tolerance = 0;
  std::string cg_operator = "assembled";
  std::string preconditioner = "auto";  ///< auto: ilu0 on the assembled K, block-jacobi matrix-free
  std::string ordering = "colours";
  std::string scatter = "auto";  ///< auto: the faster on this device, measured once and recorded
  std::string projection = "auto";  ///< the projection's layout; auto as scatter
  std::size_t batch_elements = 0;
  std::size_t block_size = 3;
  bool deflation = true;
};

/// K and M, generated or given; a generated model keeps its geometry (for a picture).
template <class T>
struct ModesModel {
  std::optional<fem::ElasticModel<T>> generated;
  fem::ElementSet<T> stiffness, mass;  ///< given elements (empty for a generated model)
  std::string description;
  const fem::ElementSet<T>& k() const { return generated ? generated->stiffness : stiffness; }
  const fem::ElementSet<T>& m() const { return generated ? generated->mass : mass; }
};

/// "cantilever:LxWxH:nx,ny,nz" clamped at x = 0, of `material` ("E,nu,rho"), lumped or consistent
/// mass. InvalidArgument for another mesh text.
template <class T>
ModesModel<T> cantilever_model(const std::string& mesh, const std::string& material, bool lumped);

/// The user's elements; without `mass`, the identity (the standard problem K phi = lambda phi).
template <class T>
ModesModel<T> element_model(fem::ElementSet<T> stiffness, std::optional<fem::ElementSet<T>> mass, std::string description);

/// The subspace iteration's options: `settings` parsed, the preconditioner, scatter and projection
/// layout chosen where they are auto. A bad name is InvalidArgument ending with `names`, the
/// caller's names of the five text settings (the CLI's options, the Python keywords).
template <class T>
fem::SubspaceOptions subspace_options(const Context& context, const ModesSettings& settings,
                                      const fem::ElementSet<T>& stiffness, const char* names);

/// What ziggurat.modes() tells its progress callback after each iteration: iteration, change (inf
/// at the first), cg_iterations.
nlohmann::json to_json(const fem::SubspaceProgress& progress);

/// The run's summary, `result` of `model` on `context`'s device with `settings` made `options`:
/// device, platform, driver, model, dofs, elements, element_size, precision, modes, vectors,
/// scatter, projection_layout, projection_factored, batch_elements, cg_operator, preconditioner,
/// product_kernel, deflation, ordering, converged, reason, iterations, cg_iterations, eigenvalues,
/// frequencies_hz, residuals, changes, times_s, and cg_not_converged when a CG solve stopped short.
template <class T>
nlohmann::json to_json(const fem::SubspaceResult<T>& result, const Context& context, const ModesSettings& settings,
                       const ModesModel<T>& model, const fem::SubspaceOptions& options);

}  // namespace ziggurat::app
