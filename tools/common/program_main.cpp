#include "program_main.hpp"

#include <iostream>
#include <new>

#include "ziggurat/base/error.hpp"

namespace ziggurat::cli {

int run_app(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  } catch (const ExitStatus& exit) {
    return exit.status;
  } catch (const ziggurat::Error& error) {
    std::cerr << app.get_name() << ": error: " << error.what() << "\n";
    return 1;
  } catch (const std::bad_alloc&) {
    std::cerr << app.get_name() << ": error: the host ran out of memory: make the problem smaller\n";
    return 1;
  } catch (const std::exception& error) {
    std::cerr << app.get_name() << ": internal error: " << error.what()
              << "\nPlease report this with the command line that caused it.\n";
    return 3;
  }
  return 0;
}

std::filesystem::path executable_folder() {
  std::error_code error;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) throw IoError("cannot find the running program (/proc/self/exe): " + error.message());
  return self.parent_path();
}

}  // namespace ziggurat::cli
