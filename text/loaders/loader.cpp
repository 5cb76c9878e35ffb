#include "text/loaders/loader.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <system_error>

#include "text/document_metadata.h"
#include "text/loaders/format_loaders.h"

namespace kotae::text {
namespace {

Error with_path(const std::filesystem::path& path, const Error& error) {
  return make_error(error.code, path.string() + ": " + error.message);
}

}  // namespace

namespace {

// Every extension Kotae reads, and its format: the one list behind document_format and the messages.
struct Extension {
  std::string_view extension, format;
};
constexpr Extension kExtensions[] = {
    {".txt", "txt"},  {".text", "txt"},   {".md", "md"},     {".markdown", "md"}, {".html", "html"},
    {".htm", "html"}, {".xhtml", "html"}, {".pdf", "pdf"},   {".docx", "docx"},   {".pptx", "pptx"},
    {".odt", "odt"},  {".epub", "epub"},  {".xlsx", "xlsx"}, {".ods", "ods"},     {".csv", "csv"},
    {".tsv", "tsv"},  {".tab", "tsv"},    {".eml", "eml"},   {".mbox", "mbox"},   {".png", "png"},
    {".jpg", "jpg"},  {".jpeg", "jpg"},   {".tif", "tiff"},  {".tiff", "tiff"},   {".webp", "webp"},
};

}  // namespace

std::string document_format(const std::filesystem::path& path) {
  std::string extension = path.extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const auto& known : kExtensions) {
    if (known.extension == extension) return std::string(known.format);
  }
  return "";
}

std::string supported_extensions() {
  std::string list;
  for (const auto& known : kExtensions) {
    if (!list.empty()) list += ' ';
    list += known.extension;
  }
  return list;
}

Result<Document> load_document(const std::filesystem::path& path, const LoadLimits& limits) {
  const std::string format = document_format(path);
  if (format.empty()) {
    const std::string extension = path.extension().string();
    return make_error(ErrorCode::unsupported, path.string() + ": unsupported file type '" +
                                                  (extension.empty() ? "(none)" : extension) +
                                                  "' (supported: " + supported_extensions() + ")");
  }
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) {
    if (ec && ec != std::errc::no_such_file_or_directory) {
      return make_error(ErrorCode::io, path.string() + ": cannot stat: " + ec.message());
    }
    return make_error(ErrorCode::not_found, path.string() + ": no such file");
  }
  if (!std::filesystem::is_regular_file(status)) {
    return make_error(ErrorCode::invalid_argument, path.string() + ": not a regular file");
  }
  // Checked before reading, so a huge file costs nothing.
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) return make_error(ErrorCode::io, path.string() + ": cannot read size: " + ec.message());
  if (size > limits.max_file_bytes) {
    return make_error(ErrorCode::invalid_argument, path.string() + ": file is " + std::to_string(size) +
                                                       " bytes, over max_file_bytes (" +
                                                       std::to_string(limits.max_file_bytes) + ")");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(ErrorCode::io, path.string() + ": cannot open for reading");
  std::string bytes(static_cast<std::size_t>(size), '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(size));
  if (static_cast<std::uintmax_t>(in.gcount()) != size) {
    return make_error(ErrorCode::io, path.string() + ": read failed (file changed while reading?)");
  }
  auto document = load_document_bytes(bytes, format, limits);
  if (!document) return with_path(path, document.error());
  return document;
}

namespace {

// What the file says of itself, as the metadata may keep it: each value one clean line of at most
// text::kMaxMetadataStringBytes (a hostile file's header or property is bounded here, whatever its
// loader read), the empty ones and repeated keys (the first counts) left out.
void clean_file_properties(Document& document) {
  std::vector<std::pair<std::string, std::string>> kept;
  for (auto& [key, value] : document.metadata) {
    std::string clean = clean_property(value);
    const bool repeated =
        std::any_of(kept.begin(), kept.end(), [&key = key](const auto& entry) { return entry.first == key; });
    if (!clean.empty() && !repeated) kept.emplace_back(std::move(key), std::move(clean));
  }
  document.metadata = std::move(kept);
}

Result<Document> load_by_format(std::string_view bytes, std::string_view format, const LoadLimits& limits);

}  // namespace

Result<Document> load_document_bytes(std::string_view bytes, std::string_view format, const LoadLimits& limits) {
  auto document = load_by_format(bytes, format, limits);
  if (document) clean_file_properties(*document);
  return document;
}

namespace {

Result<Document> load_by_format(std::string_view bytes, std::string_view format, const LoadLimits& limits) {
  if (bytes.size() > limits.max_file_bytes) {
    return make_error(ErrorCode::invalid_argument, "input is " + std::to_string(bytes.size()) +
                                                       " bytes, over max_file_bytes (" +
                                                       std::to_string(limits.max_file_bytes) + ")");
  }
  if (format == "txt") return load_plain_text(bytes, limits);
  if (format == "md") return load_markdown(bytes, limits);
  if (format == "html") return load_html(bytes, limits);
  if (format == "pdf") return load_pdf(bytes, limits);
  if (format == "docx") return load_docx(bytes, limits);
  if (format == "pptx") return load_pptx(bytes, limits);
  if (format == "odt") return load_odt(bytes, limits);
  if (format == "epub") return load_epub(bytes, limits);
  if (format == "xlsx") return load_xlsx(bytes, limits);
  if (format == "ods") return load_ods(bytes, limits);
  if (format == "csv") return load_csv(bytes, limits);
  if (format == "tsv") return load_tsv(bytes, limits);
  if (format == "eml") return load_eml(bytes, limits);
  if (format == "mbox") return load_mbox(bytes, limits);
  if (format == "png" || format == "jpg" || format == "tiff" || format == "webp") {
    return load_image(bytes, limits, std::string(format));
  }
  return make_error(ErrorCode::unsupported, "unsupported document format '" + std::string(format) + "'");
}

}  // namespace

}  // namespace kotae::text
