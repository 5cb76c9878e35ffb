# The OpenAI-compatible client (model/openai_chat_client): talks to a real llama-server that the test
# starts on a loopback port with a tiny generated chat model, and to scripted loopback listeners.
kotae_test(openai_chat_client_tests SOURCES model/openai_chat_client_test.cpp
           LIBS kotae_model nlohmann_json::nlohmann_json
           PROPERTIES TIMEOUT 300)
target_compile_definitions(openai_chat_client_tests PRIVATE KOTAE_LLAMA_SERVER="${KOTAE_LLAMA_SERVER}")
