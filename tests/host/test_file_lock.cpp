// base/file_lock.hpp: processes that take one lock file run the locked part one at a time.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "../support/util.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/file_lock.hpp"

using namespace ziggurat;

namespace {

// Appends `line` to `path` in one write (O_APPEND: lines of several processes never mix).
void append(const std::filesystem::path& path, const std::string& line) {
  const int file = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT, 0644);
  if (file < 0 || ::write(file, line.data(), line.size()) != static_cast<ssize_t>(line.size())) ::_exit(2);
  ::close(file);
}

}  // namespace

TEST_CASE("processes that take one lock run the locked part one at a time, each whole") {
  test::TempDir dir;
  const auto lock = dir / "device.lock", log = dir / "log";
  constexpr int kProcesses = 4;
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      const FileLock held(lock);
      append(log, "begin " + std::to_string(p) + "\n");
      ::usleep(50000);  // long enough that the others arrive while this one holds the lock
      append(log, "end " + std::to_string(p) + "\n");
      ::_exit(0);
    }
    children.push_back(child);
  }
  for (const pid_t child : children) {
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  }
  std::ifstream in(log);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  REQUIRE(lines.size() == 2 * kProcesses);
  for (std::size_t i = 0; i < lines.size(); i += 2) {
    CHECK(lines[i].rfind("begin ", 0) == 0);
    CHECK(lines[i + 1] == "end " + lines[i].substr(6));  // the holder ended before the next began
  }
  CHECK(std::filesystem::exists(lock));  // kept, so that later processes lock the same file
}

TEST_CASE("a lock in a folder that does not exist is an IoError naming the file") {
  test::TempDir dir;
  CHECK_THROWS_WITH_AS(FileLock(dir / "missing" / "x.lock"), doctest::Contains("missing/x.lock"), IoError);
}
