# The server (server/): the real `kotae serve` started on a loopback port and spoken to over HTTP.
# A fixture indexes three Debian FAQ chapters into a data folder in the build tree.
set(KOTAE_SERVER_TEST_DATA ${CMAKE_CURRENT_BINARY_DIR}/server-data)
add_test(NAME ServerFixture.IndexFaq
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/scripts/make_server_data.sh $<TARGET_FILE:kotae> ${KOTAE_SERVER_TEST_DATA})
set_tests_properties(ServerFixture.IndexFaq PROPERTIES FIXTURES_SETUP server_data TIMEOUT 300)

# poppler and Leptonica make a scanned PDF of examples/docs' PDF to upload (its OCR progress in the job).
kotae_test(server_tests SOURCES server/server_test.cpp server/tenant_isolation_test.cpp LIBS kotae_model nlohmann_json::nlohmann_json
           PkgConfig::POPPLER_CPP PkgConfig::LEPTONICA
           PROPERTIES FIXTURES_REQUIRED server_data TIMEOUT 300)
target_compile_definitions(server_tests PRIVATE KOTAE_BINARY="$<TARGET_FILE:kotae>"
                                                KOTAE_SERVER_DATA="${KOTAE_SERVER_TEST_DATA}"
                                                KOTAE_EXAMPLES_DIR="${PROJECT_SOURCE_DIR}/examples/docs")
add_dependencies(server_tests kotae)

