// The built-in model catalog, loaded once per test, and a model by id (a test fails naming an
// id the catalog lacks).
#pragma once
#include <catch2/catch.hpp>

#include "models/catalog.hpp"

namespace trilemma::testing {

struct CatalogFixture {
  std::vector<models::Model> catalog = models::builtin_models().value();
  const models::Model& model(const std::string& id) {
    for (const auto& m : catalog)
      if (m.id == id) return m;
    FAIL("no model " << id);
    return catalog.front();
  }
};

}  // namespace trilemma::testing
