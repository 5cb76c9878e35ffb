#include "rag/standalone_sentence.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <string>

#include "text/porter_stemmer.h"
#include "text/stop_words.h"

namespace kotae::rag {
namespace {

constexpr std::string_view kOpeners = "\"'([`";
constexpr std::string_view kClosers = "\"')]`";
// UTF-8 curly quotes and guillemets, opening and closing.
constexpr std::string_view kCurlyOpeners[] = {"\u201C", "\u2018", "\u00AB"};
constexpr std::string_view kCurlyClosers[] = {"\u201D", "\u2019", "\u00BB"};

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view skip_openers(std::string_view s) {
  for (bool skipped = true; skipped && !s.empty();) {
    skipped = false;
    if (kOpeners.find(s.front()) != std::string_view::npos) {
      s.remove_prefix(1);
      skipped = true;
    }
    for (const std::string_view q : kCurlyOpeners) {
      if (s.starts_with(q)) {
        s.remove_prefix(q.size());
        skipped = true;
      }
    }
  }
  return s;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// The first word, lower-cased, without the punctuation that follows it ("however," -> "however").
std::string first_word(std::string_view s) {
  s = skip_openers(trim(s));
  std::size_t n = 0;
  while (n < s.size() && (std::isalnum(static_cast<unsigned char>(s[n])) || s[n] == '\'')) ++n;
  return lower(s.substr(0, n));
}

bool first_word_in(std::string_view s, std::initializer_list<std::string_view> words) {
  const std::string word = first_word(s);
  return std::find(words.begin(), words.end(), word) != words.end();
}

std::set<std::string> stemmed_content_words(std::string_view text) {
  std::set<std::string> words;
  std::string word;
  auto flush = [&] {
    if (word.size() >= 3 && !text::is_english_stop_word(word)) words.insert(text::porter_stem(word));
    word.clear();
  };
  for (const char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else {
      flush();
    }
  }
  flush();
  return words;
}

}  // namespace

bool is_complete_sentence(std::string_view sentence) {
  std::string_view s = trim(sentence);
  for (bool skipped = true; skipped && !s.empty();) {
    skipped = false;
    if (kClosers.find(s.back()) != std::string_view::npos) {
      s.remove_suffix(1);
      skipped = true;
    }
    for (const std::string_view q : kCurlyClosers) {
      if (s.ends_with(q)) {
        s.remove_suffix(q.size());
        skipped = true;
      }
    }
  }
  if (s.empty() || std::string_view(".!?").find(s.back()) == std::string_view::npos) return false;
  return std::count(sentence.begin(), sentence.end(), '(') == std::count(sentence.begin(), sentence.end(), ')') &&
         std::count(sentence.begin(), sentence.end(), '[') == std::count(sentence.begin(), sentence.end(), ']');
}

bool is_fragment(std::string_view sentence) {
  const std::string_view s = trim(sentence);
  if (s.empty()) return true;
  if (std::string_view(")]}.,;:!?").find(s.front()) != std::string_view::npos) return true;
  if (std::any_of(std::begin(kCurlyClosers), std::end(kCurlyClosers), [&](std::string_view q) {
        return s.starts_with(q) && q != "\u2019";  // U+2019 also opens nothing, but is an apostrophe
      })) {
    return true;
  }
  if (first_word_in(s, {"and", "or", "but", "nor", "which", "whom", "whose", "whereas"})) return true;
  const std::string_view body = skip_openers(s);
  if (body.empty() || !std::islower(static_cast<unsigned char>(body.front()))) return false;
  // A lower-case start is a cut clause unless the word is code: a path, a package or a command.
  const std::size_t end = body.find_first_of(" \n\t");
  std::string_view word = body.substr(0, end);
  while (!word.empty() && std::string_view(".,;:").find(word.back()) != std::string_view::npos) word.remove_suffix(1);
  return s.front() != '`' && word.find_first_of("0123456789/_.-") == std::string_view::npos;
}

bool continues_previous(std::string_view sentence) {
  return first_word_in(sentence, {"however", "also", "therefore", "thus", "hence", "otherwise", "instead",
                                  "furthermore", "moreover", "besides", "nevertheless", "consequently"}) ||
         lower(skip_openers(trim(sentence))).starts_with("in addition");
}

bool starts_with_anaphor(std::string_view sentence) {
  return first_word_in(sentence, {"it", "this", "these", "they", "those", "that", "such", "he", "she", "its", "their"});
}

bool points_elsewhere(std::string_view sentence) {
  std::string s = lower(skip_openers(trim(sentence)));
  // "If you have found a bug in Debian, please read ..." points as surely as "Please read ...".
  if (s.starts_with("if ")) {
    const std::size_t comma = s.find(", ");
    if (comma != std::string::npos) s.erase(0, comma + 2);
  }
  if (s.starts_with("please ")) s.erase(0, 7);
  for (const std::string_view pointer :
       {"see ", "see:", "refer to ", "read ", "consult ", "check out ", "look at ", "for more information",
        "for more details", "for further information", "for further details", "for additional information",
        "for detailed information", "for details", "more information ", "more details ", "details are ",
        "details can be "}) {
    if (s.starts_with(pointer)) return true;
  }
  return false;
}

bool restates_question(std::string_view sentence, std::string_view question) {
  const std::set<std::string> mine = stemmed_content_words(sentence);
  if (mine.empty()) return false;
  const std::set<std::string> asked = stemmed_content_words(question);
  const auto shared = std::count_if(mine.begin(), mine.end(), [&](const std::string& w) { return asked.contains(w); });
  return static_cast<double>(shared) >= 0.8 * static_cast<double>(mine.size());
}

std::size_t shared_content_words(std::string_view sentence, std::string_view question) {
  const std::set<std::string> mine = stemmed_content_words(sentence);
  const std::set<std::string> asked = stemmed_content_words(question);
  return static_cast<std::size_t>(
      std::count_if(mine.begin(), mine.end(), [&](const std::string& w) { return asked.contains(w); }));
}

}  // namespace kotae::rag
