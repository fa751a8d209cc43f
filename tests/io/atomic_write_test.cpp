// Output files: a regular file replaced whole, a symlink written through, a device written in
// place (replacing /dev/null with a regular file was issue 14's finding), a directory refused.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "io/atomic_write.hpp"
#include "types/staged_file.hpp"

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

TEST_CASE("StagedFile: unpredictable temporary names opened exclusively; a planted symlink is never followed (reliability D17)", "[io]") {
  TempDir d;
  const auto target = d.path / "out.json";
  const auto victim = d.path / "victim.txt";
  std::ofstream(victim) << "do not touch";
  // The name every output used before: a symlink planted there must not be written through.
  fs::create_symlink(victim, d.path / ("out.json.tmp." + std::to_string(::getpid())));
  auto a = StagedFile::create(target);
  auto b = StagedFile::create(target);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(std::string(staged_temp_path(0)) != std::string(staged_temp_path(1)));  // two names, both registered
  REQUIRE(a->write("first", 5).ok());
  REQUIRE(a->commit().ok());
  CHECK(slurp(target) == "first");
  CHECK(slurp(victim) == "do not touch");
  // b is abandoned: its temporary file goes, and the slots empty.
}

TEST_CASE("io::write_files_atomically: all or none", "[io]") {
  TempDir d;
  std::ofstream(d.path / "a.txt") << "old a";
  fs::create_directory(d.path / "b.txt");  // cannot be replaced by a file
  const auto r = io::write_files_atomically({{d.path / "a.txt", "new a"}, {d.path / "b.txt", "new b"}});
  CHECK_FALSE(r.ok());
  CHECK(slurp(d.path / "a.txt") == "old a");
  for (int i = 0; i < k_max_staged; ++i) CHECK(std::string(staged_temp_path(i)).empty());
  for (const auto& e : fs::directory_iterator(d.path)) CHECK(e.path().filename().string().find(".tmp.") == std::string::npos);
}
