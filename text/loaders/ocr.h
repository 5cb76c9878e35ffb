#pragma once
// Optical character recognition with Tesseract 5 (its LSTM engine, Debian's libtesseract and trained
// data): the lines of an image's text in reading order, each with its box. A scanned PDF page and a
// PNG, JPEG, TIFF or WebP upload come here. One engine per thread: Tesseract's API object is not
// shared; creating one loads the languages' models (about 0.1 s for English).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/result.h"

namespace kotae::text {

// A line of recognised text and where it is: fractions of the image's width and height from its
// top-left corner, so that a viewer draws it at any scale.
struct OcrLine {
  std::string text;  // UTF-8, one line
  float left = 0, top = 0, right = 0, bottom = 0;
  bool starts_paragraph = false;  // the first line of a paragraph (or block) as Tesseract lays it out
};

// An 8-bit grayscale image, row by row, `stride` bytes a row.
struct GrayImage {
  const std::uint8_t* pixels = nullptr;
  int width = 0, height = 0, stride = 0;
  int dpi = 300;
};

class OcrEngine {
 public:
  // `languages` as Tesseract names them, joined by '+': "eng", "eng+deu". An error names the
  // languages whose trained data is not installed.
  static Result<std::unique_ptr<OcrEngine>> create(const std::string& languages);
  ~OcrEngine();
  OcrEngine(const OcrEngine&) = delete;
  OcrEngine& operator=(const OcrEngine&) = delete;

  // The image's lines; an error when recognition fails or takes longer than `seconds` (Tesseract's
  // own deadline, checked as it works).
  Result<std::vector<OcrLine>> read(const GrayImage& image, double seconds);

 private:
  struct Api;
  explicit OcrEngine(std::unique_ptr<Api> api);
  std::unique_ptr<Api> api_;
};

// What `kotae doctor` shows of OCR: the engine, its version, where its trained data is and which
// languages it holds.
struct OcrInfo {
  std::string engine = "Tesseract";
  std::string version;
  std::string data_path;
  std::vector<std::string> languages;
};
OcrInfo ocr_info();

}  // namespace kotae::text
