// Output files: a regular file replaced whole, a symlink written through, a device written in
// place (replacing /dev/null with a regular file was issue 14's finding), a directory refused.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "io/atomic_write.hpp"

using namespace trilemma;
namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("trilemma-io-" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

}  // namespace

TEST_CASE("io::write_file_atomically: files, symlinks, devices and directories", "[io]") {
  TempDir d;
  const auto file = d.path / "out.txt";
  REQUIRE(io::write_file_atomically(file, "one").ok());
  REQUIRE(io::write_file_atomically(file, "two").ok());
  CHECK(slurp(file) == "two");
  // Through a symlink: the link stays, the file it names changes.
  const auto link = d.path / "link.txt";
  fs::create_symlink(file, link);
  REQUIRE(io::write_file_atomically(link, "three").ok());
  CHECK(fs::is_symlink(link));
  CHECK(slurp(file) == "three");
  // A device is written in place and stays a device.
  if (fs::exists("/dev/null")) {
    REQUIRE(io::write_file_atomically("/dev/null", "nothing").ok());
    CHECK(fs::is_character_file("/dev/null"));
  }
  // A directory is refused by name; nothing is left beside it.
  const auto r = io::write_file_atomically(d.path, "x");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().kind == ErrorKind::io);
  CHECK(r.error().message.find("is a directory") != std::string::npos);
  for (const auto& e : fs::directory_iterator(d.path)) CHECK(e.path().filename().string().find(".tmp.") == std::string::npos);
}
