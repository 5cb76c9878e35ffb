# The Kubernetes manifests (deploy/kubernetes) decoded strictly into the published API types (KEDA's too) by
# deploy/validate, offline (GOPROXY=off: only the modules scripts/setup downloaded, as go.sum pins them),
# and manifests with one misspelt field (a Deployment, a ScaledObject) refused, so the check is known to bite.
set(_go_env GOMODCACHE=${KOTAE_GO_MODULES_DIR} GOFLAGS=-mod=readonly GOPROXY=off GOTOOLCHAIN=local)
add_test(NAME Deploy.KubernetesManifestsDecodeStrictly
         COMMAND ${CMAKE_COMMAND} -E env ${_go_env} go run . ${PROJECT_SOURCE_DIR}/deploy/kubernetes/config.yaml
                 ${PROJECT_SOURCE_DIR}/deploy/kubernetes/api.yaml
                 ${PROJECT_SOURCE_DIR}/deploy/kubernetes/secret-example.yaml
                 ${PROJECT_SOURCE_DIR}/deploy/kubernetes/worker.yaml
                 ${PROJECT_SOURCE_DIR}/deploy/kubernetes/answer-worker.yaml
                 ${PROJECT_SOURCE_DIR}/deploy/kubernetes/worker-autoscaling.yaml
                 ${PROJECT_SOURCE_DIR}/deploy/kubernetes/worker-hpa.yaml
         WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}/deploy/validate)
add_test(NAME Deploy.AMisspeltFieldIsRefused
         COMMAND ${CMAKE_COMMAND} -E env ${_go_env} bash ${CMAKE_CURRENT_SOURCE_DIR}/deploy/refuses_typo.sh
         WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}/deploy/validate)
set_tests_properties(Deploy.KubernetesManifestsDecodeStrictly Deploy.AMisspeltFieldIsRefused PROPERTIES TIMEOUT 600)
