// SolverSettings: a Krylov solve's settings by name, checked once, as the library's options.

#include "ziggurat/app/solver_settings.hpp"

#include <charconv>
#include <cmath>
#include <optional>

#include "ziggurat/app/product_kernel.hpp"
#include "ziggurat/base/error.hpp"

namespace ziggurat::app {

namespace {

std::string number(double value) {
  std::string text = std::to_string(value);
  return std::isfinite(value) ? text : (std::isnan(value) ? "nan" : value > 0 ? "inf" : "-inf");
}

// More Jacobi sweeps than a solve has levels change nothing; this many is a mistake.
constexpr std::size_t kMostJacobiSweeps = 100000;

void require(bool ok, const std::string& problem) {
  if (!ok) throw InvalidArgument(problem);
}

// "auto" (none: chosen from the factors) or a whole number of sweeps.
std::optional<std::size_t> jacobi_sweeps(const std::string& text) {
  if (text == "auto") return std::nullopt;
  std::size_t sweeps = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), sweeps);
  require(error == std::errc{} && end == text.data() + text.size() && !text.empty() && sweeps <= kMostJacobiSweeps,
          "jacobi_sweeps (sweep jacobi's sweeps a triangular solve) is auto or 0 to " +
              std::to_string(kMostJacobiSweeps) + ", not '" + text + "'");
  return sweeps;
}

}  // namespace

void check_solver_settings(const SolverSettings& s) {
  sparse::parse_krylov_method(s.method);
  sparse::parse_preconditioner(s.preconditioner);
  sparse::parse_ordering(s.ordering);
  sparse::parse_triangular_sweep(s.sweep);
  sparse::parse_static_pivoting(s.static_pivoting);
  require(s.rtol >= 0 && s.atol >= 0,
          "rtol and atol are numbers >= 0, not " + number(s.rtol) + " and " + number(s.atol));
  require(s.rtol > 0 || s.atol > 0, "rtol and atol are both 0: only an exact solution would stop the solve; give one "
                                    "of them > 0");
  require(s.restart >= 1 && (s.restart <= 200 || s.method != "gmres"),
          "restart (GMRES(m)'s m) is 1 to 200, not " + std::to_string(s.restart));
  require(s.aggregate >= 1, "aggregate (block rows an aggregate of block-colours) is 1 or more, not 0");
  jacobi_sweeps(s.jacobi_sweeps);
  require(std::isfinite(s.threshold) && s.threshold >= 0,
          "threshold (ILU2's tau) is a finite number >= 0, not " + number(s.threshold));
  require(std::isfinite(s.shift), "shift is a finite number, not " + number(s.shift));
}

sparse::SolverOptions solver_options(const SolverSettings& s, const Context& context) {
  check_solver_settings(s);
  sparse::SolverOptions o;
  o.method = sparse::parse_krylov_method(s.method);
  o.preconditioner = sparse::parse_preconditioner(s.preconditioner);
  o.ordering = sparse::parse_ordering(s.ordering);
  o.sweep = sparse::parse_triangular_sweep(s.sweep);
  o.jacobi_sweeps = jacobi_sweeps(s.jacobi_sweeps);
  o.static_pivoting = sparse::parse_static_pivoting(s.static_pivoting);
  o.tolerance = s.rtol;
  o.absolute_tolerance = s.atol;
  o.max_iterations = s.max_iterations;
  o.restart = s.restart;
  o.aggregate = s.aggregate;
  o.threshold = s.threshold;
  o.shift = s.shift;
  o.fuse = s.fused;
  set_product_kernel(o, context, s.kernel);
  return o;
}

}  // namespace ziggurat::app
