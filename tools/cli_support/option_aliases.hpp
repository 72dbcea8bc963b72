#pragma once
// Old spellings of options, kept for one version after a rename (docs/vocabulary.md lists them):
// an alias sets what the option sets, stays out of --help, and warns on stderr when it is used.

#include <CLI/CLI.hpp>
#include <string>

#include "ziggurat/base/error.hpp"

namespace ziggurat::cli {

/// Prints "warning: <old> is deprecated and goes in the next version: use <current>" on stderr.
void warn_deprecated(const std::string& old_name, const std::string& current_name);

/// Adds `old_name` to `command` as a hidden alias of the option `current` (which stores into
/// `variable`): given, it stores there too and warns; given together with `current`, it is
/// refused. Returns the alias, for the caller to add the option's checks.
template <class T>
CLI::Option* add_deprecated_alias(CLI::App* command, const CLI::Option* current, const std::string& old_name,
                                  T& variable) {
  return command->add_option(old_name, variable)->group("")->each([current, old_name](const std::string&) {
    if (current->count() > 0)
      throw InvalidArgument(old_name + " is the old spelling of " + current->get_name() + ": give one of the two");
    warn_deprecated(old_name, current->get_name());
  });
}

}  // namespace ziggurat::cli
