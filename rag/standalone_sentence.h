#pragma once
// Whether a sentence of a source can stand in an extractive answer on its own. A fragment (cut from
// its head by a line break or a chunk's edge: "(which is to say, most websites).", "and so on.") or a
// clause that goes on from the sentence before ("However, ...") reads as nonsense when quoted alone;
// a sentence that only points elsewhere ("See section 12.5.") or says again what was asked answers
// nothing. These are judged on the words alone, in English.

#include <cstddef>
#include <string_view>

namespace kotae::rag {

// Ends with . ! or ? (perhaps inside closing quotes or brackets) and its brackets balance.
bool is_complete_sentence(std::string_view sentence);

// Starts where no sentence starts: with closing punctuation, a lower-case word that is not code
// (apt-get and /etc/fstab are code; "which" is not), or a conjunction or relative pronoun.
bool is_fragment(std::string_view sentence);

// Starts with a word that ties it to the sentence before: "However,", "Also", "Therefore", "Thus".
bool continues_previous(std::string_view sentence);

// Starts with a pronoun whose antecedent is in the sentence before ("It", "This", "They").
bool starts_with_anaphor(std::string_view sentence);

// Only sends the reader elsewhere: "See section 12.5.", "For more information, see ...", "If you
// have found a bug, please read the instructions ...".
bool points_elsewhere(std::string_view sentence);

// Says little beyond the question: 80% or more of its content words (stemmed, stop words left out)
// are the question's.
bool restates_question(std::string_view sentence, std::string_view question);

// How many content words (stemmed, stop words left out) of the question a sentence holds.
std::size_t shared_content_words(std::string_view sentence, std::string_view question);

}  // namespace kotae::rag
