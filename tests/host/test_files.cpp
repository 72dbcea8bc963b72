// base/files.hpp: whole-file reads and atomic writes that never replace what is not a regular file.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "ziggurat/base/error.hpp"
#include "ziggurat/base/files.hpp"

namespace fs = std::filesystem;
using namespace ziggurat;

namespace {

struct Folder {
  fs::path path = fs::temp_directory_path() / ("ziggurat-files-" + std::to_string(::getpid()));
  Folder() { fs::create_directories(path); }
  ~Folder() { fs::remove_all(path); }
};

std::string text_of(const fs::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("a write replaces a regular file whole and keeps its permissions") {
  Folder folder;
  const fs::path file = folder.path / "a.txt";
  write_file_atomically(file, "first");
  ::chmod(file.c_str(), 0600);
  write_file_atomically(file, "second");
  CHECK(text_of(file) == "second");
  struct stat status {};
  REQUIRE(::stat(file.c_str(), &status) == 0);
  CHECK((status.st_mode & 0777) == 0600);
  CHECK(std::distance(fs::directory_iterator(folder.path), fs::directory_iterator()) == 1);
}

TEST_CASE("a write through a link replaces the file it names and keeps the link") {
  Folder folder;
  write_file_atomically(folder.path / "target", "old");
  fs::create_symlink("target", folder.path / "link");
  write_file_atomically(folder.path / "link", "new");
  CHECK(fs::is_symlink(folder.path / "link"));
  CHECK(text_of(folder.path / "target") == "new");
}

TEST_CASE("a device is written in place, and a full one is an error") {
  write_file_atomically("/dev/null", "nothing");
  struct stat status {};
  REQUIRE(::stat("/dev/null", &status) == 0);
  CHECK(S_ISCHR(status.st_mode));
  CHECK_THROWS_WITH_AS(write_file_atomically("/dev/full", "more"), doctest::Contains("No space left"), IoError);
  REQUIRE(::stat("/dev/full", &status) == 0);
  CHECK(S_ISCHR(status.st_mode));
}

TEST_CASE("a FIFO receives the content and stays a FIFO") {
  Folder folder;
  const fs::path fifo = folder.path / "pipe";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::string received;
  std::thread reader([&] { received = text_of(fifo); });
  write_file_atomically(fifo, "through the pipe");
  reader.join();
  CHECK(received == "through the pipe");
  CHECK(fs::is_fifo(fifo));
}

TEST_CASE("a folder is refused for reading and writing") {
  Folder folder;
  CHECK_THROWS_WITH_AS(read_file(folder.path), doctest::Contains("Is a directory"), IoError);
  CHECK_THROWS_WITH_AS(write_file_atomically(folder.path, "x"), doctest::Contains("Is a directory"), IoError);
}

TEST_CASE("a published temporary lands at the path, and a dead process's temporaries go") {
  Folder folder;
  const fs::path out = folder.path / "out.bin";
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  const fs::path stale = out.string() + ".tmp-" + host + "-999999999-3";  // no such process
  write_file_atomically(stale, "left by a killed write");
  const fs::path temporary = temporary_beside(out);
  CHECK(temporary.parent_path() == out.parent_path());
  write_file_atomically(temporary, "done");
  publish_file(temporary, out);
  CHECK(text_of(out) == "done");
  CHECK_FALSE(fs::exists(temporary));
  CHECK_FALSE(fs::exists(stale));
  CHECK(temporary_beside("/dev/null").parent_path() == fs::temp_directory_path());
}
