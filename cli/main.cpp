// kotae: the command line. Thin on purpose: parse flags, call the part that does the work.

#include <CLI/CLI.hpp>

#include <cstdio>

#include "cli/doctor.h"
#include "cli/embed_command.h"
#include "core/paths.h"

int main(int argc, char** argv) {
  CLI::App app{"Kotae: fast, grounded answers from your documents"};
  app.set_version_flag("--version", std::string("kotae ") + KOTAE_VERSION);
  app.require_subcommand(1);
  app.fallthrough();  // global flags such as --data may follow the subcommand
  std::string data_dir = kotae::default_data_dir().string();
  app.add_option("--data", data_dir, "data directory (collections, models)")->capture_default_str();

  bool doctor_json = false;
  auto* doctor = app.add_subcommand("doctor", "check this machine, the libraries and every model");
  doctor->add_flag("--json", doctor_json, "print one JSON object");

  kotae::cli::EmbedOptions embed;
  embed.model = kotae::kDefaultEmbeddingModel;
  auto* embed_cmd = app.add_subcommand("embed", "print sentence embeddings of the given texts");
  auto* texts = embed_cmd->add_option("texts", embed.texts, "texts to embed");
  auto* input = embed_cmd->add_option("--input", embed.input, "file with one text per line")->check(CLI::ExistingFile);
  embed_cmd->callback([texts, input] {
    if (texts->count() == 0 && input->count() == 0) throw CLI::RequiredError("texts or --input");
  });
  embed_cmd->add_option("--model", embed.model, "embedding model name")->capture_default_str();
  embed_cmd->add_flag("--json", embed.json, "one JSON line per text, with the full vector");

  CLI11_PARSE(app, argc, argv);

  if (doctor->parsed()) return kotae::cli::run_doctor(data_dir, doctor_json);
  if (embed_cmd->parsed()) {
    embed.data_dir = data_dir;
    return kotae::cli::run_embed(embed);
  }
  return 1;
}
