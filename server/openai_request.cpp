#include "server/openai_request.h"

#include "server/json_body.h"

namespace kotae::server {
namespace {

// "content" is a string, or a list of parts of which the text ones count.
std::string message_text(const nlohmann::json& message) {
  const auto it = message.find("content");
  if (it == message.end() || it->is_null()) return "";
  if (it->is_string()) return it->get<std::string>();
  if (!it->is_array()) throw bad_request("a message's 'content' must be a string or a list of parts");
  std::string text;
  for (const auto& part : *it) {
    if (!part.is_object()) throw bad_request("a message's content parts must be objects");
    const auto type = part.find("type");
    if (type == part.end() || !type->is_string() || *type != "text")
      throw bad_request("only text content parts are supported");
    if (!text.empty()) text += "\n";
    text += string_field(part, "text");
  }
  return text;
}

std::vector<ChatMessage> read_messages(const nlohmann::json& body, const ApiLimits& limits) {
  const auto it = body.find("messages");
  if (it == body.end() || !it->is_array() || it->empty()) throw bad_request("'messages' must be a non-empty list");
  if (it->size() > limits.max_messages) {
    throw bad_request("'messages' has more than " + std::to_string(limits.max_messages) + " messages");
  }
  std::vector<ChatMessage> messages;
  for (const auto& m : *it) {
    if (!m.is_object()) throw bad_request("each message must be an object with 'role' and 'content'");
    auto role = string_field(m, "role");
    if (role == "developer") role = "system";
    if (role != "system" && role != "user" && role != "assistant") {
      throw bad_request("message role '" + role + "' is not supported (system, user or assistant)");
    }
    auto text = message_text(m);
    if (text.size() > limits.max_text_bytes) {
      throw bad_request("a message is longer than " + std::to_string(limits.max_text_bytes) + " bytes");
    }
    messages.push_back({role, std::move(text)});
  }
  return messages;
}

// Fields that would change what the answer means. Ignoring them would hand a client something other
// than what it asked for (a reply where it expects a tool call, prose where it expects JSON).
void refuse_unsupported(const nlohmann::json& body) {
  auto present = [&](const char* name) {
    const auto it = body.find(name);
    return it != body.end() && !it->is_null() && !(it->is_array() && it->empty());
  };
  for (const char* name : {"tools", "functions"}) {
    if (present(name))
      throw bad_request(std::string("'") + name + "' is not supported: Kotae's generators do not call tools");
  }
  for (const char* name : {"tool_choice", "function_call"}) {
    if (present(name) && body[name] != "none")
      throw bad_request(std::string("'") + name + "' is not supported: Kotae's generators do not call tools");
  }
  if (present("response_format")) {
    const auto& format = body["response_format"];
    if (!format.is_object() || format.value("type", "") != "text") {
      throw bad_request("'response_format' other than {\"type\": \"text\"} is not supported: answers are plain text");
    }
  }
  if (number_field(body, "n", 1, 1, 1e9) != 1) throw bad_request("'n' must be 1: one choice per request");
  if (bool_field(body, "logprobs", false)) throw bad_request("'logprobs' is not supported");
}

}  // namespace

EmbeddingsRequest read_embeddings_request(const nlohmann::json& body, const ApiLimits& limits,
                                          const std::string& default_model) {
  EmbeddingsRequest request;
  request.texts =
      texts_field(body, "input", limits.max_embedding_inputs, limits.max_text_bytes,
                  " (LangChain's OpenAIEmbeddings sends them unless created with check_embedding_ctx_length=False)");
  if (request.texts.empty()) throw bad_request("'input' is empty");
  for (const auto& t : request.texts) {
    if (t.empty()) throw bad_request("'input' holds an empty text");
  }
  request.model = string_field(body, "model", default_model);
  const std::string format = string_field(body, "encoding_format", "float");
  if (format != "float" && format != "base64") throw bad_request("'encoding_format' must be float or base64");
  request.base64 = format == "base64";
  const std::string input_type = string_field(body, "input_type", "passage");
  if (input_type != "query" && input_type != "passage" && input_type != "document") {
    throw bad_request("'input_type' must be query, passage or document");
  }
  request.role = input_type == "query" ? TextRole::query : TextRole::passage;
  if (body.contains("dimensions") && !body["dimensions"].is_null())
    throw bad_request("'dimensions' is not supported: the model's vectors have a fixed size");
  return request;
}

ChatRequest read_chat_request(const nlohmann::json& body, const ApiLimits& limits) {
  ChatRequest request;
  refuse_unsupported(body);
  request.messages = read_messages(body, limits);
  request.stream = bool_field(body, "stream", false);
  if (body.contains("stream_options") && !body["stream_options"].is_null()) {
    const auto& stream_options = body["stream_options"];
    if (!request.stream) throw bad_request("'stream_options' is only allowed with \"stream\": true");
    if (!stream_options.is_object()) throw bad_request("'stream_options' must be an object");
    request.include_usage = bool_field(stream_options, "include_usage", false);
  }
  request.model = string_field(body, "model", "kotae");
  request.options = body;
  if (body.contains("max_completion_tokens") && (!body.contains("max_tokens") || body["max_tokens"].is_null())) {
    request.options["max_tokens"] = body["max_completion_tokens"];
  }
  request.grounded = body.contains("collection") && !body["collection"].is_null();
  if (request.grounded && request.messages.back().role == "user" &&
      request.messages.back().content.size() > limits.max_query_bytes) {
    throw bad_request("the last user message is the question, and is longer than " +
                      std::to_string(limits.max_query_bytes) + " bytes");
  }
  return request;
}

}  // namespace kotae::server
