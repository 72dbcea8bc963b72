#include "program_main.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <new>

#include "ziggurat/base/error.hpp"

namespace ziggurat::cli {

namespace {

// `name ARGS...` where `name` is no command of `app` (CLI11 would say "A subcommand is required").
void refuse_unknown_command(const CLI::App& app, int argc, char** argv) {
  const auto commands = app.get_subcommands([](const CLI::App*) { return true; });
  if (commands.empty() || argc < 2 || argv[1][0] == '-') return;
  std::string names;
  for (const CLI::App* command : commands) {
    if (command->check_name(argv[1])) return;  // its name or an alias
    names += (names.empty() ? "" : ", ") + command->get_name();
  }
  throw InvalidArgument("'" + std::string(argv[1]) + "' is not a command; the commands are " + names + " (" +
                        app.get_name() + " COMMAND --help tells more)");
}

// What was printed must have reached stdout: a full disk or a closed pipe is an error, not success.
int flushed(const CLI::App& app, int status) {
  std::cout.flush();
  if (std::fflush(stdout) == 0 && !std::ferror(stdout) && std::cout) return status;
  std::cerr << app.get_name() << ": error: the output could not be written to stdout: " << std::strerror(errno) << "\n";
  return kFailed;
}

}  // namespace

int run_app(CLI::App& app, int argc, char** argv) {
  try {
    refuse_unknown_command(app, argc, argv);
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    const int status = app.exit(error);  // --help and --version: 0
    return status == 0 ? flushed(app, kSucceeded) : kFailed;
  } catch (const ResultNotReached&) {
    return flushed(app, kNotReached);
  } catch (const ziggurat::Error& error) {
    std::cerr << app.get_name() << ": error: " << error.what() << "\n";
    return kFailed;
  } catch (const std::bad_alloc&) {
    std::cerr << app.get_name() << ": error: the host ran out of memory: make the problem smaller\n";
    return kFailed;
  } catch (const std::exception& error) {
    std::cerr << app.get_name() << ": internal error: " << error.what()
              << "\nPlease report this with the command line that caused it.\n";
    return kInternalError;
  }
  return flushed(app, kSucceeded);
}

std::filesystem::path executable_folder() {
  std::error_code error;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) throw IoError("cannot find the running program (/proc/self/exe): " + error.message());
  return self.parent_path();
}

}  // namespace ziggurat::cli
