// kotae: the command line. Thin on purpose: parse flags, call the part that does the work.

#include <csignal>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <map>

#include <nlohmann/json.hpp>

#include "app/serve_command.h"
#include "app/worker_command.h"
#include "cli/ask_command.h"
#include "cli/collections_command.h"
#include "cli/doctor.h"
#include "cli/embed_command.h"
#include "cli/eval_command.h"
#include "cli/index_command.h"
#include "cli/model_command.h"
#include "cli/report_error.h"
#include "cli/search_command.h"
#include "cli/settings.h"
#include "cli/store_command.h"
#include "core/log.h"
#include "core/paths.h"
#include "platform/openmp_limit.h"
#include "store/catalog.h"

int main(int argc, char** argv) {
  kotae::platform::restart_with_one_openmp_thread(argv);  // Tesseract's OpenMP: platform/openmp_limit.h
  // A peer that went away (Redis restarted under a pooled connection) is an error to handle where it
  // is met, not the end of the process.
  std::signal(SIGPIPE, SIG_IGN);
  CLI::App app{"Kotae: fast, grounded answers from your documents"};
  app.set_version_flag("--version", std::string("kotae ") + KOTAE_VERSION);
  app.require_subcommand(1);
  app.fallthrough();  // global flags such as --data may follow the subcommand
  std::string data_dir = kotae::default_data_dir().string();
  app.add_option("--data", data_dir, "data directory (collections, models)")
      ->capture_default_str()
      ->envname("KOTAE_DATA");
  std::string store, index_cache;
  app.add_option("--store", store,
                 "where collections are: postgres://USER@HOST/DB (shared by replicas) or a folder "
                 "(default: the data directory)")
      ->envname("KOTAE_STORE");
  app.add_option("--index-cache", index_cache,
                 "with a PostgreSQL store: this machine's folder for snapshots of the "
                 "search indexes (default: DATA/index-cache)")
      ->envname("KOTAE_INDEX_CACHE");
  std::string log_level = "info";
  app.add_option("--log-level", log_level, "lowest level logged (JSON lines on stderr): debug, info, warn, error")
      ->envname("KOTAE_LOG_LEVEL")
      ->check(CLI::IsMember({"debug", "info", "warn", "error"}))
      ->capture_default_str();
  // Settings from a TOML file, under the environment and the flags (cli/settings.h).
  std::string config_file;
  app.add_option("--config", config_file,
                 "TOML settings file (default: $XDG_CONFIG_HOME/kotae/config.toml, else "
                 "/etc/kotae/config.toml); [serve] port = 8080, ...")
      ->envname("KOTAE_CONFIG");

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
  embed_cmd->add_flag("--query", embed.queries, "embed the texts as search queries (e5's and bge's query prefix)");

  kotae::cli::IndexOptions index;
  auto* index_cmd =
      app.add_subcommand("index", "add files and directories to a collection (unchanged files are skipped)");
  index_cmd->add_option("paths", index.paths, "files and directories")->required();
  index_cmd->add_option("--collection,-c", index.collection, "collection name")->required();
  index_cmd->add_option("--include", index.include, "only files matching these globs (name, or path if it has '/')");
  index_cmd->add_option("--exclude", index.exclude, "skip files matching these globs");
  index_cmd->add_option(
      "--model", index.model,
      "embedding model for a new collection (default " + std::string(kotae::kDefaultEmbeddingModel) + ")");
  index_cmd->add_option("--chunk-tokens", index.chunk_tokens, "tokens per chunk")->check(CLI::Range(16, 8192));
  auto* overlap = index_cmd->add_option("--overlap", index.overlap_tokens, "tokens shared by neighbouring chunks");
  index_cmd->add_flag("--json", index.json, "one JSON line per file, then a summary line");
  index_cmd
      ->add_option("--max-seconds-per-file", index.max_seconds_per_file,
                   "a file still loading or embedding after this long fails and the run goes on (0: no limit)")
      ->check(CLI::Range(0.0, 86400.0));
  index_cmd
      ->add_option("--ocr-languages", index.ocr_languages,
                   "Tesseract languages for scanned PDF pages and images, joined by '+' (eng+deu); \"\" for no OCR")
      ->capture_default_str();
  index_cmd->add_option("--wait", index.wait_s, "seconds to wait for another process writing the collection")
      ->capture_default_str()
      ->check(CLI::Range(0, 86400));

  kotae::cli::RemoveOptions remove;
  auto* remove_cmd = app.add_subcommand("remove", "delete documents from a collection");
  remove_cmd->add_option("documents", remove.documents, "document paths (or names) as indexed")->required();
  remove_cmd->add_option("--collection,-c", remove.collection, "collection name")->required();
  remove_cmd->add_option("--wait", remove.wait_s, "seconds to wait for another process writing the collection")
      ->capture_default_str()
      ->check(CLI::Range(0, 86400));

  kotae::cli::SearchCommandOptions search;
  auto* search_cmd = app.add_subcommand("search", "the best chunks of a collection for a query");
  search_cmd->add_option("query", search.query, "what to look for")->required();
  search_cmd->add_option("--collection,-c", search.collection, "collection name")->required();
  search_cmd->add_option("--mode", search.mode, "bm25, vector or hybrid")->capture_default_str();
  search_cmd->add_option("-k", search.k, "hits to print")->capture_default_str()->check(CLI::Range(1, 1000));
  search_cmd->add_option("--candidates", search.candidates, "hits taken from each retriever before fusion")
      ->capture_default_str();
  search_cmd->add_option("--rrf-k", search.rrf_k, "reciprocal rank fusion constant")->capture_default_str();
  search_cmd->add_option("--prefix", search.path_prefix, "only documents whose path starts with this");
  search_cmd->add_option("--type", search.formats, "only these formats (txt, md, html, pdf, docx)");
  search_cmd->add_option("--where", search.where_filter,
                         "only documents whose metadata match, e.g. 'dept = \"hr\" and year >= 2024' (docs/search.md)");
  search_cmd->add_option("--document", search.documents, "only this document id (repeatable)")
      ->check(CLI::PositiveNumber);
  search_cmd->add_option("--rerank", search.rerank_model, "cross-encoder model to rerank with");
  search_cmd->add_flag("--json", search.json, "hits as JSON");

  kotae::cli::EvalOptions eval;
  auto* eval_cmd = app.add_subcommand("eval", "retrieval quality on a BEIR-layout dataset (MRR@10, nDCG@10, recall)");
  eval_cmd->add_option("--dataset", eval.dataset, "folder with corpus.jsonl, queries.jsonl, qrels/test.tsv")
      ->required()
      ->check(CLI::ExistingDirectory);
  eval_cmd->add_option("--collection,-c", eval.collection,
                       "collection to index into (default: derived from the dataset)");
  eval_cmd->add_option("--models,--model", eval.models, "embedding models to compare (default: the default embedder)")
      ->delimiter(',');
  eval_cmd->add_option("--modes", eval.modes, "modes to evaluate")->delimiter(',')->capture_default_str();
  eval_cmd
      ->add_option("--precision", eval.precisions,
                   "fp32 and/or int8, each model at each (default: what this CPU runs, KOTAE_PRECISION)")
      ->delimiter(',');
  eval_cmd->add_option("--chunk-tokens", eval.chunk_tokens, "tokens per chunk")->check(CLI::Range(16, 8192));
  auto* eval_overlap = eval_cmd->add_option("--overlap", eval.overlap_tokens, "tokens shared by neighbouring chunks");
  eval_cmd->add_option("--candidates", eval.candidates, "chunks taken from each retriever (and ranked) per query")
      ->capture_default_str();
  eval_cmd->add_option("--rrf-k", eval.rrf_k, "reciprocal rank fusion constant")->capture_default_str();
  eval_cmd->add_option("--fusion", eval.fusion, "how hybrid mode fuses BM25 and vector lists: rrf, linear")
      ->check(CLI::IsMember({"rrf", "linear"}))
      ->capture_default_str();
  eval_cmd->add_option("--bm25-weight", eval.bm25_weight, "BM25 list's weight in the fusion")->capture_default_str();
  eval_cmd->add_option("--vector-weight", eval.vector_weight, "vector list's weight in the fusion")
      ->capture_default_str();
  eval_cmd
      ->add_option("--agreement-bonus", eval.agreement_bonus,
                   "linear fusion: a chunk both lists score above their floor counts (1 + this) times")
      ->check(CLI::Range(0.0, 10.0))
      ->capture_default_str();
  eval_cmd->add_option("--rerank", eval.rerank_model, "cross-encoder model to rerank with");
  eval_cmd->add_option("--runs", eval.runs,
                       "write each query's ranked chunks per mode here, as JSON lines "
                       "(bench/fusion_replay.py replays fusions from them)");
  eval_cmd->add_flag("--json", eval.json, "one JSON object per mode");

  kotae::cli::AskOptions ask;
  auto* ask_cmd = app.add_subcommand("ask", "a grounded answer with citations (streamed), then its sources");
  ask_cmd->add_option("question", ask.question, "the question")->required();
  ask_cmd->add_option("--collection,-c", ask.collection, "collection name")->required();
  ask_cmd
      ->add_option("--backend", ask.backend.order,
                   "back-ends to try in order: llama, openai, extractive "
                   "(default: those configured, then extractive)")
      ->delimiter(',');
  ask_cmd->add_option("--model", ask.backend.model,
                      "installed GGUF model for the llama back-end (kotae model add FILE --name NAME)");
  ask_cmd->add_option("--chat-template", ask.backend.chat_template,
                      "llama.cpp built-in chat template (default: the model's own)");
  ask_cmd->add_option("--context", ask.backend.context, "context tokens of the generator")
      ->capture_default_str()
      ->check(CLI::Range(256, 1 << 20));
  ask_cmd->add_option("--threads", ask.backend.threads, "generation threads (0: all cores)")->capture_default_str();
  ask_cmd
      ->add_option("--gpu-layers", ask.backend.gpu_layers,
                   "generator layers on the GPU (-1: all, 0: none; needs llama.cpp built by scripts/setup --cuda)")
      ->capture_default_str();
  ask_cmd->add_option("--openai-url", ask.backend.openai_url,
                      "OpenAI-compatible server, up to /v1 (e.g. http://127.0.0.1:8080/v1)");
  ask_cmd->add_option("--openai-model", ask.backend.openai_model, "model name to send to the server");
  ask_cmd->add_option("--openai-key-env", ask.openai_key_env, "environment variable holding the API key")
      ->capture_default_str();
  ask_cmd->add_option("--timeout-ms", ask.backend.openai_timeout_ms, "server request timeout")->capture_default_str();
  ask_cmd->add_option("--max-tokens", ask.max_tokens, "longest answer")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 16));
  ask_cmd->add_option("--temperature", ask.temperature, "sampling temperature (0: greedy)")->capture_default_str();
  ask_cmd->add_option("--top-p", ask.top_p, "nucleus sampling")->capture_default_str();
  ask_cmd->add_option("--seed", ask.seed, "sampling seed (default: random)");
  ask_cmd->add_option("--stop", ask.stop, "stop sequences");
  ask_cmd->add_option("-k", ask.k, "sources to retrieve")->capture_default_str()->check(CLI::Range(1, 100));
  ask_cmd->add_option("--mode", ask.mode, "bm25, vector or hybrid retrieval")->capture_default_str();
  ask_cmd->add_option("--rerank", ask.rerank_model, "cross-encoder model to rerank with");
  ask_cmd->add_option("--where", ask.where_filter,
                      "only documents whose metadata match, e.g. 'dept = \"hr\" and year >= 2024' (docs/search.md)");
  ask_cmd->add_option("--document", ask.documents, "only this document id (repeatable)")->check(CLI::PositiveNumber);
  ask_cmd
      ->add_option("--min-relevance", ask.min_relevance,
                   "below this question-source cosine the documents do not cover the question")
      ->capture_default_str();
  ask_cmd->add_flag("--json", ask.json, "one JSON object: answer, backend, citations, sources, timings_ms");

  kotae::app::ServeOptions serve;
  auto* serve_cmd = kotae::app::add_serve_command(app, serve);
  kotae::app::WorkerOptions worker;
  auto* worker_cmd = kotae::app::add_worker_command(app, worker);
  kotae::app::KeygenOptions keygen;
  auto* keygen_cmd = app.add_subcommand(
      "keygen", "a new API key for kotae serve: its entry for the --api-keys file, or stored with --store");
  keygen_cmd->add_option("--tenant", keygen.tenant, "the tenant whose collections the key sees")->capture_default_str();
  keygen_cmd->add_option("--name", keygen.name, "the key's name in logs and limits (default: the tenant)");
  keygen_cmd->add_flag("--admin", keygen.admin, "may read /metrics and act for any tenant");
  keygen_cmd
      ->add_option("--role", keygen.role,
                   "its role over its tenant's collections: reader, editor, owner or admin (the tenant's admin)")
      ->capture_default_str();
  keygen_cmd->add_option("--rate", keygen.rate, "requests per second (0: unlimited)");
  keygen_cmd->add_option("--burst", keygen.burst, "requests at once (default: the rate)");
  keygen_cmd->add_option("--quota-jobs", keygen.queued_jobs,
                         "jobs its tenant may have queued or running (0: no limit)");
  keygen_cmd->add_option("--quota-bytes", keygen.stored_bytes, "bytes its tenant's collections may take (0: no limit)");
  keygen_cmd->add_option("--quota-documents", keygen.documents, "documents its tenant may keep (0: no limit)");

  kotae::cli::StoreCopyOptions store_copy;
  auto* store_cmd = app.add_subcommand("store", "move collections between stores (docs/scale-out.md)");
  store_cmd->require_subcommand(1);
  auto* store_copy_cmd =
      store_cmd->add_subcommand("copy", "copy collections with their embeddings (nothing is embedded again)");
  store_copy_cmd->add_option("--from", store_copy.from, "a data directory, or postgres://USER@HOST/DB")->required();
  store_copy_cmd->add_option("--to", store_copy.to, "a data directory, or postgres://USER@HOST/DB")->required();
  store_copy_cmd->add_option("--tenant", store_copy.tenant, "only this tenant's collections (default: every tenant's)");
  store_copy_cmd->add_option("--collection,-c", store_copy.collection, "only this collection");
  store_copy_cmd->add_flag("--json", store_copy.json, "one JSON line per collection");

  kotae::cli::ModelCommandOptions model;
  auto* model_cmd = app.add_subcommand("model", "check installed models, and sign them (see docs/models.md)");
  model_cmd->require_subcommand(1);
  auto* model_verify =
      model_cmd->add_subcommand("verify", "run every integrity check on an installed model (exit 1: refused)");
  model_verify->add_option("name", model.name, "model name (a folder in DATA/models)")->required();
  model_verify->add_flag("--json", model.json, "one JSON object");
  auto* model_sign = model_cmd->add_subcommand("sign", "add an Ed25519 signature to an installed model's manifest");
  model_sign->add_option("name", model.name, "model name (a folder in DATA/models)")->required();
  model_sign->add_option("--key", model.key, "secret key file (from kotae model keygen)")->required();
  auto* model_keygen = model_cmd->add_subcommand("keygen", "a new Ed25519 key pair for signing models");
  model_keygen->add_option("--out", model.out, "writes OUT.key (secret, mode 0600) and OUT.pub")->required();
  model_keygen->add_option("--comment", model.comment, "text after the public key (default: OUT's name)");
  auto* model_add = model_cmd->add_subcommand("add", "install a GGUF file as a generator model, with its manifest");
  model_add->add_option("file", model.file, "the .gguf file")->required();
  model_add->add_option("--name", model.name, "the model's name (its folder in DATA/models)")->required();
  model_add->add_option("--description", model.description, "a line for the manifest");

  kotae::cli::CollectionsOptions collections;
  auto* collections_cmd = app.add_subcommand("collections", "list, show and delete collections");
  collections_cmd->require_subcommand(1);
  auto* collections_list =
      collections_cmd->add_subcommand("list", "every collection: documents, chunks, bytes, embedder");
  auto* collections_show = collections_cmd->add_subcommand("show", "one collection: its settings and documents");
  auto* collections_delete = collections_cmd->add_subcommand("delete", "delete a collection and its files");
  for (auto* sub : {collections_list, collections_show})
    sub->add_flag("--json", collections.json, "JSON (list: one object per line)");
  for (auto* sub : {collections_show, collections_delete})
    sub->add_option("name", collections.name, "the collection")->required();
  collections_delete->add_option("--wait", collections.wait_s, "seconds to wait for a writer (kotae index) to finish")
      ->capture_default_str();
  bool models_json = false;
  auto* models_cmd = app.add_subcommand("models", "list installed models");
  models_cmd->require_subcommand(1);
  auto* models_list = models_cmd->add_subcommand("list", "every installed model: kind, precision, description");
  models_list->add_flag("--json", models_json, "one JSON object per model");

  kotae::app::ServeOptions shown;
  bool config_json = false;
  auto* config_cmd = app.add_subcommand("config", "the settings in effect");
  config_cmd->require_subcommand(1);
  auto* config_show = config_cmd->add_subcommand("show",
                                                 "every setting of kotae serve with its value and where it came from "
                                                 "(default, file, env, flag); takes serve's flags");
  kotae::app::add_serve_options(*config_show, shown);
  config_show->add_flag("--json", config_json, "one JSON object per setting");

  // Exit codes, as report_error gives them: a usage error is 2 too, not CLI11's own numbers.
  app.footer(
      "Exit codes: 0 done; 1 a check failed (kotae model verify, kotae doctor); 2 a usage error or a request "
      "that cannot be met (unknown flag or collection, bad value); 3 the work failed (I/O, database, model).");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);  // prints the message
    return 2;
  }
  if (serve_cmd->parsed() || worker_cmd->parsed())
    kotae::cli::report_errors_as_log_lines();  // their stderr is JSON lines
  auto settings = kotae::cli::read_settings_file(config_file);
  if (!settings) return kotae::cli::report_error(settings.error());
  if (*settings) {
    std::map<std::string, CLI::App*> sections;
    for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) sections[sub->get_name()] = sub;
    if (config_show->parsed()) sections["serve"] = config_show;  // it shows what serve would run with
    if (auto applied = kotae::cli::apply_settings_file(app, sections, **settings); !applied) {
      return kotae::cli::report_error(applied.error());
    }
  }
  kotae::set_log_level(*kotae::parse_log_level(log_level));
  const kotae::store::CatalogOptions where{store, data_dir, index_cache};

  if (doctor->parsed()) return kotae::cli::run_doctor(data_dir, doctor_json);
  if (collections_cmd->parsed()) {
    collections.where = where;
    if (collections_list->parsed()) return kotae::cli::run_collections_list(collections);
    if (collections_show->parsed()) return kotae::cli::run_collections_show(collections);
    return kotae::cli::run_collections_delete(collections);
  }
  if (models_cmd->parsed()) return kotae::cli::run_models_list(data_dir, models_json);
  if (config_cmd->parsed()) {
    const std::vector<std::string> arguments(argv + 1, argv + argc);
    auto rows = kotae::cli::effective_settings(app, "", arguments, *settings, {"version", "config"});
    for (auto& row : kotae::cli::effective_settings(*config_show, "serve", arguments, *settings, {"json"}))
      rows.push_back(std::move(row));
    for (const auto& row : rows) {
      const std::string name = row.section.empty() ? row.name : row.section + "." + row.name;
      if (config_json) {
        std::printf("%s\n", nlohmann::json{{"setting", name},
                                           {"value", row.value},
                                           {"source", row.source},
                                           {"env", row.env},
                                           {"description", row.description},
                                           {"list", row.list}}
                                .dump()
                                .c_str());
      } else {
        std::printf("%-34s %-36s %s\n", name.c_str(), row.value.c_str(), row.source.c_str());
      }
    }
    return 0;
  }
  if (embed_cmd->parsed()) {
    embed.data_dir = data_dir;
    return kotae::cli::run_embed(embed);
  }
  if (index_cmd->parsed()) {
    index.where = where;
    index.overlap_given = overlap->count() > 0;
    return kotae::cli::run_index(index);
  }
  if (remove_cmd->parsed()) {
    remove.where = where;
    return kotae::cli::run_remove(remove);
  }
  if (search_cmd->parsed()) {
    search.where = where;
    return kotae::cli::run_search(search);
  }
  if (eval_cmd->parsed()) {
    eval.where = where;
    eval.overlap_given = eval_overlap->count() > 0;
    return kotae::cli::run_eval(eval);
  }
  if (ask_cmd->parsed()) {
    ask.where = where;
    return kotae::cli::run_ask(ask);
  }
  if (keygen_cmd->parsed()) {
    keygen.store = store;
    return kotae::app::run_keygen(keygen);
  }
  if (store_copy_cmd->parsed()) {
    store_copy.data_dir = data_dir;
    store_copy.index_cache = index_cache;
    return kotae::cli::run_store_copy(store_copy);
  }
  if (model_cmd->parsed()) {
    model.data_dir = data_dir;
    if (model_verify->parsed()) return kotae::cli::run_model_verify(model);
    if (model_sign->parsed()) return kotae::cli::run_model_sign(model);
    if (model_keygen->parsed()) return kotae::cli::run_model_keygen(model);
    if (model_add->parsed()) return kotae::cli::run_model_add(model);
  }
  if (serve_cmd->parsed()) {
    serve.server.models.data_dir = data_dir;
    serve.server.models.backends.data_dir = data_dir;
    serve.server.store = where;
    return kotae::app::run_serve(std::move(serve));
  }
  if (worker_cmd->parsed()) {
    worker.where = where;
    return kotae::app::run_worker(std::move(worker));
  }
  return 1;
}
