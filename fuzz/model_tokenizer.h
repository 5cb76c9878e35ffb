#pragma once
// The default embedding model's real vocabulary (all-minilm-l6-v2's tokenizer.json, which scripts/setup
// installs), loaded once per fuzzing process: KOTAE_FUZZ_TOKENIZER names another tokenizer.json.
// Missing, it stops the target with a message rather than fuzz a toy vocabulary.

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "text/wordpiece_tokenizer.h"

namespace kotae::fuzz {

inline std::filesystem::path tokenizer_path() {
  if (const char* path = std::getenv("KOTAE_FUZZ_TOKENIZER")) return path;
  std::filesystem::path data;
  if (const char* d = std::getenv("KOTAE_DATA")) {
    data = d;
  } else if (const char* xdg = std::getenv("XDG_DATA_HOME")) {
    data = std::filesystem::path(xdg) / "kotae";
  } else {
    data = std::filesystem::path(std::getenv("HOME") ? std::getenv("HOME") : "") / ".local/share/kotae";
  }
  return data / "models/all-minilm-l6-v2/tokenizer.json";
}

inline const text::WordPieceTokenizer& model_tokenizer() {
  static const text::WordPieceTokenizer tokenizer = [] {
    const auto path = tokenizer_path();
    auto loaded = text::WordPieceTokenizer::from_tokenizer_json(path);
    if (!loaded) {
      std::fprintf(stderr, "fuzz: cannot load the tokenizer %s (%s): run scripts/setup or set KOTAE_FUZZ_TOKENIZER\n",
                   path.c_str(), loaded.error().message.c_str());
      std::exit(2);
    }
    return std::move(*loaded);
  }();
  return tokenizer;
}

}  // namespace kotae::fuzz
