#pragma once
// One file of an upload, as the request carried it: what ingestion jobs store and queue.

#include <string>
#include <string_view>

namespace kotae::jobs {

struct UploadedFile {
  std::string name;       // safe to store (safe_filename), with a supported extension
  std::string_view body;  // points into the request's body
  // Its own metadata (the form's metadata[NAME] part), a checked JSON object's text; "" when none.
  std::string metadata_json;
};

}  // namespace kotae::jobs
