# The server (server/): the real `kotae serve` started on a loopback port and spoken to over HTTP.
# A fixture indexes three Debian FAQ chapters into a data folder in the build tree.
set(KOTAE_SERVER_TEST_DATA ${CMAKE_CURRENT_BINARY_DIR}/server-data)
add_test(NAME ServerFixture.IndexFaq
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/scripts/make_server_data.sh $<TARGET_FILE:kotae> ${KOTAE_SERVER_TEST_DATA})
set_tests_properties(ServerFixture.IndexFaq PROPERTIES FIXTURES_SETUP server_data TIMEOUT 300)

kotae_test(server_tests SOURCES server/server_test.cpp LIBS kotae_model nlohmann_json::nlohmann_json
           PROPERTIES FIXTURES_REQUIRED server_data TIMEOUT 300)
target_compile_definitions(server_tests PRIVATE KOTAE_BINARY="$<TARGET_FILE:kotae>"
                                                KOTAE_SERVER_DATA="${KOTAE_SERVER_TEST_DATA}")
add_dependencies(server_tests kotae)

add_test(NAME ServerTest.OfficialOpenAIPythonClient
         COMMAND ${KOTAE_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/server/openai_client_test.py $<TARGET_FILE:kotae>
                 ${KOTAE_SERVER_TEST_DATA})
set_tests_properties(ServerTest.OfficialOpenAIPythonClient PROPERTIES FIXTURES_REQUIRED server_data TIMEOUT 300)

get_filename_component(_python_bin ${KOTAE_PYTHON} DIRECTORY)
add_test(NAME ServerTest.SchemathesisFindsNoServerErrorsAndNoSchemaDrift
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/server/schemathesis_test.sh $<TARGET_FILE:kotae> ${KOTAE_SERVER_TEST_DATA}
                 ${_python_bin}/schemathesis)
set_tests_properties(ServerTest.SchemathesisFindsNoServerErrorsAndNoSchemaDrift PROPERTIES
                     FIXTURES_REQUIRED server_data TIMEOUT 600)
