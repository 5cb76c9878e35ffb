#pragma once
// An ingestion job as JSON: what GET /v1/jobs/{id} answers, and the record each job keeps in its
// collection's jobs/ folder (the same with the tenant), so that an acknowledged upload outlives a crash.

#include <nlohmann/json.hpp>
#include <optional>

#include "server/ingest_jobs.h"

namespace kotae::server {

nlohmann::json job_json(const JobStatus& job);
nlohmann::json job_record(const JobStatus& job);
// nullopt for a record that is not one (damaged, or written by something else).
std::optional<JobStatus> job_from_record(const nlohmann::json& record);

}  // namespace kotae::server
