#pragma once
// `kotae worker --store postgres://… --queue redis://…`: ingests the files the API replicas queued
// (worker/ingest_worker.h), on this machine's cores; `kotae worker --answers --model NAME --queue …`
// generates the answers they queued instead (worker/answer_worker.h), on this machine's GPU where it has
// one. Either runs until SIGTERM or SIGINT; then it stops taking work, finishes what it is doing within
// --shutdown-deadline, and exits. Logs are JSON lines on stderr; --listen serves /healthz, /readyz and
// /metrics for probes and Prometheus.

#include <string>

#include <CLI/CLI.hpp>

#include "rag/answer_backends.h"
#include "store/catalog.h"
#include "worker/answer_worker.h"
#include "worker/ingest_worker.h"

namespace kotae::app {

struct WorkerOptions {
  store::CatalogOptions where;  // --store (must be PostgreSQL), --index-cache
  worker::IngestWorkerOptions ingest;
  std::string embedder;            // loaded at start; others as collections need them
  bool answers = false;            // generate answers instead of ingesting
  rag::BackendSettings generator;  // --model and the other llama settings, for --answers
  std::string listen;              // HOST:PORT of the status endpoints; empty: none
  double claim_idle_s = 0;         // 0: 60 s for files, 10 s for answers
  double shutdown_deadline_s = 60;
};

CLI::App* add_worker_command(CLI::App& app, WorkerOptions& options);
int run_worker(WorkerOptions options);

}  // namespace kotae::app
