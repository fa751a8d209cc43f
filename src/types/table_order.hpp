// The compile-time check behind every enum-indexed table (tensor types, weight formats,
// backends, compute paths, KV strategies): lookups index the table by the enum, so row i must
// be enumerator i.
#pragma once
#include <cstddef>

namespace trilemma {

// True when, for every row i, the row's `key` member is enumerator i.
template <class Table, class Row, class Enum>
constexpr bool rows_in_enum_order(const Table& table, Enum Row::*key) {
  for (std::size_t i = 0; i < table.size(); ++i)
    if (static_cast<std::size_t>(table[i].*key) != i) return false;
  return true;
}

}  // namespace trilemma
