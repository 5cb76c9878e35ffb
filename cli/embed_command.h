#pragma once
// `kotae embed TEXT...`: sentence vectors from an embedding model, as JSON lines or a short summary.

#include <filesystem>
#include <string>
#include <vector>

namespace kotae::cli {

struct EmbedOptions {
  std::filesystem::path data_dir;
  std::string model;
  std::vector<std::string> texts;
  std::filesystem::path input;  // one text per line, after `texts`
  bool queries = false;         // embed them as search queries (the model's query prefix), not passages
  bool json = false;
};

int run_embed(const EmbedOptions& options);

}  // namespace kotae::cli
