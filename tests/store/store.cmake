# Store (store/): collections, SQLite + FTS5, BM25 index, vector index. The fixture builds the Debian
# FAQ set in BEIR layout (bench/make_debian_faq_beir.py) for the BM25-versus-FTS5 comparison.
set(KOTAE_FAQ_BEIR_DIR ${CMAKE_CURRENT_BINARY_DIR}/references/debian-faq)
add_test(NAME StoreFixture.DebianFaqDataset
         COMMAND python3 ${PROJECT_SOURCE_DIR}/bench/make_debian_faq_beir.py ${KOTAE_FAQ_BEIR_DIR})
set_tests_properties(StoreFixture.DebianFaqDataset PROPERTIES FIXTURES_SETUP debian_faq_dataset)
kotae_test(store_tests
  SOURCES store/sqlite_database_test.cpp store/vector_index_test.cpp store/collection_test.cpp
          store/bm25_index_test.cpp
  LIBS kotae_store kotae_text SQLite::SQLite3 nlohmann_json::nlohmann_json Threads::Threads
  PROPERTIES FIXTURES_REQUIRED debian_faq_dataset)
target_compile_definitions(store_tests PRIVATE KOTAE_FAQ_BEIR_DIR="${KOTAE_FAQ_BEIR_DIR}")

kotae_test(sqlite_server_records_tests SOURCES store/sqlite_server_records_test.cpp
  LIBS kotae_store SQLite::SQLite3 nlohmann_json::nlohmann_json Threads::Threads)
target_compile_definitions(sqlite_server_records_tests PRIVATE KOTAE_TEST_DATA_DIR="${CMAKE_CURRENT_SOURCE_DIR}/store/data")

kotae_test(postgres_store_tests
  SOURCES store/postgres_store_test.cpp store/postgres_schema_test.cpp store/job_record_store_test.cpp
  LIBS kotae_store SQLite::SQLite3 Threads::Threads
  PROPERTIES FIXTURES_REQUIRED postgres_server)
target_compile_definitions(postgres_store_tests PRIVATE KOTAE_TEST_POSTGRES_URL_FILE="${KOTAE_TEST_POSTGRES_URL_FILE}"
                                                    KOTAE_TEST_DATA_DIR="${CMAKE_CURRENT_SOURCE_DIR}/store/data")

# A document's metadata changed in place (Collection::update_document_metadata) on SQLite and PostgreSQL.
kotae_test(document_metadata_store_tests SOURCES store/document_metadata_store_test.cpp
  LIBS kotae_store SQLite::SQLite3 Threads::Threads
  PROPERTIES FIXTURES_REQUIRED postgres_server)
target_compile_definitions(document_metadata_store_tests PRIVATE KOTAE_TEST_POSTGRES_URL_FILE="${KOTAE_TEST_POSTGRES_URL_FILE}")

# The metadata filter language (store/metadata_filter): parser, evaluation, field summary, limits.
kotae_test(metadata_filter_tests SOURCES store/metadata_filter_test.cpp
  LIBS kotae_metadata_filter nlohmann_json::nlohmann_json)
# Filtered searches (chosen documents, metadata filters) on both record stores, and through the hybrid
# retriever.
kotae_test(filtered_search_tests SOURCES store/filtered_search_test.cpp
  LIBS kotae_store kotae_search SQLite::SQLite3 Threads::Threads
  PROPERTIES FIXTURES_REQUIRED postgres_server)
target_compile_definitions(filtered_search_tests PRIVATE KOTAE_TEST_POSTGRES_URL_FILE="${KOTAE_TEST_POSTGRES_URL_FILE}")
