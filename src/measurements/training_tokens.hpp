// How many tokens each model family was pre-trained on (data/measurements/training-tokens.csv;
// schema in data/measurements/README.md), by family and parameter range, each row with its
// source. The accuracy model reads it: the more tokens per parameter a model was trained on,
// the more quantization costs it (Llama-1/2 lose a third of what Llama-3 loses at one format).
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "types/result.hpp"

namespace trilemma::measurements {

struct TrainingTokens {
  std::string family;
  double params_min_b = 0, params_max_b = 0;  // [min, max) total parameters, billions
  std::optional<double> tokens;               // pre-training tokens; nullopt: not published
  double released = 0;                        // release date as a fractional year (2023-09 = 2023.67)
  std::string source_url, locator;
  std::size_t line = 0;
};

Result<std::vector<TrainingTokens>> parse_training_tokens_csv(const std::string& text, const std::string& file);

// The built-in table, or the file at `path`.
Result<std::vector<TrainingTokens>> load_training_tokens(const std::string& path = "");

// The row for `family` whose range holds `params_b`; nullptr when none does.
const TrainingTokens* find_training_tokens(const std::vector<TrainingTokens>& table, std::string_view family,
                                           double params_b);

// Pre-training tokens of the row, published or, where the publisher never said (Mistral,
// Mixtral), imputed from its release date by a least-squares line of ln(tokens) on the date over
// the rows that did: the field's token budgets grew about 3x a year from 2023 to 2025.
struct TokenEstimate {
  double tokens = 0;
  bool imputed = false;
};
std::optional<TokenEstimate> training_tokens_of(const std::vector<TrainingTokens>& table, std::string_view family,
                                                double params_b);

}  // namespace trilemma::measurements
