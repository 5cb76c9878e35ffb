#include "cli/embed_command.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <span>

#include <nlohmann/json.hpp>

#include "assembly/collection_access.h"
#include "core/paths.h"

namespace kotae::cli {
namespace {

double dot(std::span<const float> a, std::span<const float> b) {
  double sum = 0;
  for (size_t i = 0; i < a.size(); ++i) sum += double(a[i]) * b[i];
  return sum;
}

}  // namespace

int run_embed(const EmbedOptions& given) {
  using Clock = std::chrono::steady_clock;
  EmbedOptions options = given;
  if (!options.input.empty()) {
    std::ifstream in(options.input);
    if (!in) {
      std::fprintf(stderr, "kotae: cannot read %s\n", options.input.c_str());
      return 2;
    }
    for (std::string line; std::getline(in, line);) options.texts.push_back(line);
  }
  const auto load_start = Clock::now();
  auto encoder = assembly::load_encoder(options.data_dir, options.model, EncoderOptions::Precision::fp32);
  if (!encoder) {
    std::fprintf(stderr, "kotae: %s\n", encoder.error().message.c_str());
    return 2;
  }
  const auto embed_start = Clock::now();
  auto vectors = (*encoder)->embed(options.texts, options.queries ? TextRole::query : TextRole::passage);
  const auto done = Clock::now();
  if (!vectors) {
    std::fprintf(stderr, "kotae: %s\n", vectors.error().message.c_str());
    return 2;
  }
  const double load_ms = std::chrono::duration<double, std::milli>(embed_start - load_start).count();
  const double embed_ms = std::chrono::duration<double, std::milli>(done - embed_start).count();

  for (size_t i = 0; i < vectors->size(); ++i) {
    const auto v = vectors->row(i);
    const double norm = std::sqrt(dot(v, v));
    if (options.json) {
      std::cout << nlohmann::json{{"text", options.texts[i]},
                                  {"model", options.model},
                                  {"dimension", v.size()},
                                  {"norm", norm},
                                  {"embedding", vectors->row_copy(i)}}
                       .dump()
                << "\n";
    } else {
      std::printf("\"%s\"\n  %zu dimensions, norm %.6f: [", options.texts[i].c_str(), v.size(), norm);
      for (size_t d = 0; d < 6 && d < v.size(); ++d) std::printf("%s%.5f", d ? ", " : "", v[d]);
      std::printf(", ...]\n");
    }
  }
  if (!options.json) {
    for (size_t i = 1; i < vectors->size(); ++i) {
      std::printf("cosine(1, %zu) = %.4f\n", i + 1, dot(vectors->row(0), vectors->row(i)));
    }
    std::printf("model %s on %s: loaded and warmed up in %.0f ms, embedded %zu text(s) in %.1f ms\n",
                options.model.c_str(), (*encoder)->provider().c_str(), load_ms, vectors->size(), embed_ms);
  }
  return 0;
}

}  // namespace kotae::cli
