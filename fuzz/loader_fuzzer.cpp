// One loader fuzz target per format: the same source, built with KOTAE_FUZZ_FORMAT set to "html",
// "pdf", "docx" or "md" (fuzz/CMakeLists.txt). The input is a whole file. Every input must give a
// Document that keeps its contract or an Error; never a crash, a leak, UB or a hang.
// DOCX only: an input that is not a zip ("PK...") is the XML of word/document.xml, then optionally
// word/styles.xml and docProps/core.xml after NUL bytes, zipped here with stored entries, so that
// mutations reach our XML walk rather than stop at libzip's checksums.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fuzz/document_contract.h"
#include "fuzz/stored_zip.h"
#include "text/loaders/loader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // Lower than the defaults so one input stays fast; the limit checks themselves are exercised too.
  kotae::text::LoadLimits limits;
  limits.max_file_bytes = 1 << 20;
  limits.max_pages = 16;
  limits.max_decompressed_bytes = 4 << 20;
  limits.max_depth = 64;
  limits.max_text_bytes = 1 << 20;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::string zipped;
  if (std::string_view(KOTAE_FUZZ_FORMAT) == "docx" && !bytes.starts_with("PK")) {
    std::vector<std::pair<std::string, std::string_view>> entries;
    for (const char* name : {"word/document.xml", "word/styles.xml", "docProps/core.xml"}) {
      const auto nul = bytes.find('\0');
      entries.emplace_back(name, bytes.substr(0, nul));
      if (nul == std::string_view::npos) break;
      bytes.remove_prefix(nul + 1);
    }
    zipped = kotae::fuzz::stored_zip(entries);
    bytes = zipped;
  }
  auto doc = kotae::text::load_document_bytes(bytes, KOTAE_FUZZ_FORMAT, limits);
  if (doc) {
    KOTAE_ASSERT(doc->format == KOTAE_FUZZ_FORMAT);
    kotae::fuzz::check_document_contract(*doc);
  } else {
    KOTAE_ASSERT(!doc.error().message.empty());
  }
  return 0;
}
