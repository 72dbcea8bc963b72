// ziggurat-bench: the measurements that go into the committed benchmark tables (bench/results/),
// each beside its peers and the device's physical limits. An optional component of its own: it
// links the benchmark peers (ViennaCL), which the library and the `ziggurat` tool must not.
// `ziggurat bench ...` runs it.
//   heat   the heat solver's modes beside their peers and the physical limits (bench_heat.cpp)
//   spmm   sparse products beside ViennaCL, cuSPARSE and the traffic limit (bench_spmm.cpp)
//   solve  preconditioned Krylov solvers beside ViennaCL, cuSPARSE, SciPy and the bandwidth bound
//          (bench_solve.cpp)
//   poisson  the Jacobi Poisson solver in and out of core beside the streaming limit and its models
//            (bench_poisson.cpp)
//   modes  the element-by-element projection and the subspace-iteration eigen-solve beside the CPU,
//          the assembled route, PyTorch/CuPy, SciPy and the roofline (bench_ebe.cpp; alias ebe)
//   long-vector  the long-vector algorithm over grid sizes beside model (1) (bench_long_vector.cpp)
//   build  program build time with a cold and a warm binary cache (bench_build.cpp)

#include <memory>

#include "bench.hpp"
#include "program_main.hpp"
#include "ziggurat/base/version.hpp"

int main(int argc, char** argv) {
  using namespace ziggurat::cli;
  CLI::App app{"ziggurat-bench: ziggurat beside its peers and the device's physical limits", "ziggurat-bench"};
  app.set_version_flag("--version", ziggurat::version);
  app.require_subcommand(1);

  auto heat = std::make_shared<BenchHeatOptions>();
  auto* heat_command = app.add_subcommand("heat", "Heat solver modes (in-device, incore, trivial, pyramids) beside "
                                                  "the naive kernel and the physical limits; height sweep");
  add_bench_heat_options(heat_command, *heat);
  heat_command->callback([heat] { run_bench_heat(*heat); });

  auto spmm = std::make_shared<BenchSpmmOptions>();
  auto* spmm_command = app.add_subcommand("spmm", "Sparse products (block CSR strategies, CSR) beside ViennaCL, "
                                                  "cuSPARSE and the memory-traffic limit");
  add_bench_spmm_options(spmm_command, *spmm);
  spmm_command->callback([spmm] { run_bench_spmm(*spmm); });

  auto solve = std::make_shared<BenchSolveOptions>();
  auto* solve_command = app.add_subcommand("solve", "Preconditioned Krylov solvers (every ordering and preconditioner) "
                                                    "beside ViennaCL, cuSPARSE, SciPy and the bandwidth bound");
  add_bench_solve_options(solve_command, *solve);
  solve_command->callback([solve] { run_bench_solve(*solve); });

  add_bench_ebe_command(app);
  add_bench_long_vector_command(app);
  add_bench_poisson_command(app);
  add_bench_wave_command(app);
  add_bench_build_command(app);
  return run_app(app, argc, argv);
}
