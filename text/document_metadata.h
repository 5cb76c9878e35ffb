#pragma once
// A document's metadata: a flat JSON object of the caller's keys (given with an upload, or replaced by
// PATCH), what its file says of itself (text::Document::metadata: title, author, created, modified, an
// e-mail's headers) and what the server sets (`source`). The caller's objects are checked here before
// any work is spent on them, and the file's values are cleaned here before they are stored.
//
// A caller's object: at most kMaxMetadataKeys keys named [A-Za-z_][A-Za-z0-9_.-]{0,63}; values are
// strings (at most kMaxMetadataStringBytes, no control characters but tab and line breaks), finite
// numbers, booleans, or lists of at most kMaxMetadataListItems such strings. Dates are ISO 8601 strings
// ("2024-05-01", "2024-05-01T10:30:00Z"). No null and no nested objects. At most kMaxMetadataBytes as
// compact JSON.

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/result.h"

namespace kotae::text {

inline constexpr std::size_t kMaxMetadataKeys = 64;
inline constexpr std::size_t kMaxMetadataKeyBytes = 64;
inline constexpr std::size_t kMaxMetadataStringBytes = 1024;
inline constexpr std::size_t kMaxMetadataListItems = 64;
inline constexpr std::size_t kMaxMetadataBytes = 16 * 1024;  // the object as compact JSON
// The text a caller's object is parsed from (a multipart part): larger is refused unread.
inline constexpr std::size_t kMaxMetadataTextBytes = 4 * kMaxMetadataBytes;

// The key the server sets: "upload" for an uploaded file.
inline constexpr const char* kSourceKey = "source";

// Whether a loader fills `key` from the file itself: title, author, created, modified, and an
// e-mail's from, to, cc, date, subject, message_id.
bool is_file_property_key(std::string_view key);

// A caller's object, as JSON text (a multipart part); its size and nesting are checked before it is
// parsed. invalid_argument naming `what` ("metadata", "metadata[report.pdf]") and the problem.
Result<nlohmann::json> parse_metadata(std::string_view json_text, std::string_view what);
// A caller's object already parsed (a PATCH body's "metadata"). A `source` it gives must be
// `server_source`, the value the server keeps there ("" when the server keeps none: then no `source`).
Result<void> check_metadata(const nlohmann::json& metadata, std::string_view what,
                            std::string_view server_source = "upload");

// What a PATCH stores: the caller's new object, with the keys of `stored` it does not name kept where
// the server or the file set them (`source` and the file-property keys).
nlohmann::json replace_caller_metadata(const nlohmann::json& stored, const nlohmann::json& given);

// A file property as the metadata keeps it: control characters dropped, runs of white space made one
// space, trimmed, at most kMaxMetadataStringBytes (cut at a character's boundary, invalid UTF-8
// replaced).
std::string clean_property(std::string_view value);
// An ISO 8601 date or date-time ("2024-05-01", "2024-05-01T10:30:00Z", "2024-05-01T10:30:00.5+02:00",
// W3CDTF as docProps/core.xml writes it) as given, its offset written "+HH:MM"; "" when it is not one.
std::string normalise_iso_date(std::string_view text);
// A PDF date ("D:20240501103000+02'00'", every part after the year optional) in ISO 8601:
// "2024-05-01T10:30:00+02:00", or "2024-05-01" when it has no time; "" when it is not one.
std::string iso_date_from_pdf(std::string_view pdf_date);

}  // namespace kotae::text
