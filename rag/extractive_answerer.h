#pragma once
// The extractive back-end: no language model, so it cannot invent anything. It takes the sentences
// of the retrieved (and reranked) chunks, ranks them by the similarity of their vectors to the
// question's, picks a few by maximal marginal relevance (relevant, and unlike those already picked),
// and answers with them in document order, each cited with its exact bytes. Only sentences that can
// stand alone are used (rag/standalone_sentence.h): a fragment is joined with the sentence it was cut
// from or left out, and pointers elsewhere and restatements of the question are left out; the answer
// has no sentence on a pronoun without the sentence before it that names what it means. A table's row
// answers whole, under its table's header.

#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

#include "rag/citations.h"
#include "rag/source.h"
#include "store/sentence_vectors.h"

namespace kotae::rag {

struct ExtractiveOptions {
  std::size_t max_sentences = 3;
  double relevance_weight = 0.7;  // MMR's lambda: 1 ranks by similarity alone
  double relative_floor = 0.8;    // sentences below this fraction of the best similarity are not used
  std::size_t min_bytes = 16;     // shorter sentences (numbering, headings' fragments) are not used
  // A table row is a record found by its key cells' words ("Tuesday", a ship's name), which a vector
  // hardly tells apart from its neighbours': each of the question's content words in a row adds this
  // to the row's similarity.
  double row_word_weight = 0.1;
};

// sentences[i] holds the sentences of sources[i] (spans in its text, unit vectors); `question` is
// the question's text and `question_vector` its unit vector.
CitedAnswer extract_answer(std::string_view question, std::span<const float> question_vector,
                           std::span<const Source> sources,
                           std::span<const std::vector<store::SentenceVector>> sentences,
                           const ExtractiveOptions& options = {});

}  // namespace kotae::rag
