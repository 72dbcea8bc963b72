#include "file_options.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>

#include "ziggurat/base/error.hpp"

namespace ziggurat::cli {

namespace {

namespace fs = std::filesystem;

std::optional<struct stat> status_of(const std::string& path) {
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0) return std::nullopt;
  return status;
}

bool writable(const fs::path& path) { return ::access(path.c_str(), W_OK) == 0; }

fs::path folder_of(const std::string& path) {
  const fs::path p(path);
  return p.has_parent_path() ? p.parent_path() : fs::path(".");
}

// What identifies a file: device and inode where it exists, else its absolute, normal path.
struct Identity {
  bool exists = false;
  dev_t device = 0;
  ino_t inode = 0;
  fs::path path;
  bool operator==(const Identity& o) const {
    return exists == o.exists && (exists ? device == o.device && inode == o.inode : path == o.path);
  }
};

Identity identity_of(const std::string& path) {
  if (const auto status = status_of(path)) return {true, status->st_dev, status->st_ino, {}};
  std::error_code error;
  fs::path normal = fs::weakly_canonical(fs::absolute(path, error), error);
  return {false, 0, 0, error ? fs::path(path).lexically_normal() : normal};
}

void check_input(const std::string& option, const std::string& path) {
  const auto status = status_of(path);
  if (!status) {
    throw InvalidArgument(option + " " + path + ": " +
                          (errno == ENOENT || errno == ENOTDIR ? "no such file" : std::strerror(errno)));
  }
  if (S_ISDIR(status->st_mode)) throw InvalidArgument(option + " " + path + " is a folder; give a file");
  if (S_ISCHR(status->st_mode) || S_ISBLK(status->st_mode))  // /dev/zero never ends, /dev/null is empty
    throw InvalidArgument(option + " " + path + " is a device; give a file (or a pipe)");
  if (::access(path.c_str(), R_OK) != 0) throw InvalidArgument(option + " " + path + " cannot be read (no permission)");
}

void check_output(const std::string& option, const std::string& path) {
  const auto status = status_of(path);
  if (status && S_ISDIR(status->st_mode)) throw InvalidArgument(option + " " + path + " is a folder; give a file name");
  if (status && !S_ISREG(status->st_mode)) {  // a device or FIFO, written in place
    if (!writable(path)) throw InvalidArgument(option + " " + path + " cannot be written (no permission)");
    return;
  }
  if (status && !writable(path))
    throw InvalidArgument(option + " " + path + " is read-only: make it writable or choose another path");
  const fs::path folder = folder_of(path);
  std::error_code error;
  if (!fs::is_directory(folder, error))
    throw InvalidArgument(option + " " + path + ": folder '" + folder.string() + "' does not exist; create it first");
  if (!writable(folder))
    throw InvalidArgument(option + " " + path + ": folder '" + folder.string() + "' is read-only; choose another");
}

void check_output_folder(const std::string& option, const std::string& path) {
  std::error_code error;
  if (!fs::is_directory(path, error))
    throw InvalidArgument(option + " " + path + " is not a folder: create it first");
  if (!writable(path)) throw InvalidArgument(option + " " + path + " is read-only: choose a folder you can write");
}

}  // namespace

CLI::Option* FileOptions::add(CLI::App* command, Entry entry, std::string& path, const std::string& help) {
  const char* type = entry.kind == Kind::output_folder ? "DIR" : entry.suffixes.size() > 1 ? "PREFIX" : "FILE";
  const std::string name = entry.option;
  entries_.push_back(std::move(entry));
  return command->add_option(name, path, help)
      ->check(CLI::Validator([](std::string& text) { return text.empty() ? "the path is empty" : ""; }, type));
}

CLI::Option* FileOptions::add_input(CLI::App* command, const std::string& name, std::string& path,
                                    const std::string& help, std::vector<std::string> words) {
  return add(command, {name, &path, Kind::input, {""}, std::move(words)}, path, help);
}

CLI::Option* FileOptions::add_output(CLI::App* command, const std::string& name, std::string& path,
                                     const std::string& help) {
  return add(command, {name, &path, Kind::output, {""}, {}}, path, help);
}

CLI::Option* FileOptions::add_output_prefix(CLI::App* command, const std::string& name, std::string& prefix,
                                            std::vector<std::string> suffixes, const std::string& help) {
  return add(command, {name, &prefix, Kind::output, std::move(suffixes), {}}, prefix, help);
}

CLI::Option* FileOptions::add_output_folder(CLI::App* command, const std::string& name, std::string& path,
                                            const std::string& help) {
  return add(command, {name, &path, Kind::output_folder, {""}, {}}, path, help);
}

void FileOptions::check() const {
  struct Given {
    const Entry* entry;
    std::string path;
  };
  std::vector<Given> given;
  for (const Entry& e : entries_)
    if (!e.path->empty() && std::find(e.words.begin(), e.words.end(), *e.path) == e.words.end())
      for (const std::string& suffix : e.suffixes) given.push_back({&e, *e.path + suffix});
  for (const Given& g : given) {
    const std::string& option = g.entry->option;
    if (g.entry->kind == Kind::input) {
      check_input(option, g.path);
    } else if (g.entry->kind == Kind::output) {
      check_output(option, g.path);
    } else {
      check_output_folder(option, g.path);
    }
  }
  // Each output file against every other path: devices and FIFOs (/dev/null twice) may repeat.
  for (const Given& out : given) {
    const auto status = status_of(out.path);
    if (out.entry->kind != Kind::output || (status && !S_ISREG(status->st_mode))) continue;
    const Identity id = identity_of(out.path);
    for (const Given& other : given) {
      if (&other == &out || other.entry->kind == Kind::output_folder || !(identity_of(other.path) == id)) continue;
      if (other.entry->kind == Kind::input)
        throw InvalidArgument(out.entry->option + " " + out.path + " is the " + other.entry->option + " file: ziggurat "
                              "never overwrites its input; choose another output path");
      throw InvalidArgument(out.entry->option + " and " + other.entry->option + " name the same file (" + out.path +
                            "): give each output its own path");
    }
  }
}

}  // namespace ziggurat::cli
