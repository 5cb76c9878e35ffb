# The model integrity gate (model/model_integrity, manifest_signature, trusted_keys): every refusal on a
# data folder of the test's own, with copies of the installed int8 embedding model.
kotae_test(model_integrity_tests SOURCES model/model_integrity_test.cpp
           LIBS kotae_model nlohmann_json::nlohmann_json
           PROPERTIES TIMEOUT 300)
