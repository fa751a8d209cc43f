#include <catch2/catch.hpp>

#include "types/deployment.hpp"

using namespace trilemma;

TEST_CASE("types::kv_strategies: each row's positions, resident share, text and checks, hand-computed", "[types]") {
  DeploymentConfig c;
  c.window = 100, c.sinks = 4, c.kv_resident_fraction = 0.25;
  const auto& contiguous = info(KvStrategy::contiguous);
  CHECK(contiguous.held(c, 17) == 17);
  CHECK(contiguous.attended(c, 17) == 17);
  CHECK(contiguous.resident_share(c) == 1.0);
  CHECK(contiguous.params.empty());
  // Paged holds whole pages of k_kv_page_tokens but reads only the positions in use.
  const auto& paged = info(KvStrategy::paged);
  CHECK(paged.held(c, 17) == 2 * k_kv_page_tokens);
  CHECK(paged.held(c, 32) == 32);
  CHECK(paged.held(c, 0) == 0);
  CHECK(paged.attended(c, 17) == 17);
  // Sliding keeps and attends to window + sinks at most.
  const auto& sliding = info(KvStrategy::sliding);
  CHECK(sliding.held(c, 50) == 50);
  CHECK(sliding.held(c, 5000) == 104);
  CHECK(sliding.attended(c, 2048.5) == 104);
  CHECK(sliding.resident_share(c) == 1.0);
  REQUIRE(sliding.params.size() == 2);
  CHECK(sliding.params[0].key == "window");
  CHECK(c.*sliding.params[0].whole == 100);
  CHECK(sliding.params[1].key == "sinks");
  // Offload holds everything and keeps its resident share in fast memory.
  const auto& offload = info(KvStrategy::offload);
  CHECK(offload.held(c, 5000) == 5000);
  CHECK(offload.resident_share(c) == 0.25);
  REQUIRE(offload.params.size() == 1);
  CHECK(offload.params[0].key == "kv_resident_fraction");
  CHECK(c.*offload.params[0].share == 0.25);

  c.weights = WeightFormat::q4_0, c.kv_type = TensorType::q8_0, c.context = 4096;
  c.kv_strategy = KvStrategy::sliding;
  CHECK(describe(c) == "q4_0 / kv q8_0 sliding 100+4 / cpu / ctx 4096");
  c.kv_strategy = KvStrategy::offload;
  CHECK(describe(c) == "q4_0 / kv q8_0 offload 25% resident / cpu / ctx 4096");
  c.kv_strategy = KvStrategy::paged;
  CHECK(describe(c) == "q4_0 / kv q8_0 paged / cpu / ctx 4096");
  CHECK(validate_config(c).empty());
  c.kv_resident_fraction = 0;  // ignored by every strategy but offload
  CHECK(validate_config(c).empty());
  c.kv_strategy = KvStrategy::offload;
  CHECK(validate_config(c) == "kv_resident_fraction: must be in (0, 1]");
  c.kv_strategy = KvStrategy::sliding, c.window = 0;
  CHECK(validate_config(c) == "window: a sliding window keeps at least 1 position");
}

TEST_CASE("types::kv_strategy_names, draft_kind_names: the tables' names, as help and errors list them", "[types]") {
  CHECK(kv_strategy_names() == "contiguous, paged, sliding, offload");
  CHECK(draft_kind_names() == "none, model, self, layers");
  CHECK(draft_kind_names(false) == "model, self, layers");
}
