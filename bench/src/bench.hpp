#pragma once
// The benchmarks of `ziggurat-bench` (main.cpp), each in its own file: heat (bench_heat.cpp), spmm
// (bench_spmm.cpp), solve (bench_solve.cpp), long-vector (bench_long_vector.cpp), poisson
// (bench_poisson.cpp), ebe (bench_ebe.cpp), wave (bench_wave.cpp) and build
// (bench_build.cpp).

#include <CLI/CLI.hpp>
#include <cstddef>
#include <string>
#include <vector>

#include "file_options.hpp"

namespace ziggurat::cli {

struct BenchHeatOptions {
  FileOptions files;  // --plot, checked before any work
  std::string size2d = "32768x32768";
  std::string size3d = "512x512x4096";
  std::size_t steps = 256;
  std::size_t trivial_steps = 4;
  std::string device_mem = "512MiB";
  std::size_t sweep = 0;
  std::size_t sweep_steps = 96;
  std::string plot;
  std::string precision = "f32";
  std::string depths = "1,2,3,4,6,8,12";  // the blocked kernel's steps a launch
  std::string python = "python3";          // of the peers' script, heat_peers.py
  std::string peers = "cupy,ebisu";        // or "none"
  std::string device;
  bool json = false;
};

void add_bench_heat_options(CLI::App* command, BenchHeatOptions& options);
void run_bench_heat(const BenchHeatOptions& options);

struct BenchSpmmOptions {
  std::string grid;  // empty: by device type
  std::string blocks = "3,4,5,8";
  std::string matrices;
  std::string vectors = "1,8";
  std::string precision = "f32,f64";
  std::size_t repeat = 20;
  std::string python = "python3";
  std::string device;
  bool json = false;
};
void add_bench_spmm_options(CLI::App* command, BenchSpmmOptions& options);
void run_bench_spmm(const BenchSpmmOptions& options);

struct BenchSolveOptions {
  std::string grid;  // empty: by device type
  std::string systems;  // empty: convection,dominant; with suite, every kind
  std::string blocks = "4,5";
  std::string matrices;
  std::string precision = "f32,f64";
  double tolerance = 1e-8, tolerance_f32 = 1e-5;
  std::size_t max_iterations = 2000;
  std::string python = "python3";
  bool no_peers = false;
  std::string device;
  bool json = false;
  bool suite = false;  // the suite of systems users bring, with every ordering and sweep
  std::vector<std::size_t> jacobi_sweeps;  // the suite's rows with fixed Jacobi sweeps
};
void add_bench_solve_options(CLI::App* command, BenchSolveOptions& options);
void run_bench_solve(const BenchSolveOptions& options);

void add_bench_ebe_command(CLI::App& app);
void add_bench_long_vector_command(CLI::App& app);
void add_bench_wave_command(CLI::App& app);
void add_bench_poisson_command(CLI::App& app);
void add_bench_build_command(CLI::App& app);

}  // namespace ziggurat::cli
