# The Debian package (scripts/package, deploy/debian): Package.Build makes the .deb (not the image:
# Package.ContainerImage builds that) once into
# package/ (the fixture kotae_deb: a minute, plus three for llama.cpp the first time on a machine);
# the tests that need it read its path from package/package.json (the version is in its name).
find_program(KOTAE_LINTIAN lintian REQUIRED)
find_program(KOTAE_JQ jq REQUIRED)
set(KOTAE_PACKAGE_JSON ${CMAKE_BINARY_DIR}/package/package.json)

add_test(NAME Package.Build COMMAND ${PROJECT_SOURCE_DIR}/scripts/package --no-image ${CMAKE_BINARY_DIR}/package)
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

# The package installed by apt into a clean Debian 12 root made by mmdebstrap (its Depends proven),
# then doctor, index, ask and serve as the user kotae (the seconds to /readyz 200 printed), no library
# from the build tree or the host, and the real unit booted under systemd-nspawn: verify, start
# (Type=notify), reload re-reading the keys, the journal. Needs root and Debian's archive; ~600 MB in /tmp.
add_test(NAME Package.InstallsIntoCleanDebian
         COMMAND bash -c "${CMAKE_CURRENT_SOURCE_DIR}/package/install_test.sh \"$(${KOTAE_JQ} -r .deb \"$1\")\" /tmp \"$2\""
                 _ ${KOTAE_PACKAGE_JSON} ${PROJECT_SOURCE_DIR}/examples/docs)
set_tests_properties(Package.InstallsIntoCleanDebian PROPERTIES FIXTURES_REQUIRED kotae_deb RUN_SERIAL TRUE TIMEOUT 900)

# systemd's audit of the unit's hardening: prints the exposure score, fails above 2.0 (the script says why).
add_test(NAME Package.SystemdUnitExposure
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/package/unit_exposure.sh ${PROJECT_SOURCE_DIR}/deploy/debian/kotae.service 2.0)
set_tests_properties(Package.SystemdUnitExposure PROPERTIES TIMEOUT 60)

# The container image scripts/image builds from the package: its configuration and layers (skopeo),
# then run with podman (runc): index, ask through the published port with an API key, healthcheck.
add_test(NAME Package.ContainerImage
         COMMAND bash -c "${CMAKE_CURRENT_SOURCE_DIR}/package/image_test.sh \"$(${KOTAE_JQ} -r .deb \"$1\")\" /tmp \"$2\""
                 _ ${KOTAE_PACKAGE_JSON} ${PROJECT_SOURCE_DIR}/examples/docs)
set_tests_properties(Package.ContainerImage PROPERTIES FIXTURES_REQUIRED kotae_deb RUN_SERIAL TRUE TIMEOUT 900)
