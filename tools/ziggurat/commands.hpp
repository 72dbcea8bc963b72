#pragma once
// The subcommands of the `ziggurat` tool; each registers its options and its action.

#include <CLI/CLI.hpp>

namespace ziggurat::cli {

void add_devices_command(CLI::App& app);
void add_heat_command(CLI::App& app);
void add_poisson_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_cache_command(CLI::App& app);
void add_calibrate_command(CLI::App& app);
void add_model_command(CLI::App& app);
void add_modes_command(CLI::App& app);
void add_solve_command(CLI::App& app);
void add_spmm_command(CLI::App& app);
void add_wave_command(CLI::App& app);

}  // namespace ziggurat::cli
