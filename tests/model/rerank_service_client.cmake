# The reranking service client (model/rerank_service_client): its request bodies and answer parser for
# each API (hostile answers included), and the client against loopback sockets that refuse or never answer.
kotae_test(rerank_service_client_tests SOURCES model/rerank_service_client_test.cpp
           LIBS kotae_model nlohmann_json::nlohmann_json
           PROPERTIES TIMEOUT 120)
