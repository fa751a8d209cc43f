// The HTML report of `trilemma plan --report` in a real browser: headless Chromium (Debian's
// chromium package, which scripts/install-deps installs) loads the page from disk, its DOM holds
// the three plots with their points, axes and labels, nothing is fetched from elsewhere, and a
// screenshot of it is a real image. Skips with a printed reason where Chromium is absent.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>

#include "run_binary.hpp"
#include "shared_data.hpp"
#include "xml_check.hpp"

namespace fs = std::filesystem;
using trilemma::testing::run_command;

namespace {

// The browser's path, or "" after printing why the test skips.
std::string chromium() {
  for (const char* p : {"/usr/bin/chromium", "/usr/bin/chromium-browser"})
    if (fs::exists(p)) return p;
  WARN("skipped: no Chromium at /usr/bin/chromium (Debian's chromium package; scripts/install-deps installs it)");
  return "";
}

// Flags for a root user on a closed network (the machine's notes): no sandbox, no GPU, and
// none of the background connections that would fail here.
std::string headless(const std::string& browser, const fs::path& profile) {
  return browser + " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking "
                   "--disable-component-update --disable-sync --hide-scrollbars --user-data-dir=" + profile.string();
}


}  // namespace

TEST_CASE("report in Chromium: the plan page loads, its DOM has the plots' points, axes and labels, and it renders", "[report]") {
  const std::string browser = chromium();
  if (browser.empty()) return;
  const fs::path dir = fs::temp_directory_path() / ("trilemma-browser-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path page = dir / "plan.html", shot = dir / "plan.png";
  const auto planned = run_command(std::string(TRILEMMA_BINARY) + " plan -m llama-3.2-1b -d snapdragon-8-gen-3 -s memory --report " +
                                   page.string() + " 2>&1");
  REQUIRE(planned.code == 0);
  // --dump-dom prints the DOM after load; stderr (console messages, failed loads) goes apart.
  const auto dom = run_command("timeout 120 " + headless(browser, dir / "profile") + " --enable-logging=stderr --v=0 --dump-dom file://" +
                               page.string() + " 2> " + (dir / "console.txt").string());
  REQUIRE(dom.code == 0);
  CHECK(trilemma::testing::count_of(dom.out, "<svg xmlns=") == 4);
  CHECK(trilemma::testing::count_of(dom.out, "<figure id=") == 4);
  CHECK(dom.out.find("class=\"chosen\"") != std::string::npos);   // the chosen plan's markers
  CHECK(dom.out.find("class=\"roof\"") != std::string::npos);     // the roofline's roofs
  CHECK(dom.out.find("class=\"frame\"") != std::string::npos);    // the axes' frame
  CHECK(dom.out.find("arithmetic intensity") != std::string::npos);
  CHECK(dom.out.find("decode tok/s") != std::string::npos);
  CHECK(dom.out.find("chosen: ") != std::string::npos);           // the text report
  std::ifstream console(dir / "console.txt");
  std::stringstream log;
  log << console.rdbuf();
  CAPTURE(log.str());
  CHECK(log.str().find("Uncaught") == std::string::npos);
  CHECK(log.str().find("ERR_FILE_NOT_FOUND") == std::string::npos);
  const auto shot_run = run_command("timeout 120 " + headless(browser, dir / "profile") + " --window-size=900,2400 --screenshot=" +
                                    shot.string() + " file://" + page.string() + " 2>/dev/null");
  CHECK(shot_run.code == 0);
  REQUIRE(fs::exists(shot));
  CHECK(fs::file_size(shot) > 20000);  // a rendered page, not an empty one
  std::ifstream png(shot, std::ios::binary);
  char magic[8] = {};
  png.read(magic, 8);
  CHECK(std::string(magic + 1, 3) == "PNG");
  std::error_code ignored;
  fs::remove_all(dir, ignored);
}

TEST_CASE("report in Chromium: the gate and verify pages load with their plots", "[report]") {
  const std::string browser = chromium();
  if (browser.empty()) return;
  const fs::path dir = fs::temp_directory_path() / ("trilemma-browser-pages-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path fixtures = fs::path(TRILEMMA_SOURCE_DIR) / "tests/gate/fixtures";
  fs::copy_file(fixtures / "ci-host.yaml", dir / "host.yaml", fs::copy_options::overwrite_existing);
  const std::string env = "TRILEMMA_HOST_PROFILE=" + (dir / "host.yaml").string() + " ";
  const auto gate = run_command(env + TRILEMMA_BINARY + " gate --budgets " + (fixtures / "ci-budgets.yaml").string() +
                                " --model qwen2.5-0.5b --model llama-3.1-8b --report " + (dir / "gate.html").string() + " 2>&1");
  CHECK(gate.code == 1);  // the example fails a budget
  const auto verify = run_command(std::string(TRILEMMA_BINARY) + " verify -m stories260k --runs 1 --prompt-tokens 16 --decode-tokens 8 --device " +
                                  (dir / "host.yaml").string() + " --report " + (dir / "verify.html").string() + " 2>&1");
  CHECK((verify.code == 0 || verify.code == 1));
  for (const auto& [page, svgs, text] : {std::tuple{"gate.html", 1, "result: FAIL"}, std::tuple{"verify.html", 3, "verify: stories260k"}}) {
    CAPTURE(page);
    const auto dom = run_command("timeout 120 " + headless(browser, dir / "profile") + " --dump-dom file://" + (dir / page).string() + " 2>/dev/null");
    REQUIRE(dom.code == 0);
    CHECK(trilemma::testing::count_of(dom.out, "<svg xmlns=") == std::size_t(svgs));
    CHECK(dom.out.find(text) != std::string::npos);
    CHECK(dom.out.find("class=\"frame\"") != std::string::npos);
  }
  std::error_code ignored;
  fs::remove_all(dir, ignored);
}

TEST_CASE("report in Chromium: the calibrate page loads with its before-and-after plots", "[report]") {
  const std::string browser = chromium();
  if (browser.empty()) return;
  const auto q4 = trilemma::testing::shared_file("fixtures/llama-bench/tinyllama-shape-q4_0.json");
  if (!fs::exists(q4)) {
    WARN("skipped: " << q4.string() << " is absent (../shared/fixtures, see ../shared/README.md)");
    return;
  }
  const fs::path dir = fs::temp_directory_path() / ("trilemma-browser-calibrate-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::copy_file(fs::path(TRILEMMA_SOURCE_DIR) / "tests/gate/fixtures/ci-host.yaml", dir / "host.yaml", fs::copy_options::overwrite_existing);
  const auto r = run_command(std::string(TRILEMMA_BINARY) + " calibrate --device " + (dir / "host.yaml").string() + " --from " + q4.string() +
                             " --out " + (dir / "fitted.yaml").string() + " --report " + (dir / "calibrate.html").string() + " 2>&1");
  CHECK((r.code == 0 || r.code == 1));
  const auto dom = run_command("timeout 120 " + headless(browser, dir / "profile") + " --dump-dom file://" + (dir / "calibrate.html").string() +
                               " 2>/dev/null");
  REQUIRE(dom.code == 0);
  CHECK(trilemma::testing::count_of(dom.out, "<svg xmlns=") == 2);  // decode and prefill results
  CHECK(dom.out.find("after calibration") != std::string::npos);
  CHECK(dom.out.find("calibrate: ") != std::string::npos);
  std::error_code ignored;
  fs::remove_all(dir, ignored);
}
