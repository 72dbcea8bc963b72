// `ziggurat bench ...`: runs the benchmarks, `ziggurat-bench ...`, an optional component installed
// beside the tool (libexec/ziggurat/), so that the tool itself links no benchmark peer.

#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "commands.hpp"
#include "program_main.hpp"
#include "ziggurat/base/error.hpp"

namespace ziggurat::cli {

namespace {

[[noreturn]] void run_benchmarks(const std::vector<std::string>& arguments) {
  const std::filesystem::path bench = executable_folder() / ZIGGURAT_BENCH_FROM_TOOL;
  std::error_code error;
  if (!std::filesystem::is_regular_file(bench, error)) {
    throw UnsupportedFeature("the benchmarks are an optional component, not installed here (no " + bench.string() +
                             "): build ziggurat with -DZIGGURAT_BUILD_BENCH=ON (it needs ViennaCL) and install "
                             "them with `cmake --install BUILD --component bench`");
  }
  std::vector<char*> argv{const_cast<char*>(bench.c_str())};
  for (const std::string& argument : arguments) argv.push_back(const_cast<char*>(argument.c_str()));
  argv.push_back(nullptr);
  ::execv(bench.c_str(), argv.data());
  throw IoError("cannot run " + bench.string() + ": " + std::generic_category().message(errno));
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto* command = app.add_subcommand("bench", "Benchmarks beside their peers and the physical limits: heat, spmm, solve, "
                                              "ebe, wave, long-vector, poisson, build (runs ziggurat-bench; `ziggurat bench --help` lists them)");
  command->prefix_command();
  command->set_help_flag();  // --help goes to ziggurat-bench
  command->callback([command] { run_benchmarks(command->remaining()); });
}

}  // namespace ziggurat::cli
