// Engine::Collect: one subscriber's candidates, with hysteresis,
// and how they differ from what it saw (see interest.h).
#include <algorithm>
#include <bit>

#include "interest/engine.h"

namespace tessera::interest::internal {
namespace {

constexpr size_t kNoWord = ~size_t{0};

}  // namespace

template <bool kListHits>
size_t Engine::Mark(const Area& area, const uint64_t* was, uint64_t* now) {
  const double ax = area.x, ay = area.y;
  const double r = area.radius;
  const double outer = r + static_cast<double>(config_.margin);
  // The squared distance allowed: radius, or radius + margin if seen.
  const double limit2[2] = {r * r, outer * outer};
  const float* const xs = grid_.xs();
  const float* const ys = grid_.ys();
  const uint32_t* const ranks = grid_.ranks();
  uint32_t* const hits = hits_.data();
  size_t count = 0;
  for (const Run& run : runs_) {
    const uint32_t end = run.end;
    for (uint32_t k = run.begin; k < end; ++k) {
      const double dx = static_cast<double>(xs[k]) - ax;
      const double dy = static_cast<double>(ys[k]) - ay;
      const double d2 = dx * dx + dy * dy;
      const uint32_t rank = ranks[k];
      const uint64_t seen = (was[rank / 64] >> (rank % 64)) & 1;
      const uint64_t keep = d2 <= limit2[seen];
      now[rank / 64] |= keep << (rank % 64);
      if constexpr (kListHits) hits[count] = rank;
      count += keep;
    }
  }
  return count;
}

void Engine::Collect(const Subscriber& subscriber,
                     std::span<const uint64_t> previous,
                     std::vector<uint64_t>& candidates) {
  const std::span<const uint32_t> remap = entities_.remap();
  const std::span<const uint64_t> previous_ids = entities_.previous_ids();
  const std::span<const uint64_t> ids = entities_.ids();
  // Outputs are written through raw pointers into room made beforehand.
  uint64_t* dropped =
      dropped_.Open(std::min(previous.size() / 2 * 64, previous_ids.size()));
  if (!subscriber.area) {
    for (size_t k = 0; k < previous.size(); k += 2) {
      for (uint64_t bits = previous[k + 1]; bits != 0; bits &= bits - 1) {
        *dropped++ = previous_ids[previous[k] * 64 + std::countr_zero(bits)];
      }
    }
    dropped_.Close(dropped);
    candidates.clear();
    entered_.Close(entered_.Open(0));
    new_states().Close(new_states().Open(0));
    return;
  }

  // was: the entities it saw, as a bitmap of current ranks (previous ranks
  // map to ascending current ones, so each word is written once).
  uint64_t* const was = was_bits_.data();
  uint64_t* const now = cand_bits_.data();
  uint32_t* const touched = was_words_.data();
  size_t n_touched = 0;
  if (entities_.same_as_previous()) {
    for (size_t k = 0; k < previous.size(); k += 2) {
      was[previous[k]] = previous[k + 1];
      touched[n_touched++] = static_cast<uint32_t>(previous[k]);
    }
  } else {
    size_t word = kNoWord;
    uint64_t acc = 0;
    for (size_t k = 0; k < previous.size(); k += 2) {
      for (uint64_t bits = previous[k + 1]; bits != 0; bits &= bits - 1) {
        const size_t p = previous[k] * 64 + std::countr_zero(bits);
        const uint32_t rank = remap[p];
        if (rank == EntityTable::kGone) {
          *dropped++ = previous_ids[p];  // removed, or its id reused
          continue;
        }
        if (rank / 64 != word) {
          if (word != kNoWord) was[word] = acc;
          word = rank / 64;
          touched[n_touched++] = static_cast<uint32_t>(word);
          acc = 0;
        }
        acc |= uint64_t{1} << (rank % 64);
      }
    }
    if (word != kNoWord) was[word] = acc;
  }

  const Area& area = *subscriber.area;
  const double outer =
      static_cast<double>(area.radius) + static_cast<double>(config_.margin);
  const size_t checked = grid_.Query(area.x, area.y, outer, runs_);
  const size_t words = (entities_.size() + 63) / 64;
  // How the bitmaps are read back: the words in use (few entities, fewer
  // candidates), every word (many candidates), or sorted hits (few among
  // many entities). The first and last need the hits listed.
  const bool few_words = words <= 64 && checked < 2 * words;
  const bool scan = !few_words && words <= 4 * (checked + previous.size());
  const size_t count =
      scan ? Mark<false>(area, was, now) : Mark<true>(area, was, now);
  uint32_t* const hits = hits_.data();

  // Candidates in rank (= id) order; with was: the new state, entered and
  // dropped. Both bitmaps end all zero.
  // Written in place: the subscriber's view's memory, likely in cache.
  candidates.resize(count);
  uint64_t* cand = candidates.data();
  uint64_t* entered = entered_.Open(count);
  uint64_t* state = new_states().Open(2 * std::min(count, words));
  // One word of both bitmaps: its candidates, the new state, entered and
  // dropped (and clears it).
  auto emit = [&](size_t w) {
    const uint64_t c = now[w];
    const uint64_t p = was[w];
    now[w] = 0;
    was[w] = 0;
    const uint64_t* const base = ids.data() + w * 64;
    if (c != 0) {
      *state++ = w;
      *state++ = c;
      for (uint64_t bits = c; bits != 0; bits &= bits - 1) {
        *cand++ = base[std::countr_zero(bits)];
      }
    }
    if (c == p) return;  // the usual case: no change in this word
    for (uint64_t bits = c & ~p; bits != 0; bits &= bits - 1) {
      *entered++ = base[std::countr_zero(bits)];
    }
    for (uint64_t bits = p & ~c; bits != 0; bits &= bits - 1) {
      *dropped++ = base[std::countr_zero(bits)];
    }
  };
  if (few_words) {
    // Few entities, fewer candidates: visit the words in use only.
    uint64_t in_use = 0;
    for (size_t k = 0; k < count; ++k) in_use |= uint64_t{1} << (hits[k] / 64);
    for (size_t t = 0; t < n_touched; ++t) in_use |= uint64_t{1} << touched[t];
    for (; in_use != 0; in_use &= in_use - 1) emit(std::countr_zero(in_use));
  } else if (scan) {
    // Many candidates: scan both bitmaps.
    for (size_t w = 0; w < words; ++w) {
      if ((now[w] | was[w]) != 0) emit(w);
    }
  } else {
    // Few candidates among many entities: sort them instead.
    std::sort(hits, hits + count);
    size_t word = kNoWord;
    for (size_t k = 0; k < count; ++k) {
      const uint32_t rank = hits[k];
      *cand++ = ids[rank];
      if (((was[rank / 64] >> (rank % 64)) & 1) == 0) *entered++ = ids[rank];
      if (rank / 64 != word) {
        word = rank / 64;
        *state++ = word;
        *state++ = now[word];
      }
    }
    for (size_t t = 0; t < n_touched; ++t) {
      const uint32_t w = touched[t];
      for (uint64_t bits = was[w] & ~now[w]; bits != 0; bits &= bits - 1) {
        *dropped++ = ids[w * 64 + std::countr_zero(bits)];
      }
      was[w] = 0;
    }
    for (size_t k = 0; k < count; ++k) now[hits[k] / 64] = 0;
  }
  entered_.Close(entered);
  new_states().Close(state);
  dropped_.Close(dropped);
}

}  // namespace tessera::interest::internal
