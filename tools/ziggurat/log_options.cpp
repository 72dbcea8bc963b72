#include "log_options.hpp"

#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

#include "ziggurat/base/log.hpp"

namespace ziggurat::cli {

namespace {

struct LogOptions {
  std::size_t verbose = 0;  // -v: info, -vv: debug
  std::string level;        // --log-level
};

LogLevel chosen_level(const LogOptions& o) {
  if (!o.level.empty()) return parse_log_level(o.level);
  if (o.verbose > 0) return o.verbose > 1 ? LogLevel::debug : LogLevel::info;
  const char* variable = std::getenv("ZIGGURAT_LOG_LEVEL");
  if (variable != nullptr && *variable != '\0') return parse_log_level(variable);
  return LogLevel::warning;
}

void add_to(CLI::App* command, LogOptions& o) {
  command->add_flag("-v,--verbose", o.verbose, "Log what the library decides on stderr (-vv: more)");
  command->add_option("--log-level", o.level, "debug, info, warning, error or off (default: ZIGGURAT_LOG_LEVEL, "
                                              "else warning)");
}

}  // namespace

void add_log_options(CLI::App& app) {
  auto options = std::make_shared<LogOptions>();
  add_to(&app, *options);
  // Not on a command that passes its arguments on to another program (bench): they are that program's.
  for (CLI::App* command : app.get_subcommands([](const CLI::App* c) { return !c->get_prefix_command(); }))
    add_to(command, *options);
  app.parse_complete_callback([options] {
    set_log_sink([](LogLevel level, std::string_view source, std::string_view message) {
      std::cerr << "ziggurat: " << to_string(level) << ": " << source << ": " << message << std::endl;
    }, chosen_level(*options));
  });
}

}  // namespace ziggurat::cli
