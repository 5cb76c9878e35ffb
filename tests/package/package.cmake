# The Debian package (scripts/package, deploy/debian): Package.Build makes the .deb once into
# package/ (the fixture kotae_deb: a minute, plus three for llama.cpp the first time on a machine);
# the tests that need it read its path from package/package.json (the version is in its name).
find_program(KOTAE_LINTIAN lintian REQUIRED)
find_program(KOTAE_JQ jq REQUIRED)
set(KOTAE_PACKAGE_JSON ${CMAKE_BINARY_DIR}/package/package.json)

add_test(NAME Package.Build COMMAND ${PROJECT_SOURCE_DIR}/scripts/package ${CMAKE_BINARY_DIR}/package)
set_tests_properties(Package.Build PROPERTIES FIXTURES_SETUP kotae_deb TIMEOUT 1200 RUN_SERIAL TRUE)

# Every tag lintian finds, infos included, is fixed or overridden with its reason in
# deploy/debian/lintian-overrides. Two runs: the first prints the overridden tags with their reasons
# (--show-overrides also makes lintian fail on overridden errors, so it does not judge), the second
# judges.
add_test(NAME Package.LintianFindsNothing
         COMMAND bash -c "deb=$(${KOTAE_JQ} -r .deb \"$1\") \
                          && ${KOTAE_LINTIAN} --fail-on none --show-overrides -I \"$deb\" \
                          && ${KOTAE_LINTIAN} --fail-on error,warning,info -I \"$deb\"" _ ${KOTAE_PACKAGE_JSON})
set_tests_properties(Package.LintianFindsNothing PROPERTIES FIXTURES_REQUIRED kotae_deb TIMEOUT 300)
