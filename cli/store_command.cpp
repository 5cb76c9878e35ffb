#include "cli/store_command.h"

#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/report_error.h"
#include "store/catalog.h"
#include "store/collection_copy.h"

namespace kotae::cli {

namespace {

struct Named {
  std::string tenant, name;
};

Result<std::vector<Named>> collections_to_copy(store::Catalog& from, const StoreCopyOptions& options) {
  std::vector<Named> out;
  if (!options.collection.empty()) {
    out.push_back({options.tenant.empty() ? store::kLocalTenant : options.tenant, options.collection});
    return out;
  }
  const std::vector<std::string> tenants =
      options.tenant.empty() ? KOTAE_TRY_VALUE(from.tenants()) : std::vector<std::string>{options.tenant};
  for (const auto& tenant : tenants) {
    for (const auto& name : KOTAE_TRY_VALUE(from.names(tenant))) out.push_back({tenant, name});
  }
  return out;
}

Result<void> copy_all(const StoreCopyOptions& options) {
  auto from = KOTAE_TRY_VALUE(store::Catalog::open({options.from, options.data_dir, options.index_cache}));
  auto to = KOTAE_TRY_VALUE(store::Catalog::open({options.to, options.data_dir, options.index_cache}));
  for (const Named& c : KOTAE_TRY_VALUE(collections_to_copy(*from, options))) {
    const auto started = std::chrono::steady_clock::now();
    auto source = KOTAE_TRY_VALUE(from->open(c.tenant, c.name, nullptr));
    auto target = KOTAE_TRY_VALUE(to->open_records(c.tenant, c.name, &source->info()));
    const auto report = KOTAE_TRY_VALUE(store::copy_collection(*source, *target, [&](const store::CopyReport& so_far) {
      if (!options.json)
        std::fprintf(stderr, "\r%s/%s: %zu documents", c.tenant.c_str(), c.name.c_str(),
                     so_far.documents + so_far.skipped);
    }));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    target.reset();
    if (!to->shared()) {
      // A folder's collection keeps its vector snapshot beside it: built now, in one batch, so its first
      // open is not a rebuild. (Each replica of a shared store builds its own.)
      KOTAE_TRY(to->open(c.tenant, c.name, nullptr));
    }
    if (options.json) {
      std::printf("%s\n", nlohmann::json{{"tenant", c.tenant},
                                         {"collection", c.name},
                                         {"documents", report.documents},
                                         {"skipped", report.skipped},
                                         {"chunks", report.chunks},
                                         {"seconds", seconds},
                                         {"to", to->description()}}
                              .dump()
                              .c_str());
    } else {
      std::fprintf(stderr, "\r");
      std::printf("%s/%s: %zu documents and %zu chunks copied, %zu unchanged, in %.1f s, into %s\n", c.tenant.c_str(),
                  c.name.c_str(), report.documents, report.chunks, report.skipped, seconds, to->description().c_str());
    }
  }
  return {};
}

}  // namespace

int run_store_copy(const StoreCopyOptions& options) {
  if (auto copied = copy_all(options); !copied) return report_error(copied.error());
  return 0;
}

}  // namespace kotae::cli