add_test(NAME ServerTest.OfficialOpenAIPythonClient
         COMMAND ${KOTAE_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/server/openai_client_test.py $<TARGET_FILE:kotae>
                 ${KOTAE_SERVER_TEST_DATA})
set_tests_properties(ServerTest.OfficialOpenAIPythonClient PROPERTIES FIXTURES_REQUIRED server_data TIMEOUT 300)

add_test(NAME ServerTest.TeiAndCohereClients
         COMMAND ${KOTAE_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/server/tei_client_test.py $<TARGET_FILE:kotae>
                 ${KOTAE_SERVER_TEST_DATA} ${KOTAE_CROSS_ENCODER_REFERENCES}/model-1)
set_tests_properties(ServerTest.TeiAndCohereClients PROPERTIES FIXTURES_REQUIRED "server_data;cross_encoder_model" TIMEOUT 300)

add_test(NAME ServerTest.LogsAreJsonLinesWithRequestIds
         COMMAND ${KOTAE_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/server/logs_test.py $<TARGET_FILE:kotae> ${KOTAE_SERVER_TEST_DATA})
set_tests_properties(ServerTest.LogsAreJsonLinesWithRequestIds PROPERTIES FIXTURES_REQUIRED server_data TIMEOUT 300)

add_test(NAME ServerTest.GrafanaDashboardUsesOnlyExportedMetrics
         COMMAND ${KOTAE_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/server/grafana_dashboard_test.py $<TARGET_FILE:kotae> ${KOTAE_SERVER_TEST_DATA})
set_tests_properties(ServerTest.GrafanaDashboardUsesOnlyExportedMetrics PROPERTIES FIXTURES_REQUIRED server_data TIMEOUT 300)

get_filename_component(_python_bin ${KOTAE_PYTHON} DIRECTORY)
add_test(NAME ServerTest.SchemathesisFindsNoServerErrorsAndNoSchemaDrift
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/server/schemathesis_test.sh $<TARGET_FILE:kotae> ${KOTAE_SERVER_TEST_DATA}
                 ${_python_bin}/schemathesis)
set_tests_properties(ServerTest.SchemathesisFindsNoServerErrorsAndNoSchemaDrift PROPERTIES
                     FIXTURES_REQUIRED server_data TIMEOUT 600)

add_test(NAME ServerTest.ServiceManagerReadinessAndReload
         COMMAND ${KOTAE_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/server/service_manager_test.py $<TARGET_FILE:kotae>
                 ${KOTAE_SERVER_TEST_DATA})
set_tests_properties(ServerTest.ServiceManagerReadinessAndReload PROPERTIES FIXTURES_REQUIRED server_data TIMEOUT 300)

add_test(NAME ServerTest.DocumentsShownToTheirTenantOnly
         COMMAND ${KOTAE_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/server/document_view_test.py $<TARGET_FILE:kotae>
                 ${KOTAE_SERVER_TEST_DATA} ${PROJECT_SOURCE_DIR}/examples/docs)
set_tests_properties(ServerTest.DocumentsShownToTheirTenantOnly PROPERTIES FIXTURES_REQUIRED server_data TIMEOUT 300)

# Chosen documents and metadata filters (filters.documents, filters.where) on /v1/search, /v1/ask and
# grounded chat, with their 400 invalid_filter answers.
add_test(NAME ServerTest.MetadataFilters
         COMMAND ${KOTAE_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/server/metadata_filters_test.py $<TARGET_FILE:kotae>
                 ${KOTAE_SERVER_TEST_DATA})
set_tests_properties(ServerTest.MetadataFilters PROPERTIES FIXTURES_REQUIRED server_data TIMEOUT 300)

# Conversations (server/conversation_*, local_conversations, shared_conversations): both stores against
# real databases (SQLite in a temporary folder, the PostgreSQL fixture), the history a follow-up
# rebuilds from stored turns, titles, ids and the list's query.
kotae_test(conversation_tests
           SOURCES server/conversation_store_test.cpp server/conversation_record_test.cpp server/audit_trail_test.cpp server/member_store_test.cpp server/session_store_test.cpp
           LIBS kotae_server PROPERTIES FIXTURES_REQUIRED postgres_server)
target_compile_definitions(conversation_tests PRIVATE KOTAE_TEST_POSTGRES_URL_FILE="${KOTAE_TEST_POSTGRES_URL_FILE}")


# Server parts tested alone: the GPU series of /metrics from NVML's readings, the trusted proxy's address ranges.
kotae_test(server_unit_tests SOURCES server/gpu_metrics_test.cpp server/address_range_test.cpp LIBS kotae_server)

# Faults the server survives (tests/server/fault_test.cpp): a remote generator killed mid-answer, a
# generator that fails to load, a deleted or damaged vector index.
kotae_test(server_fault_tests SOURCES server/fault_test.cpp LIBS kotae_core nlohmann_json::nlohmann_json
           PROPERTIES FIXTURES_REQUIRED server_data TIMEOUT 300)
target_compile_definitions(server_fault_tests PRIVATE KOTAE_BINARY="$<TARGET_FILE:kotae>"
                                                      KOTAE_SERVER_DATA="${KOTAE_SERVER_TEST_DATA}"
                                                      KOTAE_LLAMA_SERVER="${KOTAE_LLAMA_SERVER}")
add_dependencies(server_fault_tests kotae)

# Disk full during ingestion, from the CLI and through the server: a small tmpfs in a private mount
# namespace (unshare), so nothing outside the test sees it.
add_test(NAME Faults.DiskFullDuringIngestionLosesNothing
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/server/disk_full_test.sh $<TARGET_FILE:kotae>)
set_tests_properties(Faults.DiskFullDuringIngestionLosesNothing PROPERTIES TIMEOUT 300)

# Bad inputs (tests/bad_inputs/cases.json, made by make_corpus.py): each sent to a real server while
# another client searches and embeds; every case gets its clear outcome, nothing crashes or is lost.
add_test(NAME ServerTest.BadInputsGetClearErrorsAndNoCrash
         COMMAND ${KOTAE_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/server/bad_inputs_test.py $<TARGET_FILE:kotae>
                 ${KOTAE_SERVER_TEST_DATA})
set_tests_properties(ServerTest.BadInputsGetClearErrorsAndNoCrash PROPERTIES FIXTURES_REQUIRED server_data TIMEOUT 900)

# The soak test's two-minute version (bench/soak --minutes 2; about four minutes with indexing and
# calibration). Alone on the machine: it loads the server to 70% of the capacity it measures.
add_test(NAME Soak.TwoMinutes COMMAND bash ${PROJECT_SOURCE_DIR}/bench/soak --minutes 2 --binary $<TARGET_FILE:kotae>)
set_tests_properties(Soak.TwoMinutes PROPERTIES TIMEOUT 900 RUN_SERIAL TRUE LABELS soak)

# One test per GROUP: `SCRIPT KOTAE_BINARY FIXTURE_DATA GROUP`, named PREFIX.GROUP, on the fixture's data.
function(kotae_python_test_groups prefix script timeout)
  foreach(group ${ARGN})
    add_test(NAME ${prefix}.${group}
             COMMAND ${KOTAE_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/server/${script} $<TARGET_FILE:kotae>
                     ${KOTAE_SERVER_TEST_DATA} ${group})
    set_tests_properties(${prefix}.${group} PROPERTIES FIXTURES_REQUIRED server_data TIMEOUT ${timeout})
  endforeach()
endfunction()

# Hostile clients (tests/server/hostile_clients_test.py): attacks on the real server over sockets, by
# group: bodies that crashed or stalled it, requests refused before their body is read, connection caps
# and EMFILE, metric labels, open mode on a laptop (Host, Origin, CORS, keys files), input sizes, deleting
# collections and loading models, uploads (parts, files, per-tenant quotas).
kotae_python_test_groups(HostileClients hostile_clients_test.py 300 bodies before_body connections metrics open_mode sizes lifecycle uploads)
# ... and on ingestion (tests/server/durable_ingestion_test.py): time budgets, cancelling inside a file
# and shutting down within the deadline; SIGKILL at random moments; the CLI and the server writing one
# collection.
kotae_python_test_groups(HostileClients durable_ingestion_test.py 600 budgets crashes writers)

# Conversations stored on the server (tests/server/conversations_test.py): asked, listed, read, kept
# across a restart, renamed, deleted, bounded per tenant and never seen by another tenant.
kotae_python_test_groups(Conversations conversations_test.py 300 embedded)
# Replicas over PostgreSQL (tests/server/cluster_test.py): each group starts a PostgreSQL of its own
# and two real `kotae serve` processes; see the file for what each group attacks.
kotae_python_test_groups(Cluster cluster_test.py 600 replicas faults)
# Ingestion and answers through the Redis work queue (tests/server/queue_test.py): PostgreSQL, Redis,
# replicas with --queue and `kotae worker` processes, all started by the test.
kotae_python_test_groups(Queue queue_test.py 600 ingestion faults answers)
set_tests_properties(Queue.answers PROPERTIES ENVIRONMENT "KOTAE_WRITE_TINY_GGUF=$<TARGET_FILE:write_tiny_gguf>")
add_test(NAME Cluster.script
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/scripts/cluster_script_test.sh $<TARGET_FILE:kotae> ${KOTAE_SERVER_TEST_DATA})
set_tests_properties(Cluster.script PROPERTIES FIXTURES_REQUIRED server_data TIMEOUT 300)

# Identity from tokens (server/auth/): JWKS, JWT checks and the attacks on them, claims → a person.
kotae_test(auth_tests SOURCES server/auth_token_test.cpp LIBS kotae_auth OpenSSL::Crypto)

# Roles of API keys and the audit trail (server/audit_*, store/*audit_trail): the real server.
add_test(NAME ServerTest.KeyRolesAndTheAuditTrail
         COMMAND ${KOTAE_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/server/audit_test.py $<TARGET_FILE:kotae> ${KOTAE_SERVER_TEST_DATA})
set_tests_properties(ServerTest.KeyRolesAndTheAuditTrail PROPERTIES FIXTURES_REQUIRED server_data TIMEOUT 300)

# Collections shared by role (server/member_routes, server/collection_roles): the real server.
add_test(NAME ServerTest.CollectionsArePrivateUntilSharedByRole
         COMMAND ${KOTAE_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/server/sharing_test.py $<TARGET_FILE:kotae> ${KOTAE_SERVER_TEST_DATA})
set_tests_properties(ServerTest.CollectionsArePrivateUntilSharedByRole PROPERTIES FIXTURES_REQUIRED server_data TIMEOUT 300)

# A reranking service as the rerank stage (--rerank-url): a second `kotae serve` with the test cross-encoder
# serves /rerank, /v1/rerank and /v2/rerank; a scripted Python service is slow, answers garbage, then stops.
add_test(NAME ServerTest.RerankServiceStage
         COMMAND ${KOTAE_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/server/rerank_service_test.py $<TARGET_FILE:kotae>
                 ${KOTAE_SERVER_TEST_DATA} ${KOTAE_CROSS_ENCODER_REFERENCES}/model-1)
set_tests_properties(ServerTest.RerankServiceStage PROPERTIES FIXTURES_REQUIRED "server_data;cross_encoder_model" TIMEOUT 300)

# Document metadata (server/upload_request, server/document_routes, text/document_metadata): on upload,
# from the files' properties, in lists, hits and answers, changed by PATCH.
add_test(NAME ServerTest.DocumentMetadataOnUploadInHitsAndEditable
         COMMAND ${KOTAE_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/server/document_metadata_test.py $<TARGET_FILE:kotae> ${KOTAE_SERVER_TEST_DATA})
set_tests_properties(ServerTest.DocumentMetadataOnUploadInHitsAndEditable PROPERTIES FIXTURES_REQUIRED server_data TIMEOUT 300)
