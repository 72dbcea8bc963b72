#include "ziggurat/base/files.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <fstream>
#include <system_error>

#include "base/system_error.hpp"
#include "ziggurat/base/error.hpp"

namespace ziggurat {

namespace {

[[noreturn]] void fail(const std::string& action, const std::filesystem::path& path, int error) {
  throw IoError("cannot " + action + " '" + path.string() + "': " + detail::system_error_text(error));
}

void write_all(int fd, const FileChunk& chunk, const std::filesystem::path& path) {
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
void sync_directory(const std::filesystem::path& directory) {
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

}  // namespace

std::vector<unsigned char> read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("open", path, errno);
  std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) fail("read", path, errno);
  return bytes;
}

void write_file_atomically(const std::filesystem::path& path, std::initializer_list<FileChunk> chunks) {
  static std::atomic<unsigned> counter{0};
  const std::filesystem::path temporary = path.string() + ".tmp-" + host_name() + "-" + std::to_string(::getpid()) +
                                          "-" + std::to_string(counter++);
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) fail("create", temporary, errno);
  bool closed = false;
  try {
    for (const auto& chunk : chunks) write_all(fd, chunk, temporary);
    if (::fsync(fd) != 0) fail("flush", temporary, errno);
    closed = true;
    if (::close(fd) != 0) fail("close", temporary, errno);
  } catch (...) {
    if (!closed) ::close(fd);
    ::unlink(temporary.c_str());
    throw;
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    fail("replace", path, error);
  }
  sync_directory(path.parent_path());
}

void write_file_atomically(const std::filesystem::path& path, std::string_view text) {
  write_file_atomically(path, {{text.data(), text.size()}});
}

}  // namespace ziggurat
