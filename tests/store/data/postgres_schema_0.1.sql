-- Kotae 0.1's PostgreSQL schema at its last version (2), as store/postgres_record_store.cpp created it
-- before each part of the store owned its tables (store/postgres_schema.h). Frozen: the upgrade test
-- (tests/store/postgres_schema_test.cpp) starts from it.
CREATE TABLE IF NOT EXISTS kotae_schema(version bigint NOT NULL);
CREATE TABLE IF NOT EXISTS collections(
  id bigserial PRIMARY KEY,
  tenant text NOT NULL,
  name text NOT NULL,
  embedder_id text NOT NULL,
  dimension bigint NOT NULL,
  chunk_tokens bigint NOT NULL,
  overlap_tokens bigint NOT NULL,
  format_version bigint NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (tenant, name));
CREATE TABLE IF NOT EXISTS documents(
  id bigserial PRIMARY KEY,
  collection_id bigint NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
  path text NOT NULL,
  sha256 text NOT NULL,
  size bigint NOT NULL,
  modified_ns bigint NOT NULL,
  title text NOT NULL,
  format text NOT NULL,
  metadata_json text NOT NULL,
  text text NOT NULL,
  chunk_count bigint NOT NULL,
  stored_bytes bigint NOT NULL DEFAULT 0,  -- its text and its chunks' rows: what quotas count
  UNIQUE (collection_id, path));
CREATE TABLE IF NOT EXISTS chunks(
  id bigserial PRIMARY KEY,
  collection_id bigint NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
  document_id bigint NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
  ordinal bigint NOT NULL,
  begin_byte bigint NOT NULL,
  end_byte bigint NOT NULL,
  page_first bigint NOT NULL,
  page_last bigint NOT NULL,
  heading_path text NOT NULL,
  token_count bigint NOT NULL,
  text text NOT NULL,
  embedding bytea NOT NULL,
  sentences bytea NOT NULL);
CREATE INDEX IF NOT EXISTS chunks_by_document ON chunks(document_id, ordinal);
CREATE INDEX IF NOT EXISTS chunks_by_collection ON chunks(collection_id, id);
CREATE TABLE IF NOT EXISTS change_log(
  seq bigserial PRIMARY KEY,
  collection_id bigint NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
  chunk_id bigint NOT NULL,
  op bigint NOT NULL);
CREATE INDEX IF NOT EXISTS change_log_by_collection ON change_log(collection_id, seq);
CREATE TABLE IF NOT EXISTS jobs(
  id text PRIMARY KEY,
  tenant text NOT NULL,
  collection text NOT NULL,
  replica text NOT NULL,
  record text NOT NULL,
  cancel_requested boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now());
CREATE INDEX IF NOT EXISTS jobs_by_tenant ON jobs(tenant, created_at);
CREATE TABLE IF NOT EXISTS uploads(
  job_id text NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
  file bigint NOT NULL,
  bytes bytea NOT NULL,
  PRIMARY KEY (job_id, file));
CREATE TABLE IF NOT EXISTS api_keys(
  sha256 text PRIMARY KEY,
  entry text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now());

CREATE TABLE IF NOT EXISTS conversations(
  id text PRIMARY KEY,
  tenant text NOT NULL,
  collection text NOT NULL,
  title text NOT NULL,
  created_at double precision NOT NULL,
  updated_at double precision NOT NULL,
  turn_count bigint NOT NULL,
  turns text NOT NULL);
CREATE INDEX IF NOT EXISTS conversations_by_tenant ON conversations(tenant, updated_at);
CREATE TABLE IF NOT EXISTS document_files(
  collection_id bigint NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
  path text NOT NULL,
  bytes bytea NOT NULL,
  PRIMARY KEY (collection_id, path));
INSERT INTO kotae_schema(version) VALUES (2);
