# The work queue (queue/) against a real redis-server: one started for the run (fixture redis_server),
# and, for the crash test, one the test starts and kills itself (tests/support/redis_server).
kotae_test(queue_tests SOURCES queue/work_queue_test.cpp LIBS kotae_queue
           PROPERTIES FIXTURES_REQUIRED redis_server)
target_compile_definitions(queue_tests PRIVATE KOTAE_TEST_REDIS_URL_FILE="${KOTAE_TEST_REDIS_URL_FILE}"
                           KOTAE_TEST_SUPPORT_DIR="${CMAKE_CURRENT_SOURCE_DIR}/support")
