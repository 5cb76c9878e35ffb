# The Python client (clients/python) and its LangChain, LlamaIndex and Haystack integrations: pip
# installs it with every extra into a virtual environment of the build tree (on top of
# scripts/python/integrations.lock, which scripts/setup installs), then each test starts a real
# `kotae serve` with the installed models on a fresh data folder of its own and indexes examples/docs.
set(KOTAE_PYTHON_INTEGRATIONS "${KOTAE_DEPS_DIR}/python-integrations/bin/python" CACHE FILEPATH
    "Python with scripts/python/integrations.lock installed")
kotae_require_dep("${KOTAE_PYTHON_INTEGRATIONS}" "the Python environment of the client's integrations")
set(KOTAE_PYTHON_CLIENT_VENV ${CMAKE_CURRENT_BINARY_DIR}/python-client-venv)

add_test(NAME PythonClientFixture.PipInstallWithExtras
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/clients/install_python_client.sh ${KOTAE_PYTHON_INTEGRATIONS}
                 ${KOTAE_PYTHON_CLIENT_VENV})
set_tests_properties(PythonClientFixture.PipInstallWithExtras PROPERTIES FIXTURES_SETUP python_client TIMEOUT 120)

# client: the API from the sync and async clients; openapi_contract: routes, fields and version kept
# in step with server/openapi.json and CMakeLists.txt (no server); integrations: the frameworks.
foreach(test client openapi_contract integrations)
  add_test(NAME PythonClient.${test}
           COMMAND ${CMAKE_COMMAND} -E env ${KOTAE_PYTHON_CLIENT_VENV}/bin/python  # (made by the fixture)
                   ${CMAKE_CURRENT_SOURCE_DIR}/clients/python/${test}_test.py $<TARGET_FILE:kotae>
                   ${CMAKE_CURRENT_BINARY_DIR}/python-client-data/${test})
  # Both cores: each starts a server with a local generator and imports the frameworks (seconds of
  # CPU each); beside two fuzzers, the integrations once took over 300 s instead of 20.
  set_tests_properties(PythonClient.${test} PROPERTIES FIXTURES_REQUIRED python_client TIMEOUT 600 PROCESSORS 2)
endforeach()
