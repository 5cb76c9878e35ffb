#pragma once
// The zip container of the office and e-book formats (DOCX, PPTX, ODT), read with libzip from bytes in
// memory. Every entry is read within one budget of inflated bytes for the whole archive: a zip bomb is
// stopped by an entry's declared size before inflating, and by the bytes really inflated when the
// declared size lies. Errors name the format ("corrupt PPTX: ...").

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"

struct zip;

namespace kotae::text {

class ZipArchive {
 public:
  // `kind` names the format in messages ("DOCX"); `max_inflated_bytes` bounds all reads together.
  static Result<ZipArchive> open(std::string_view bytes, std::string kind, std::uint64_t max_inflated_bytes);

  ZipArchive(ZipArchive&&) noexcept;
  ZipArchive& operator=(ZipArchive&&) noexcept;
  ~ZipArchive();

  // The entry's bytes; nullopt when the archive has no entry of that name.
  Result<std::optional<std::string>> read(std::string_view name);

  // The entry's bytes; a corrupt error ("corrupt ODT: the archive has no content.xml") when it does not exist.
  Result<std::string> read_required(std::string_view name);

 private:
  struct Discard {
    void operator()(zip* archive) const;
  };
  ZipArchive(zip* archive, std::string kind, std::uint64_t max_bytes);

  std::unique_ptr<zip, Discard> archive_;
  std::string kind_;
  std::uint64_t max_bytes_;
  std::uint64_t inflated_ = 0;
};

// The path of an entry named by `target` (a relationship's or manifest's href, %-escapes decoded) from
// a part in `folder`: "../notesSlides/n1.xml" from "ppt/slides" is "ppt/notesSlides/n1.xml"; a target
// starting with "/" is from the archive's root, and ".." never climbs above it.
std::string resolve_zip_path(std::string_view folder, std::string_view target);

// The folder of an entry: "ppt/slides" for "ppt/slides/slide1.xml", "" for "content.xml".
std::string zip_folder_of(std::string_view path);

// The invalid_argument error of a passed limit: "WHAT, over LIMIT (VALUE)".
Error limit_error(std::string_view what, std::string_view limit, std::uint64_t value);

}  // namespace kotae::text
