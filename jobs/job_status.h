#pragma once
// An ingestion job's status, as every part that runs or shows jobs sees it, and its JSON forms: what
// GET /v1/jobs/{id} answers, and the record each job keeps (in its collection's jobs/ folder, or in
// PostgreSQL's table `jobs`: the same with the tenant), so that an acknowledged upload outlives a crash.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"

namespace kotae::jobs {

struct JobFile {
  std::string name;
  std::string status = "queued";  // queued, indexing, indexed, unchanged, failed, cancelled
  std::size_t chunks = 0;
  std::uint64_t bytes = 0;
  std::string error;
  // Pages of the file that need OCR (a scan's pages, an image's) and how many of them are read, as the
  // loader reports them while the file is indexing; 0 and 0 for a file with nothing to OCR (the JSON
  // forms leave both out then). They stay once the file is done; a file that starts over resets them.
  std::uint32_t ocr_pages = 0, ocr_pages_done = 0;
  // The caller's metadata for this file alone (the upload's metadata[NAME] part), a JSON object's text
  // checked when the upload was read; "" when none. Its keys win over the job's.
  std::string metadata_json;
};

// A file's OCR as the loader reports it (text::LoadLimits::on_ocr_page): each OCR'd part of the file
// (the file itself, or each scan or image a mail attaches) counts from 0, and the file's figures add
// the parts up, so that the total grows as parts are found and `done` never goes back.
class OcrTally {
 public:
  void report(std::uint32_t part_done, std::uint32_t part_pages) {
    if (part_done == 0) {  // a part begins
      base_pages_ = pages;
      base_done_ = done;
    }
    pages = base_pages_ + part_pages;
    done = base_done_ + part_done;
  }
  std::uint32_t pages = 0, done = 0;  // JobFile::ocr_pages, ocr_pages_done

 private:
  std::uint32_t base_pages_ = 0, base_done_ = 0;
};

struct JobStatus {
  std::string id;
  std::string tenant;
  std::string collection;
  std::string state = "queued";  // queued, running, succeeded, partial (some files failed), failed (all did), cancelled
  std::vector<JobFile> files;
  std::size_t files_done = 0;
  std::size_t chunks = 0;
  std::uint64_t bytes_done = 0, bytes_total = 0;
  double created = 0, started = 0, finished = 0;  // Unix seconds; 0 until it happens
  // The caller's metadata for every file of the upload (its `metadata` part), a JSON object's text
  // checked when the upload was read; "" when none.
  std::string metadata_json;
};

// A new job's id ("job_" and random letters).
std::string new_job_id();
// Whether a job's file needs no more work.
bool job_file_done(const JobFile& file);
// A job all of whose files are done gets its final state (cancelled, failed, partial, succeeded).
void settle_job(JobStatus& job, bool cancel_requested);

// The metadata a job's file is indexed with: the job's, then the file's own over it, then `source`
// "upload" (the server's; text/document_metadata.h), as a JSON object's text.
std::string upload_metadata(const JobStatus& job, std::size_t file);

// A record as job_record writes it, read back from a store; corrupt when it is not one.
Result<JobStatus> parse_job_record(std::string_view text);

nlohmann::json job_json(const JobStatus& job);
nlohmann::json job_record(const JobStatus& job);
// nullopt for a record that is not one (damaged, or written by something else).
std::optional<JobStatus> job_from_record(const nlohmann::json& record);

}  // namespace kotae::jobs
