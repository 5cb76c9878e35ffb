# Store (store/): collections, SQLite + FTS5, vector index.
kotae_test(store_tests
  SOURCES store/sqlite_database_test.cpp store/vector_index_test.cpp store/collection_test.cpp
  LIBS kotae_store SQLite::SQLite3 nlohmann_json::nlohmann_json Threads::Threads)
