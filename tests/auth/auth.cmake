# Sign-in and tokens against a real OpenID provider (tests/auth/provider: the npm package oidc-provider,
# installed by scripts/setup) and the real server.
set(KOTAE_TEST_PROVIDER ${CMAKE_CURRENT_SOURCE_DIR}/auth/provider)
if(NOT EXISTS ${KOTAE_TEST_PROVIDER}/node_modules/oidc-provider)
  message(FATAL_ERROR "tests/auth/provider/node_modules is missing: run scripts/setup (it installs the test OpenID provider)")
endif()
add_test(NAME AuthTest.BearerTokensFromARealProvider
         COMMAND ${KOTAE_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/auth/bearer_token_test.py $<TARGET_FILE:kotae> ${KOTAE_SERVER_TEST_DATA})
set_tests_properties(AuthTest.BearerTokensFromARealProvider PROPERTIES FIXTURES_REQUIRED server_data TIMEOUT 300)
add_test(NAME AuthTest.SignInToTheWebPageWithARealProvider
         COMMAND ${KOTAE_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/auth/sign_in_test.py $<TARGET_FILE:kotae> ${KOTAE_SERVER_TEST_DATA})
set_tests_properties(AuthTest.SignInToTheWebPageWithARealProvider PROPERTIES FIXTURES_REQUIRED server_data TIMEOUT 300)
add_test(NAME AuthTest.ChromiumSignsInPeopleOfTwoTenants
         COMMAND ${KOTAE_NODE} ${CMAKE_CURRENT_SOURCE_DIR}/auth/sign_in_browser_test.mjs $<TARGET_FILE:kotae>
                 ${PROJECT_SOURCE_DIR}/web ${KOTAE_SERVER_TEST_DATA} ${CMAKE_CURRENT_BINARY_DIR}/auth-browser)
set_tests_properties(AuthTest.ChromiumSignsInPeopleOfTwoTenants PROPERTIES FIXTURES_REQUIRED server_data TIMEOUT 300)
add_test(NAME AuthTest.ATrustedProxyNamesUsersAndNobodyElseDoes
         COMMAND ${KOTAE_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/auth/trusted_proxy_test.py $<TARGET_FILE:kotae> ${KOTAE_SERVER_TEST_DATA})
set_tests_properties(AuthTest.ATrustedProxyNamesUsersAndNobodyElseDoes PROPERTIES FIXTURES_REQUIRED server_data TIMEOUT 300)
# Signed-in people on the two-replica cluster: scripts/cluster up with the provider's flags (PostgreSQL,
# Redis, HAProxy, two replicas, two workers), a session used on each replica's port.
add_test(NAME AuthTest.SignedInPeopleOnTheTwoReplicaCluster
         COMMAND ${KOTAE_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/auth/cluster_sign_in_test.py $<TARGET_FILE:kotae> ${KOTAE_SERVER_TEST_DATA})
set_tests_properties(AuthTest.SignedInPeopleOnTheTwoReplicaCluster PROPERTIES FIXTURES_REQUIRED server_data TIMEOUT 300)
add_test(NAME AuthTest.ASessionFollowsTheProvidersGroups
         COMMAND ${KOTAE_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/auth/session_revalidation_test.py $<TARGET_FILE:kotae> ${KOTAE_SERVER_TEST_DATA})
set_tests_properties(AuthTest.ASessionFollowsTheProvidersGroups PROPERTIES FIXTURES_REQUIRED server_data TIMEOUT 300)
