#include "ziggurat/base/file_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>

#include "base/system_error.hpp"
#include "ziggurat/base/error.hpp"

namespace ziggurat {

FileLock::FileLock(const std::filesystem::path& path) {
  descriptor_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (descriptor_ < 0) throw IoError("cannot open the lock file '" + path.string() + "': " + detail::system_error_text(errno));
  int status = 0;
  while ((status = ::flock(descriptor_, LOCK_EX)) != 0 && errno == EINTR) {
  }
  if (status != 0) {
    const int error = errno;
    ::close(descriptor_);
    throw IoError("cannot lock '" + path.string() + "': " + detail::system_error_text(error));
  }
}

FileLock::~FileLock() { ::close(descriptor_); }  // closing the file releases the lock

}  // namespace ziggurat
