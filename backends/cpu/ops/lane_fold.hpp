#pragma once
// A run folded into 16 partial results that do not wait on each other's operations, then the
// partials into one. The compiler vectorises it, where a fold element after element waits on each
// add: a layer norm's rows of 768 summed so took 3-4 times as long as the rest of it.
#include <algorithm>
#include <cstdint>

namespace porta::detail {

// fold(fold(start, term(0)), term(1))... for an associative `fold`, in another order.
template <class T, class Term, class Fold>
[[gnu::always_inline]] inline T lane_fold(std::int64_t n, T start, Term term, Fold fold) {
  constexpr std::int64_t lanes = 16;
  T part[lanes];
  std::fill_n(part, lanes, start);
  std::int64_t i = 0;
  for (; i + lanes <= n; i += lanes)
    for (std::int64_t l = 0; l < lanes; ++l) part[l] = fold(part[l], term(i + l));
  T result = start;
  for (; i < n; ++i) result = fold(result, term(i));
  for (const T p : part) result = fold(result, p);
  return result;
}

}  // namespace porta::detail
