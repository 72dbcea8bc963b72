// ziggurat: the command-line tool. Each subcommand lives in its own *_command.cpp.

#include "commands.hpp"
#include "format.hpp"
#include "log_options.hpp"
#include "program_main.hpp"
#include "ziggurat/base/version.hpp"

int main(int argc, char** argv) {
  CLI::App app{"ziggurat: grid equations and sparse products on any OpenCL device", "ziggurat"};
  app.set_version_flag("--version", ziggurat::version);
  app.require_subcommand(1);
  ziggurat::cli::add_devices_command(app);
  ziggurat::cli::add_heat_command(app);
  ziggurat::cli::add_poisson_command(app);
  ziggurat::cli::add_solve_command(app);
  ziggurat::cli::add_spmm_command(app);
  ziggurat::cli::add_modes_command(app);
  ziggurat::cli::add_wave_command(app);
  ziggurat::cli::add_calibrate_command(app);
  ziggurat::cli::add_model_command(app);
  ziggurat::cli::add_bench_command(app);
  ziggurat::cli::add_cache_command(app);
  ziggurat::cli::add_log_options(app);
  ziggurat::cli::refuse_empty_values(app);  // an empty value never stands for an absent one
  return ziggurat::cli::run_app(app, argc, argv);
}
