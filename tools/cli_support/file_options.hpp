#pragma once
// The files a command reads and writes, registered with their options and checked together before
// any work, so that no output replaces an input or another output, and no run computes for an
// output it cannot write.

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace ziggurat::cli {

class FileOptions {
 public:
  /// Adds `name PATH` (a file the command reads) to `command`, bound to `path`; `words` are values
  /// that name no file (solve's --rhs ones).
  CLI::Option* add_input(CLI::App* command, const std::string& name, std::string& path, const std::string& help,
                         std::vector<std::string> words = {});
  /// Adds `name PATH` (a file the command writes) to `command`, bound to `path`.
  CLI::Option* add_output(CLI::App* command, const std::string& name, std::string& path, const std::string& help);
  /// Adds `name PREFIX` to `command`, bound to `prefix`: the command writes PREFIX + each suffix.
  CLI::Option* add_output_prefix(CLI::App* command, const std::string& name, std::string& prefix,
                                 std::vector<std::string> suffixes, const std::string& help);
  /// Adds `name DIR` (a folder the command writes files into) to `command`, bound to `path`.
  CLI::Option* add_output_folder(CLI::App* command, const std::string& name, std::string& path,
                                 const std::string& help);

  /// Throws InvalidArgument naming the option and the remedy when, of the paths given:
  /// - an input does not exist, cannot be read, or is a folder or a device (a pipe is read);
  /// - an output is a folder, read-only, or in a folder that is missing or read-only (an existing
  ///   device or FIFO, such as /dev/null, is written in place and needs only to be writable);
  /// - an output is an input or another output, compared by device and inode where the file
  ///   exists (links and other spellings of one file are caught), else by its absolute path;
  /// - an output folder is missing, not a folder, or read-only.
  void check() const;

 private:
  enum class Kind { input, output, output_folder };
  struct Entry {
    std::string option;
    const std::string* path;
    Kind kind;
    std::vector<std::string> suffixes;  // the files written are path + suffix
    std::vector<std::string> words;     // an input's values that name no file
  };
  CLI::Option* add(CLI::App* command, Entry entry, std::string& path, const std::string& help);

  std::vector<Entry> entries_;
};

}  // namespace ziggurat::cli
