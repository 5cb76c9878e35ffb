// kotae-bench-ingest: what reading documents costs and how well scans read. For each born-digital PDF
// given, every page (or the first --pages) is rendered by poppler at each --dpi, as it is and as a
// mildly noisy, skewed scan (Gaussian noise, a small rotation), written as a PNG by Leptonica, and
// read back through Kotae's image loader (Tesseract). The character error rate compares the OCR'd
// text with the PDF's own text layer (both with whitespace collapsed; Levenshtein distance over the
// layer's length). Then the loaders' throughput on the files given with --throughput. JSON lines.

#include <leptonica/allheaders.h>
#include <poppler-document.h>
#include <poppler-image.h>
#include <poppler-page-renderer.h>
#include <poppler-page.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "text/loaders/loader.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Whitespace collapsed to single spaces, trimmed.
std::string collapsed(const std::string& text) {
  std::string out;
  bool space = false;
  for (const char c : text) {
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

// Levenshtein distance between two byte strings (one row at a time).
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

struct Gray {
  std::vector<std::uint8_t> pixels;
  int width = 0, height = 0;
};

Gray render(poppler::document& pdf, int index, double dpi) {
  std::unique_ptr<poppler::page> page(pdf.create_page(index));
  poppler::page_renderer renderer;
  renderer.set_render_hint(poppler::page_renderer::antialiasing, true);
  renderer.set_render_hint(poppler::page_renderer::text_antialiasing, true);
  const poppler::image image = renderer.render_page(page.get(), dpi, dpi);
  Gray out{std::vector<std::uint8_t>(static_cast<std::size_t>(image.width()) * image.height()), image.width(),
           image.height()};
  for (int y = 0; y < out.height; ++y) {
    const auto* row = reinterpret_cast<const unsigned char*>(image.const_data()) + y * image.bytes_per_row();
    for (int x = 0; x < out.width; ++x) {
      const unsigned char* p = row + 4 * x;
      out.pixels[static_cast<std::size_t>(y) * out.width + x] =
          static_cast<std::uint8_t>((p[2] * 299 + p[1] * 587 + p[0] * 114) / 1000);
    }
  }
  return out;
}

// A mild scan: rotated by `degrees` about the centre (bilinear, white outside) and Gaussian noise.
Gray scanned(const Gray& page, double degrees, double noise, std::mt19937& rng) {
  Gray out{std::vector<std::uint8_t>(page.pixels.size()), page.width, page.height};
  const double angle = degrees * M_PI / 180, c = std::cos(angle), s = std::sin(angle);
  const double cx = page.width / 2.0, cy = page.height / 2.0;
  std::normal_distribution<double> jitter(0, noise);
  for (int y = 0; y < page.height; ++y) {
    for (int x = 0; x < page.width; ++x) {
      const double sx = c * (x - cx) + s * (y - cy) + cx, sy = -s * (x - cx) + c * (y - cy) + cy;
      const int x0 = static_cast<int>(std::floor(sx)), y0 = static_cast<int>(std::floor(sy));
      const double fx = sx - x0, fy = sy - y0;
      const auto at = [&](int px, int py) -> double {
        if (px < 0 || py < 0 || px >= page.width || py >= page.height) return 255;
        return page.pixels[static_cast<std::size_t>(py) * page.width + px];
      };
      const double v = (1 - fy) * ((1 - fx) * at(x0, y0) + fx * at(x0 + 1, y0)) +
                       fy * ((1 - fx) * at(x0, y0 + 1) + fx * at(x0 + 1, y0 + 1)) + jitter(rng);
      out.pixels[static_cast<std::size_t>(y) * page.width + x] = static_cast<std::uint8_t>(std::clamp(v, 0.0, 255.0));
    }
  }
  return out;
}

std::string png_of(const Gray& gray, int dpi) {
  PIX* pix = pixCreate(gray.width, gray.height, 8);
  pixSetResolution(pix, dpi, dpi);
  l_uint32* data = pixGetData(pix);
  const int wpl = pixGetWpl(pix);
  for (int y = 0; y < gray.height; ++y) {
    for (int x = 0; x < gray.width; ++x) SET_DATA_BYTE(data + y * wpl, x, gray.pixels[y * gray.width + x]);
  }
  l_uint8* bytes = nullptr;
  size_t size = 0;
  pixWriteMem(&bytes, &size, pix, IFF_PNG);
  pixDestroy(&pix);
  std::string out(reinterpret_cast<const char*>(bytes), size);
  lept_free(bytes);
  return out;
}

std::string page_text(const kotae::text::Document& doc, std::uint32_t page) {
  std::string text;
  for (const auto& s : doc.segments) {
    if (s.page == page) text += doc.text.substr(s.begin, s.end - s.begin) + "\n";
  }
  return text;
}

}  // namespace

// The cells of a Markdown table row as DocumentBuilder writes it: "| a | | b |".
std::vector<std::string> markdown_cells(std::string_view row) {
  std::vector<std::string> cells;
  if (row.size() < 2) return cells;
  row = row.substr(1, row.size() - 2);
  for (std::size_t begin = 0;;) {
    std::size_t end = begin;
    while (end < row.size() && !(row[end] == '|' && (end == 0 || row[end - 1] != '\\'))) ++end;
    std::string cell(row.substr(begin, end - begin));
    cell.erase(0, cell.find_first_not_of(' '));
    cell.erase(cell.find_last_not_of(' ') + 1);
    cells.push_back(cell);
    if (end >= row.size()) return cells;
    begin = end + 1;
  }
}

using Table = std::vector<std::vector<std::string>>;  // rows of cells, the header first

// The largest table on each page of `doc` (its "| --- |" line left out), by page.
std::map<std::uint32_t, Table> tables_by_page(const kotae::text::Document& doc) {
  std::map<std::uint32_t, Table> largest;
  Table table;
  std::size_t current = SIZE_MAX;
  std::uint32_t page = 0;
  const auto keep = [&] {
    if (table.size() > largest[page].size()) largest[page] = table;
    table.clear();
  };
  for (const auto& segment : doc.segments) {
    if (!segment.in_table()) continue;
    if (segment.table_begin != current) keep();
    current = segment.table_begin;
    page = segment.page;
    const std::string_view text = std::string_view(doc.text).substr(segment.begin, segment.end - segment.begin);
    table.push_back(markdown_cells(text.substr(0, text.find('\n'))));
  }
  keep();
  return largest;
}

// Cell accuracy of the tables found in a PDF against the cells they were printed from (table k on
// page k): the share of the known cells found in the same row and column of the largest table found
// on their page (a table not found, or found in pieces, loses the cells it misses).
nlohmann::json table_accuracy(const std::string& pdf_path, const std::string& truth_path) {
  const auto truth = nlohmann::json::parse(read_file(truth_path));
  auto doc = kotae::text::load_document_bytes(read_file(pdf_path), "pdf");
  if (!doc) return {{"name", "pdf_tables"}, {"error", doc.error().message}};
  auto found = tables_by_page(*doc);
  std::size_t cells = 0, right = 0, whole = 0, pages_with_tables = 0;
  for (const auto& [page, table] : found) pages_with_tables += !table.empty();
  for (std::size_t t = 0; t < truth.size(); ++t) {
    bool all = true;
    const Table& got = found[static_cast<std::uint32_t>(t + 1)];
    for (std::size_t r = 0; r < truth[t].size(); ++r) {
      for (std::size_t c = 0; c < truth[t][r].size(); ++c) {
        const std::string want = truth[t][r][c];
        const bool ok = r < got.size() && c < got[r].size() && got[r][c] == want;
        ++cells;
        right += ok;
        all = all && ok;
      }
    }
    whole += all;
  }
  return {{"name", "pdf_tables"},
          {"tables", truth.size()},
          {"pages_with_a_table", pages_with_tables},
          {"tables_exact", whole},
          {"cells", cells},
          {"cell_accuracy", static_cast<double>(right) / static_cast<double>(std::max<std::size_t>(1, cells))},
          {"target_cell_accuracy", 0.95}};
}

int main(int argc, char** argv) {
  CLI::App app("kotae-bench-ingest: OCR accuracy and speed, and the loaders' throughput");
  std::vector<std::string> pdfs, throughput;
  std::vector<int> dpis = {200, 300};
  int pages = 0;
  app.add_option("--pdf", pdfs, "born-digital PDFs whose pages are scanned and OCR'd")->required();
  app.add_option("--dpi", dpis, "scan resolutions")->capture_default_str();
  app.add_option("--pages", pages, "pages of each PDF (0: all)");
  app.add_option("--throughput", throughput, "files whose loading is timed");
  std::string tables_pdf, tables_truth;
  app.add_option("--tables", tables_pdf, "a PDF of tables printed from --tables-truth (bench/make_pdf_tables.py)");
  app.add_option("--tables-truth", tables_truth, "the JSON of those tables' cells");
  CLI11_PARSE(app, argc, argv);
  setMsgSeverity(L_SEVERITY_NONE);

  std::mt19937 rng(20261207);
  kotae::text::LoadLimits limits;  // one OCR thread: the per-core rate
  struct Total {
    std::size_t errors = 0, characters = 0, pages = 0;
    double seconds = 0;
  };
  std::map<std::string, Total> totals;
  for (const auto& path : pdfs) {
    const std::string bytes = read_file(path);
    std::unique_ptr<poppler::document> pdf(
        poppler::document::load_from_raw_data(bytes.data(), static_cast<int>(bytes.size())));
    auto truth = kotae::text::load_document_bytes(bytes, "pdf");
    if (!pdf || !truth) {
      std::cerr << path << ": cannot read\n";
      return 1;
    }
    const int count = pages > 0 ? std::min(pages, pdf->pages()) : pdf->pages();
    for (int index = 0; index < count; ++index) {
      const std::string expected = collapsed(page_text(*truth, static_cast<std::uint32_t>(index + 1)));
      if (expected.size() < 200) continue;  // a title page says little about accuracy
      for (const int dpi : dpis) {
        const Gray clean = render(*pdf, index, dpi);
        for (const bool noisy : {false, true}) {
          const std::string png = png_of(noisy ? scanned(clean, 1.0, 12.0, rng) : clean, dpi);
          const auto start = Clock::now();
          auto ocr = kotae::text::load_document_bytes(png, "png", limits);
          const double elapsed = seconds_since(start);
          const std::string got = ocr ? collapsed(ocr->text) : "";
          const std::size_t errors = edit_distance(got, expected);
          const std::string variant = std::to_string(dpi) + (noisy ? "dpi_noisy_skewed" : "dpi_clean");
          Total& t = totals[variant];
          t.errors += errors;
          t.characters += expected.size();
          t.pages += 1;
          t.seconds += elapsed;
          std::cout << nlohmann::json{{"name", "ocr_page"},
                                      {"file", fs::path(path).filename().string()},
                                      {"page", index + 1},
                                      {"variant", variant},
                                      {"cer", static_cast<double>(errors) / static_cast<double>(expected.size())},
                                      {"seconds", elapsed}}
                           .dump()
                    << std::endl;
        }
      }
    }
  }
  nlohmann::json summary{{"name", "ocr_summary"}, {"target_cer_300dpi", 0.02}};
  for (const auto& [variant, t] : totals) {
    summary[variant] = {
        {"cer", static_cast<double>(t.errors) / static_cast<double>(std::max<std::size_t>(1, t.characters))},
        {"pages", t.pages},
        {"pages_per_s_per_core", t.pages / std::max(1e-9, t.seconds)}};
  }
  std::cout << summary.dump() << std::endl;
  if (!tables_pdf.empty()) std::cout << table_accuracy(tables_pdf, tables_truth).dump() << std::endl;

  for (const auto& path : throughput) {
    const std::string bytes = read_file(path);
    const std::string format = kotae::text::document_format(path);
    const auto start = Clock::now();
    int runs = 0;
    std::size_t text_bytes = 0, doc_pages = 0;
    while (runs < 3 || seconds_since(start) < 1.0) {
      auto doc = kotae::text::load_document_bytes(bytes, format, limits);
      if (!doc) {
        std::cerr << path << ": " << doc.error().message << "\n";
        return 1;
      }
      text_bytes = doc->text.size();
      doc_pages = doc->pages;
      ++runs;
    }
    const double per_run = seconds_since(start) / runs;
    nlohmann::json line{{"name", "load"},           {"file", fs::path(path).filename().string()},
                        {"format", format},         {"bytes", bytes.size()},
                        {"text_bytes", text_bytes}, {"mb_per_s", static_cast<double>(bytes.size()) / 1e6 / per_run}};
    if (doc_pages > 0) line["pages_per_s"] = static_cast<double>(doc_pages) / per_run;
    std::cout << line.dump() << std::endl;
  }
  return 0;
}
