// --cores: CPU lists parsed strictly, `big` as the fastest group sysfs reports, and pinning that
// the threads started afterwards inherit (which is how the engine's pool ends up on them).
#include <catch2/catch.hpp>

#include <thread>

#include "devices/core_selection.hpp"

using namespace trilemma::devices;

TEST_CASE("parse_core_list: numbers and ranges, sorted and unique; anything else is a usage error", "[devices]") {
  CHECK(*parse_core_list("0-3,6") == std::vector<unsigned>{0, 1, 2, 3, 6});
  CHECK(*parse_core_list("6,2,2-3") == std::vector<unsigned>{2, 3, 6});
  CHECK(*parse_core_list("5") == std::vector<unsigned>{5});
  for (const char* bad : {"", ",", "1,", "3-1", "a", "1-", "-2", "0x3", "1 2", "99999", "1-99999", "+1"}) {
    CAPTURE(bad);
    const auto r = parse_core_list(bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().kind == trilemma::ErrorKind::usage);
    CHECK(r.error().file == "--cores");
  }
}

TEST_CASE("select_cores: all, big and lists against the machine's groups", "[devices]") {
  const std::vector<CoreGroup> big_little = {{{4, 5, 6, 7}, 1024, 2.4, "Cortex-A76"}, {{0, 1, 2, 3}, 414, 1.8, "Cortex-A55"}};
  CHECK(select_cores("all", big_little)->empty());
  CHECK(*select_cores("big", big_little) == std::vector<unsigned>{4, 5, 6, 7});
  CHECK(*select_cores("0,7", big_little) == std::vector<unsigned>{0, 7});
  const auto missing = select_cores("8", big_little);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message.find("CPU 8") != std::string::npos);
  // One kind of core: big is every core, so nothing to pin.
  CHECK(select_cores("big", {{{0, 1}, 1024, 3.0, ""}})->empty());
  // No sysfs (a container without it): a list is taken as given.
  CHECK(*select_cores("3", {}) == std::vector<unsigned>{3});
}

TEST_CASE("pin_to_cores: the calling thread and the threads it starts run only there", "[devices]") {
  const auto allowed = allowed_cores();
  REQUIRE_FALSE(allowed.empty());
  std::vector<unsigned> inside, inherited;
  bool pinned = false;
  // In a thread of its own, so the test process keeps its mask.
  std::thread t([&] {
    pinned = pin_to_cores({allowed.back()}).ok();
    inside = allowed_cores();
    std::thread child([&] { inherited = allowed_cores(); });
    child.join();
  });
  t.join();
  CHECK(pinned);
  CHECK(inside == std::vector<unsigned>{allowed.back()});
  CHECK(inherited == std::vector<unsigned>{allowed.back()});
  CHECK(allowed_cores() == allowed);
  CHECK(pin_to_cores({}).ok());
  CHECK(allowed_cores() == allowed);
}
