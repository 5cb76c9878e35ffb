# The jobs part (jobs/): the ingestion jobs replicas share against the PostgreSQL fixture (the per-tenant
# bound on finished jobs).
kotae_test(shared_job_records_tests SOURCES jobs/shared_job_records_test.cpp
           LIBS kotae_jobs PROPERTIES FIXTURES_REQUIRED postgres_server)
target_compile_definitions(shared_job_records_tests PRIVATE KOTAE_TEST_POSTGRES_URL_FILE="${KOTAE_TEST_POSTGRES_URL_FILE}")
