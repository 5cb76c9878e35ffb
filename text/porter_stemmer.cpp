#include "text/porter_stemmer.h"

#include <array>

namespace kotae::text {
namespace {

constexpr std::size_t kMinStemmed = 3;   // FTS5 passes shorter tokens through
constexpr std::size_t kMaxStemmed = 64;  // and longer ones (FTS5_PORTER_MAX_TOKEN)

// 'y' is a vowel after a consonant (Porter's definition); FTS5 passes "previous was a consonant".
bool is_vowel(char c, bool y_is_vowel) {
  return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u' || (y_is_vowel && c == 'y');
}

// Skips one V...C group of `stem` (given whether the letter before it was a consonant) and returns
// how many letters it took, or 0 when there is no complete group: the measure m counts these.
std::size_t skip_vowels_then_consonant(std::string_view stem, bool previous_consonant) {
  bool consonant = previous_consonant;
  std::size_t i = 0;
  for (; i < stem.size(); ++i) {
    consonant = !is_vowel(stem[i], consonant);
    if (!consonant) break;
  }
  for (++i; i < stem.size(); ++i) {
    consonant = !is_vowel(stem[i], consonant);
    if (consonant) return i + 1;
  }
  return 0;
}

bool measure_above_0(std::string_view stem) {
  return skip_vowels_then_consonant(stem, false) != 0;
}

bool measure_above_1(std::string_view stem) {
  const std::size_t first = skip_vowels_then_consonant(stem, false);
  return first != 0 && skip_vowels_then_consonant(stem.substr(first), true) != 0;
}

bool measure_is_1(std::string_view stem) {
  const std::size_t first = skip_vowels_then_consonant(stem, false);
  return first != 0 && skip_vowels_then_consonant(stem.substr(first), true) == 0;
}

// *o: ends consonant-vowel-consonant, the last not w, x or y.
bool ends_cvc(std::string_view stem) {
  if (stem.empty()) return false;
  const char last = stem.back();
  if (last == 'w' || last == 'x' || last == 'y') return false;
  unsigned pattern = 0;
  bool consonant = false;
  for (const char c : stem) {
    consonant = !is_vowel(c, consonant);
    pattern = (pattern << 1) | (consonant ? 1u : 0u);
  }
  return (pattern & 7u) == 5u;
}

// *v*: FTS5 counts 'y' as a vowel anywhere but first.
bool contains_vowel(std::string_view stem) {
  for (std::size_t i = 0; i < stem.size(); ++i) {
    if (is_vowel(stem[i], i > 0)) return true;
  }
  return false;
}

bool measure_above_1_after_s_or_t(std::string_view stem) {
  return !stem.empty() && (stem.back() == 's' || stem.back() == 't') && measure_above_1(stem);
}

using Condition = bool (*)(std::string_view stem);

struct Rule {
  std::string_view suffix;
  std::string_view replacement;
  Condition condition;
};

// Applies the first rule whose suffix ends the word (a proper suffix: something must precede it);
// a failed condition ends the step too. Returns whether a rule was applied.
template <std::size_t N>
bool apply_first(std::string& word, const std::array<Rule, N>& rules) {
  for (const Rule& rule : rules) {
    if (word.size() <= rule.suffix.size() || !std::string_view(word).ends_with(rule.suffix)) continue;
    const std::size_t stem = word.size() - rule.suffix.size();
    if (rule.condition != nullptr && !rule.condition(std::string_view(word).substr(0, stem))) return false;
    word.replace(stem, std::string::npos, rule.replacement);
    return true;
  }
  return false;
}

constexpr std::array<Rule, 21> kStep2{
    {{"ational", "ate", measure_above_0}, {"tional", "tion", measure_above_0}, {"enci", "ence", measure_above_0},
     {"anci", "ance", measure_above_0},   {"izer", "ize", measure_above_0},    {"logi", "log", measure_above_0},
     {"bli", "ble", measure_above_0},     {"alli", "al", measure_above_0},     {"entli", "ent", measure_above_0},
     {"eli", "e", measure_above_0},       {"ousli", "ous", measure_above_0},   {"ization", "ize", measure_above_0},
     {"ation", "ate", measure_above_0},   {"ator", "ate", measure_above_0},    {"alism", "al", measure_above_0},
     {"iveness", "ive", measure_above_0}, {"fulness", "ful", measure_above_0}, {"ousness", "ous", measure_above_0},
     {"aliti", "al", measure_above_0},    {"iviti", "ive", measure_above_0},   {"biliti", "ble", measure_above_0}}};
constexpr std::array<Rule, 7> kStep3{{{"ical", "ic", measure_above_0},
                                      {"ness", "", measure_above_0},
                                      {"icate", "ic", measure_above_0},
                                      {"iciti", "ic", measure_above_0},
                                      {"ful", "", measure_above_0},
                                      {"ative", "", measure_above_0},
                                      {"alize", "al", measure_above_0}}};
constexpr std::array<Rule, 19> kStep4{{{"al", "", measure_above_1},
                                       {"ance", "", measure_above_1},
                                       {"ence", "", measure_above_1},
                                       {"er", "", measure_above_1},
                                       {"ic", "", measure_above_1},
                                       {"able", "", measure_above_1},
                                       {"ible", "", measure_above_1},
                                       {"ant", "", measure_above_1},
                                       {"ement", "", measure_above_1},
                                       {"ment", "", measure_above_1},
                                       {"ent", "", measure_above_1},
                                       {"ion", "", measure_above_1_after_s_or_t},
                                       {"ou", "", measure_above_1},
                                       {"ism", "", measure_above_1},
                                       {"ate", "", measure_above_1},
                                       {"iti", "", measure_above_1},
                                       {"ous", "", measure_above_1},
                                       {"ive", "", measure_above_1},
                                       {"ize", "", measure_above_1}}};

void step_1a(std::string& word) {
  const std::size_t n = word.size();
  if (word[n - 1] != 's') return;
  if (word[n - 2] == 'e') {
    const bool sses = n > 4 && word[n - 4] == 's' && word[n - 3] == 's';
    const bool ies = n > 3 && word[n - 3] == 'i';
    word.resize(sses || ies ? n - 2 : n - 1);
  } else if (word[n - 2] != 's') {
    word.resize(n - 1);
  }
}

// "eed" → "ee" (m > 0); else "ed" or "ing" dropped after a vowel, and only then the stem is
// tidied: at/bl/iz get their e back, a doubled consonant loses one, a short cvc stem gains an e.
void step_1b(std::string& word) {
  const std::string_view view(word);
  if (view.size() > 3 && view.ends_with("eed")) {
    if (measure_above_0(view.substr(0, view.size() - 3))) word.pop_back();
    return;
  }
  std::size_t suffix = 0;
  if (view.size() > 2 && view.ends_with("ed")) {
    suffix = 2;
  } else if (view.size() > 3 && view.ends_with("ing")) {
    suffix = 3;
  }
  if (suffix == 0 || !contains_vowel(view.substr(0, view.size() - suffix))) return;
  word.erase(word.size() - suffix);
  for (const std::string_view restore : {"at", "bl", "iz"}) {
    if (word.size() > 2 && std::string_view(word).ends_with(restore)) {
      word.push_back('e');  // at → ate, bl → ble, iz → ize
      return;
    }
  }
  const char last = word.back();
  if (word.size() >= 2 && !is_vowel(last, false) && last != 'l' && last != 's' && last != 'z' &&
      last == word[word.size() - 2]) {
    word.pop_back();
  } else if (measure_is_1(word) && ends_cvc(word)) {
    word.push_back('e');
  }
}

}  // namespace

std::string porter_stem(std::string_view input) {
  std::string word(input);
  if (word.size() < kMinStemmed || word.size() > kMaxStemmed) return word;
  step_1a(word);
  step_1b(word);
  if (word.back() == 'y' && contains_vowel(std::string_view(word).substr(0, word.size() - 1))) word.back() = 'i';
  apply_first(word, kStep2);
  apply_first(word, kStep3);
  apply_first(word, kStep4);
  if (word.back() == 'e') {
    const std::string_view stem = std::string_view(word).substr(0, word.size() - 1);
    if (measure_above_1(stem) || (measure_is_1(stem) && !ends_cvc(stem))) word.pop_back();
  }
  if (word.size() > 1 && word.back() == 'l' && word[word.size() - 2] == 'l' &&
      measure_above_1(std::string_view(word).substr(0, word.size() - 1))) {
    word.pop_back();
  }
  return word;
}

}  // namespace kotae::text
