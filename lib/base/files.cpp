#include "ziggurat/base/files.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <optional>
#include <string>

#include "base/system_error.hpp"
#include "ziggurat/base/error.hpp"

namespace ziggurat {

namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const std::string& action, const fs::path& path, int error) {
  throw IoError("cannot " + action + " '" + path.string() + "': " + detail::system_error_text(error));
}

void write_all(int fd, const FileChunk& chunk, const fs::path& path) {
  const auto* bytes = static_cast<const char*>(chunk.data);
  std::size_t left = chunk.size;
  while (left > 0) {
    const ssize_t written = ::write(fd, bytes, left);
    if (written < 0) {
      if (errno == EINTR) continue;
      fail("write", path, errno);
    }
    bytes += written;
    left -= static_cast<std::size_t>(written);
  }
}

// Makes the rename itself durable; failure here loses nothing, so it is not reported.
void sync_directory(const fs::path& directory) {
  const int fd = ::open(directory.empty() ? "." : directory.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

// Temporary names hold the host too: processes of several machines (MPI ranks) may write into
// one shared folder, and process ids repeat across machines.
std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "host";
  return name;
}

// The file a path names: symbolic links followed (at most 40, as the kernel does), so that a
// write replaces the file a link names rather than the link.
fs::path resolve_links(fs::path path) {
  for (int hop = 0; hop < 40; ++hop) {
    std::error_code error;
    if (!fs::is_symlink(fs::symlink_status(path, error))) return path;
    const fs::path target = fs::read_symlink(path, error);
    if (error) return path;
    path = target.is_absolute() ? target : path.parent_path() / target;
  }
  fail("resolve", path, ELOOP);
}

// What is at a path now: nothing, or its stat (a folder refused).
std::optional<struct stat> existing(const fs::path& path) {
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0) return std::nullopt;
  if (S_ISDIR(status.st_mode)) fail("write", path, EISDIR);
  return status;
}

bool is_regular(const std::optional<struct stat>& status) { return !status || S_ISREG(status->st_mode); }

// A device, FIFO or socket is written as it is, never replaced.
template <class Write>
void write_in_place(const fs::path& path, Write write) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) fail("open", path, errno);
  try {
    write(fd);
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (::close(fd) != 0) fail("close", path, errno);
}

// Streams the file `from` into the open file `fd` (which is `to`).
void copy_file_into(int fd, const fs::path& from, const fs::path& to) {
  const int in = ::open(from.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) fail("open", from, errno);
  unsigned char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(in, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::close(in);
      fail("read", from, error);
    }
    if (n == 0) break;
    try {
      write_all(fd, {buffer, static_cast<std::size_t>(n)}, to);
    } catch (...) {
      ::close(in);
      throw;
    }
  }
  ::close(in);
}

// Temporaries of `path` on this host whose process no longer runs (a write killed part-way).
void remove_stale_temporaries(const fs::path& path) {
  const std::string prefix = path.filename().string() + ".tmp-" + host_name() + "-";
  std::error_code error;
  const fs::path folder = path.has_parent_path() ? path.parent_path() : fs::path(".");
  for (fs::directory_iterator it(folder, fs::directory_options::skip_permission_denied, error), end;
       !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string digits = name.substr(prefix.size(), name.find('-', prefix.size()) - prefix.size());
    if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(digits));
    if (pid != ::getpid() && ::kill(pid, 0) != 0 && errno == ESRCH) ::unlink(it->path().c_str());
  }
}

// Renames a finished temporary over `target` (a regular file or nothing), durably.
void rename_over(const fs::path& temporary, const fs::path& target) {
  if (::rename(temporary.c_str(), target.c_str()) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    fail("replace", target, error);
  }
  sync_directory(target.parent_path());
  remove_stale_temporaries(target);
}

}  // namespace

std::vector<unsigned char> read_file(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("open", path, errno);
  std::vector<unsigned char> bytes;
  struct stat status {};
  int error = 0;
  if (::fstat(fd, &status) != 0) {
    error = errno;
  } else if (S_ISDIR(status.st_mode)) {
    error = EISDIR;
  } else {
    if (S_ISREG(status.st_mode)) bytes.reserve(static_cast<std::size_t>(status.st_size));
    unsigned char buffer[1 << 16];
    for (;;) {
      const ssize_t n = ::read(fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        if (n < 0) error = errno;
        break;
      }
      bytes.insert(bytes.end(), buffer, buffer + n);
    }
  }
  ::close(fd);
  if (error != 0) fail("read", path, error);
  return bytes;
}

fs::path temporary_beside(const fs::path& path) {
  static std::atomic<unsigned> counter{0};
  const fs::path target = resolve_links(path);
  struct stat status {};
  const bool in_place = ::stat(target.c_str(), &status) == 0 && !S_ISREG(status.st_mode) && !S_ISDIR(status.st_mode);
  const fs::path beside = in_place ? fs::temp_directory_path() / target.filename() : target;
  return beside.string() + ".tmp-" + host_name() + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
}

namespace {

template <class Chunks>
void write_chunks_atomically(const fs::path& path, const Chunks& chunks) {
  const fs::path target = resolve_links(path);
  const std::optional<struct stat> status = existing(target);
  if (!is_regular(status)) {
    write_in_place(target, [&](int fd) {
      for (const auto& chunk : chunks) write_all(fd, chunk, target);
    });
    return;
  }
  const fs::path temporary = temporary_beside(target);
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) fail("create", temporary, errno);
  bool closed = false;
  try {
    if (status && ::fchmod(fd, status->st_mode & 07777) != 0) fail("set the permissions of", temporary, errno);
    for (const auto& chunk : chunks) write_all(fd, chunk, temporary);
    if (::fsync(fd) != 0) fail("flush", temporary, errno);
    closed = true;
    if (::close(fd) != 0) fail("close", temporary, errno);
  } catch (...) {
    if (!closed) ::close(fd);
    ::unlink(temporary.c_str());
    throw;
  }
  rename_over(temporary, target);
}

}  // namespace

void write_file_atomically(const fs::path& path, std::initializer_list<FileChunk> chunks) {
  write_chunks_atomically(path, chunks);
}

void write_file_atomically(const fs::path& path, const std::vector<FileChunk>& chunks) {
  write_chunks_atomically(path, chunks);
}

void write_file_atomically(const fs::path& path, std::string_view text) {
  write_file_atomically(path, {{text.data(), text.size()}});
}

void publish_file(const fs::path& temporary, const fs::path& path) {
  const fs::path target = resolve_links(path);
  std::optional<struct stat> status;
  try {
    status = existing(target);
    if (!is_regular(status)) {
      write_in_place(target, [&](int fd) { copy_file_into(fd, temporary, target); });
      ::unlink(temporary.c_str());
      return;
    }
    if (status && ::chmod(temporary.c_str(), status->st_mode & 07777) != 0)
      fail("set the permissions of", temporary, errno);
  } catch (...) {
    ::unlink(temporary.c_str());
    throw;
  }
  rename_over(temporary, target);
}

}  // namespace ziggurat
