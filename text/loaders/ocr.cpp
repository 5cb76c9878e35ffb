#include "text/loaders/ocr.h"

#include <tesseract/baseapi.h>
#include <tesseract/ocrclass.h>
#include <tesseract/resultiterator.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

namespace kotae::text {

struct OcrEngine::Api {
  tesseract::TessBaseAPI tesseract;
};

namespace {

// Tesseract's lines come with a trailing "\n" and, for an empty line, nothing else.
std::string line_text(tesseract::ResultIterator& it) {
  std::unique_ptr<char[]> text(it.GetUTF8Text(tesseract::RIL_TEXTLINE));
  if (text == nullptr) return "";
  std::string line(text.get());
  while (!line.empty() && (line.back() == '\n' || line.back() == ' ')) line.pop_back();
  return line;
}

Error missing(const std::string& languages) {
  const OcrInfo info = ocr_info();
  std::string installed;
  for (const auto& language : info.languages) installed += (installed.empty() ? "" : ", ") + language;
  return make_error(ErrorCode::unsupported, "OCR languages '" + languages + "' are not all installed in " +
                                                info.data_path + " (installed: " + installed +
                                                "; Debian packages tesseract-ocr-LANG add more)");
}

}  // namespace

OcrEngine::OcrEngine(std::unique_ptr<Api> api) : api_(std::move(api)) {}
OcrEngine::~OcrEngine() {
  if (api_) api_->tesseract.End();
}

Result<std::unique_ptr<OcrEngine>> OcrEngine::create(const std::string& languages) {
  auto api = std::make_unique<Api>();
  // Tesseract writes its debug messages to stderr unless told to write them elsewhere.
  const char* const variables[] = {"debug_file"};
  const char* const values[] = {"/dev/null"};
  std::vector<std::string> names(variables, variables + 1), settings(values, values + 1);
  if (api->tesseract.Init(nullptr, languages.c_str(), tesseract::OEM_LSTM_ONLY, nullptr, 0, &names, &settings, false) !=
      0) {
    return missing(languages);
  }
  // Tesseract goes on when some of the languages load; every one asked for must have.
  std::vector<std::string> loaded;
  api->tesseract.GetLoadedLanguagesAsVector(&loaded);
  for (std::size_t at = 0; at <= languages.size();) {
    const std::size_t end = std::min(languages.find('+', at), languages.size());
    const std::string language = languages.substr(at, end - at);
    if (std::find(loaded.begin(), loaded.end(), language) == loaded.end()) return missing(languages);
    at = end + 1;
  }
  api->tesseract.SetPageSegMode(tesseract::PSM_AUTO);
  return std::unique_ptr<OcrEngine>(new OcrEngine(std::move(api)));
}

Result<std::vector<OcrLine>> OcrEngine::read(const GrayImage& image, double seconds) {
  tesseract::TessBaseAPI& api = api_->tesseract;
  api.SetImage(image.pixels, image.width, image.height, 1, image.stride);
  api.SetSourceResolution(image.dpi);
  tesseract::ETEXT_DESC monitor;
  const double ms = std::clamp(seconds * 1000.0, 1.0, static_cast<double>(std::numeric_limits<int32_t>::max()));
  monitor.set_deadline_msecs(static_cast<int32_t>(ms));
  const int failed = api.Recognize(&monitor);
  if (monitor.deadline_exceeded()) {
    api.Clear();
    return make_error(ErrorCode::invalid_argument,
                      "OCR of a page took longer than ocr_page_seconds (" + std::to_string(seconds) + ")");
  }
  if (failed != 0) {
    api.Clear();
    return make_error(ErrorCode::corrupt, "OCR failed on the image");
  }
  std::vector<OcrLine> lines;
  std::unique_ptr<tesseract::ResultIterator> it(api.GetIterator());
  if (it != nullptr) {
    const float width = static_cast<float>(image.width), height = static_cast<float>(image.height);
    bool new_paragraph = true;
    do {
      if (it->Empty(tesseract::RIL_TEXTLINE)) continue;
      if (it->IsAtBeginningOf(tesseract::RIL_PARA)) new_paragraph = true;
      std::string text = line_text(*it);
      if (text.empty()) continue;
      int left = 0, top = 0, right = 0, bottom = 0;
      it->BoundingBox(tesseract::RIL_TEXTLINE, &left, &top, &right, &bottom);
      lines.push_back({std::move(text), static_cast<float>(left) / width, static_cast<float>(top) / height,
                       static_cast<float>(right) / width, static_cast<float>(bottom) / height, new_paragraph});
      new_paragraph = false;
    } while (it->Next(tesseract::RIL_TEXTLINE));
  }
  api.Clear();
  return lines;
}

OcrInfo ocr_info() {
  OcrInfo info;
  info.version = tesseract::TessBaseAPI::Version();
  tesseract::TessBaseAPI api;
  // Initialised without a language only to ask where the data is and what it holds.
  if (api.Init(nullptr, nullptr, tesseract::OEM_LSTM_ONLY) == 0 || api.GetDatapath() != nullptr) {
    if (const char* path = api.GetDatapath(); path != nullptr) info.data_path = path;
  }
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(info.data_path, error)) {
    if (entry.path().extension() == ".traineddata") info.languages.push_back(entry.path().stem().string());
  }
  std::sort(info.languages.begin(), info.languages.end());
  api.End();
  return info;
}

}  // namespace kotae::text
