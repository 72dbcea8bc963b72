// ziggurat: the command-line tool. Each subcommand lives in its own *_command.cpp.

#include <iostream>
#include <new>

#include "commands.hpp"
#include "ziggurat/error.hpp"
#include "ziggurat/version.hpp"

int main(int argc, char** argv) {
  CLI::App app{"ziggurat: grid equations and sparse products on any OpenCL device"};
  app.set_version_flag("--version", ziggurat::version);
  app.require_subcommand(1);
  ziggurat::cli::add_devices_command(app);
  ziggurat::cli::add_heat_command(app);
  ziggurat::cli::add_spmm_command(app);
  ziggurat::cli::add_calibrate_command(app);
  ziggurat::cli::add_model_command(app);
  ziggurat::cli::add_bench_command(app);
  ziggurat::cli::add_cache_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  } catch (const ziggurat::Error& error) {
    std::cerr << "ziggurat: error: " << error.what() << "\n";
    return 1;
  } catch (const std::bad_alloc&) {
    std::cerr << "ziggurat: error: the host ran out of memory: make the problem smaller\n";
    return 1;
  } catch (const std::exception& error) {
    std::cerr << "ziggurat: internal error: " << error.what()
              << "\nPlease report this with the command line that caused it.\n";
    return 3;
  }
  return 0;
}
