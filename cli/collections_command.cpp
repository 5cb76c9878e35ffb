#include "cli/collections_command.h"

#include <chrono>
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "assembly/collection_access.h"
#include "assembly/model_files.h"
#include "cli/report_error.h"
#include "core/paths.h"
#include "core/remove_tree.h"
#include "store/record_store.h"

namespace kotae::cli {
namespace {

// One collection's summary from its records alone: no search index is loaded.
Result<nlohmann::json> summary(store::Catalog& catalog, const std::string& name, bool with_documents) {
  auto records = KOTAE_TRY_VALUE(catalog.open_records(store::kLocalTenant, name, nullptr));
  const auto documents = KOTAE_TRY_VALUE(records->documents());
  std::int64_t chunks = 0;
  nlohmann::json listed = nlohmann::json::array();
  for (const auto& d : documents) {
    chunks += d.chunk_count;
    if (with_documents) {
      listed.push_back({{"id", d.id},
                        {"path", d.path},
                        {"title", d.title},
                        {"format", d.format},
                        {"bytes", d.size},
                        {"chunks", d.chunk_count}});
    }
  }
  const auto& info = records->info();
  nlohmann::json out{{"name", name},
                     {"documents", documents.size()},
                     {"chunks", chunks},
                     {"embedder", info.embedder_id},
                     {"dimension", info.dimension},
                     {"chunk_tokens", info.chunk_tokens},
                     {"overlap_tokens", info.overlap_tokens},
                     {"bytes", KOTAE_TRY_VALUE(catalog.stored_bytes(store::kLocalTenant, name))}};
  if (with_documents) out["document_list"] = listed;
  return out;
}

Result<void> require(store::Catalog& catalog, const std::string& name) {
  if (!store::valid_collection_name(name))
    return make_error(ErrorCode::invalid_argument, "'" + name + "' is not a collection name");
  if (!KOTAE_TRY_VALUE(catalog.exists(store::kLocalTenant, name))) {
    return make_error(ErrorCode::not_found, "no collection '" + name + "' (kotae collections list shows them)");
  }
  return {};
}

int print_or_fail(const Result<nlohmann::json>& result, const std::function<void(const nlohmann::json&)>& print) {
  if (!result) return report_error(result.error());
  print(*result);
  return 0;
}

}  // namespace

int run_collections_list(const CollectionsOptions& options) {
  return print_or_fail(
      [&]() -> Result<nlohmann::json> {
        auto catalog = KOTAE_TRY_VALUE(store::Catalog::open(options.where));
        nlohmann::json all = nlohmann::json::array();
        for (const auto& name : KOTAE_TRY_VALUE(catalog->names(store::kLocalTenant)))
          all.push_back(KOTAE_TRY_VALUE(summary(*catalog, name, false)));
        return all;
      }(),
      [&](const nlohmann::json& all) {
        if (options.json) {
          for (const auto& c : all) std::cout << c.dump() << "\n";
          return;
        }
        std::printf("%-24s %10s %10s %12s  %s\n", "collection", "documents", "chunks", "bytes", "embedder");
        for (const auto& c : all) {
          std::printf("%-24s %10zu %10lld %12llu  %s\n", c["name"].get<std::string>().c_str(),
                      c["documents"].get<std::size_t>(), c["chunks"].get<long long>(),
                      c["bytes"].get<unsigned long long>(), c["embedder"].get<std::string>().c_str());
        }
      });
}

int run_collections_show(const CollectionsOptions& options) {
  return print_or_fail(
      [&]() -> Result<nlohmann::json> {
        auto catalog = KOTAE_TRY_VALUE(store::Catalog::open(options.where));
        KOTAE_TRY(require(*catalog, options.name));
        return summary(*catalog, options.name, true);
      }(),
      [&](const nlohmann::json& c) {
        if (options.json) {
          std::cout << c.dump(2) << "\n";
          return;
        }
        std::printf(
            "collection  %s\nembedder    %s (%zu dimensions)\nchunking    %zu tokens, %zu shared\ndocuments   %zu\n"
            "chunks      %lld\nbytes       %llu\n\n%6s %6s  %s\n",
            c["name"].get<std::string>().c_str(), c["embedder"].get<std::string>().c_str(),
            c["dimension"].get<std::size_t>(), c["chunk_tokens"].get<std::size_t>(),
            c["overlap_tokens"].get<std::size_t>(), c["documents"].get<std::size_t>(), c["chunks"].get<long long>(),
            c["bytes"].get<unsigned long long>(), "id", "chunks", "document");
        for (const auto& d : c["document_list"]) {
          std::printf("%6lld %6lld  %s\n", d["id"].get<long long>(), d["chunks"].get<long long>(),
                      d["path"].get<std::string>().c_str());
        }
      });
}

int run_collections_delete(const CollectionsOptions& options) {
  auto deleted = [&]() -> Result<void> {
    auto catalog = KOTAE_TRY_VALUE(store::Catalog::open(options.where));
    KOTAE_TRY(require(*catalog, options.name));
    // A writer (kotae index) finishes first; the lock's file goes with the folder.
    const auto folder = KOTAE_TRY_VALUE(catalog->folder(store::kLocalTenant, options.name));
    std::error_code ec;
    std::filesystem::create_directories(folder, ec);  // with PostgreSQL, this machine may have none yet
    auto lock =
        KOTAE_TRY_VALUE(assembly::lock_for_writing(folder, options.name, "kotae collections delete",
                                                   std::chrono::seconds(static_cast<long long>(options.wait_s))));
    KOTAE_TRY(catalog->remove(store::kLocalTenant, options.name));
    return remove_tree(folder);
  }();
  if (!deleted) return report_error(deleted.error());
  std::fprintf(stderr, "kotae: deleted collection '%s'\n", options.name.c_str());
  return 0;
}

int run_models_list(const std::filesystem::path& data_dir, bool json) {
  const nlohmann::json models = assembly::installed_model_list(data_dir);
  if (!json) std::printf("%-28s %-10s %-10s  %s\n", "model", "kind", "precision", "description");
  for (const auto& m : models) {
    if (json) {
      std::cout << m.dump() << "\n";
      continue;
    }
    const auto& full = m["description"].get_ref<const std::string&>();
    std::size_t cut = std::min<std::size_t>(full.size(), 72);
    while (cut < full.size() && cut > 0 && (static_cast<unsigned char>(full[cut]) & 0xC0) == 0x80) --cut;
    std::string description = full.substr(0, cut);  // whole UTF-8 characters
    if (cut < full.size()) description += "…";
    std::printf("%-28s %-10s %-10s  %s\n", m["name"].get<std::string>().c_str(), m["kind"].get<std::string>().c_str(),
                m["precision"].get<std::string>().c_str(), description.c_str());
  }
  return 0;
}

}  // namespace kotae::cli
