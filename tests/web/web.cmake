# The web page (web/): its TypeScript type-checked, and the end-to-end journey in Debian's Chromium
# through playwright-core against the real server. Screenshots land in web-e2e/artifacts.
find_program(KOTAE_NODE node REQUIRED)
add_test(NAME WebTest.TypeScriptTypeChecks
         COMMAND ${KOTAE_NODE} ${PROJECT_SOURCE_DIR}/web/node_modules/typescript/bin/tsc -p ${PROJECT_SOURCE_DIR}/web)
add_test(NAME WebTest.BrowserEndToEnd
         COMMAND ${KOTAE_NODE} ${CMAKE_CURRENT_SOURCE_DIR}/web/browser_test.mjs $<TARGET_FILE:kotae>
                 ${PROJECT_SOURCE_DIR}/web ${PROJECT_SOURCE_DIR}/examples/docs ${CMAKE_CURRENT_BINARY_DIR}/web-e2e)
set_tests_properties(WebTest.BrowserEndToEnd PROPERTIES TIMEOUT 600)
add_test(NAME WebTest.PageWeightWithinBudget
         COMMAND ${KOTAE_NODE} ${CMAKE_CURRENT_SOURCE_DIR}/web/page_weight_test.mjs ${PROJECT_BINARY_DIR}/server/web_assets.json)
