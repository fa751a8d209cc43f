#include <catch2/catch.hpp>

#include <set>

#include "types/deployment.hpp"

using namespace trilemma;

TEST_CASE("types::kv_strategies: each row's positions, resident share, text and checks, hand-computed", "[types]") {
  DeploymentConfig c;
  c.kv_params.sliding = {100, 4}, c.kv_params.offload.resident_fraction = 0.25;
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
  CHECK(sliding.params[0].get(c) == 100);
  CHECK(sliding.params[1].key == "sinks");
  // Offload holds everything and keeps its resident share in fast memory.
  const auto& offload = info(KvStrategy::offload);
  CHECK(offload.held(c, 5000) == 5000);
  CHECK(offload.resident_share(c) == 0.25);
  REQUIRE(offload.params.size() == 1);
  CHECK(offload.params[0].key == "kv_resident_fraction");
  CHECK(offload.params[0].get(c) == 0.25);

  c.weights = WeightFormat::q4_0, c.kv_type = TensorType::q8_0, c.context = 4096;
  c.kv_strategy = KvStrategy::sliding;
  CHECK(describe(c) == "q4_0 / kv q8_0 sliding 100+4 / cpu / ctx 4096");
  c.kv_strategy = KvStrategy::offload;
  CHECK(describe(c) == "q4_0 / kv q8_0 offload 25% resident / cpu / ctx 4096");
  c.kv_strategy = KvStrategy::paged;
  CHECK(describe(c) == "q4_0 / kv q8_0 paged / cpu / ctx 4096");
  CHECK(validate_config(c).empty());
  c.kv_params.offload.resident_fraction = 0;  // ignored by every strategy but offload
  CHECK(validate_config(c).empty());
  c.kv_strategy = KvStrategy::offload;
  CHECK(validate_config(c) == "kv_resident_fraction: must be in (0, 1]");
  c.kv_strategy = KvStrategy::sliding, c.kv_params.sliding.window = 0;
  CHECK(validate_config(c) == "window: a sliding window keeps at least 1 position");
}

TEST_CASE("types::kv_strategy_names, draft_kind_names: the tables' names, as help and errors list them", "[types]") {
  CHECK(kv_strategy_names() == "contiguous, paged, sliding, offload");
  CHECK(draft_kind_names() == "none, model, self, layers");
  CHECK(draft_kind_names(false) == "model, self, layers");
}

TEST_CASE("types::kv_strategies: the parameters' pins, grids and engine flags, and what eviction does, hand-checked", "[types]") {
  // Keys and flags are unique across strategies: plan documents and plan's pins name a
  // parameter without its strategy.
  std::set<std::string_view> keys, flags;
  for (const auto& row : kv_strategies())
    for (const auto& p : row.params) {
      CHECK(keys.insert(p.key).second);
      CHECK(flags.insert(p.flag).second);
      CHECK(p.flag.starts_with("--"));
      // get and set reach the member the key names.
      DeploymentConfig c;
      c.kv_strategy = row.strategy;
      p.set(c, p.whole ? 7 : 0.5);
      CHECK(p.get(c) == (p.whole ? 7 : 0.5));
      // Every value the solver searches is one validate_config accepts.
      for (double v : p.searched) {
        p.set(c, v);
        CHECK(info(row.strategy).validate_params(c).empty());
      }
    }
  CHECK(keys == std::set<std::string_view>{"window", "sinks", "kv_resident_fraction"});
  // Only the one-buffer strategy runs on fixed-shape graphs.
  for (const auto& row : kv_strategies()) CHECK(row.fixed_shapes == (row.strategy == KvStrategy::contiguous));

  DeploymentConfig c;
  c.context = 4096, c.kv_params.sliding = {2048, 4}, c.kv_params.offload.resident_fraction = 0.25;
  const auto& sliding = info(KvStrategy::sliding);
  CHECK(sliding.attention_loss(c) == AttentionLoss::evicts_keeping_sinks);
  c.kv_params.sliding.sinks = 3;
  CHECK(sliding.attention_loss(c) == AttentionLoss::evicts_without_sinks);
  c.kv_params.sliding.window = 4093;  // window + sinks cover the context: nothing evicted
  CHECK(sliding.attention_loss(c) == AttentionLoss::none);
  CHECK(sliding.worth_searching(c));
  c.kv_params.sliding.window = 4096;
  CHECK_FALSE(sliding.worth_searching(c));
  CHECK(sliding.engine_flags(c, 1e9) == " --window 4096 --sinks 3");
  // 1 GiB of K/V, a quarter resident: 256 MiB.
  CHECK(info(KvStrategy::offload).engine_flags(c, 1073741824.0) == " --kv-resident-mib 256.000000");
  CHECK(info(KvStrategy::offload).attention_loss(c) == AttentionLoss::none);
  CHECK(info(KvStrategy::contiguous).engine_flags(c, 1e9).empty());
  CHECK(info(KvStrategy::paged).worth_searching == nullptr);
}
