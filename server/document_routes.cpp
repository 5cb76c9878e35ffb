// A collection's documents:
//   GET    /v1/collections/{name}/documents            list documents
//   GET    /v1/collections/{name}/documents/{id}       one document (its metadata among the rest)
//   PATCH  /v1/collections/{name}/documents/{id}       {"metadata": {...}} replaces what callers gave
//   GET    /v1/collections/{name}/documents/{id}/text  the text the citations' spans point into
//   GET    /v1/collections/{name}/documents/{id}/file  the original file, while the server has it unchanged
//   DELETE /v1/collections/{name}/documents/{id}       remove one document (and its kept upload)

#include "core/log.h"
#include "server/collection_request.h"
#include "server/document_files.h"
#include "server/json_body.h"
#include "server/server_context.h"
#include "text/document_metadata.h"

namespace kotae::server {
namespace {

nlohmann::json describe(const store::DocumentRecord& d) {
  return {{"id", d.id},
          {"object", "document"},
          {"path", d.path},
          {"title", d.title},
          {"format", d.format},
          {"size_bytes", d.size},
          {"sha256", d.sha256},
          {"chunks", d.chunk_count},
          {"metadata", nlohmann::json::parse(d.metadata_json, nullptr, false, true)}};
}

struct FoundDocument {
  std::shared_ptr<assembly::ServedCollection> collection;
  store::DocumentRecord document;  // with its text
};

FoundDocument find_document(ServerContext& context, const Call& call) {
  auto c = value_or_throw(context.collections->get(call.tenant, call.request.path_params.at("name")));
  const auto id = document_id(call.request.path_params.at("id"));
  auto document = value_or_throw(c->store->document(id));
  if (!document)
    throw ApiError{404, "not_found", "no document " + std::to_string(id) + " in collection '" + c->name + "'"};
  return {std::move(c), std::move(*document)};
}

// The document's record without its text; 404 when there is none.
store::DocumentRecord find_record(const assembly::ServedCollection& c, std::int64_t id) {
  const std::int64_t ids[] = {id};
  auto found = value_or_throw(c.store->documents(ids));
  if (found.empty() || found.front().id != id)
    throw ApiError{404, "not_found", "no document " + std::to_string(id) + " in collection '" + c.name + "'"};
  return std::move(found.front());
}

// PATCH's body: {"metadata": {...}}, checked as an upload's (text/document_metadata.h), a `source` only
// as the document has it. What is stored: that object, with the document's `source` and the keys its
// file set (title, author, created, modified, an e-mail's headers) kept where it does not name them.
std::string patched_metadata(const nlohmann::json& body, const store::DocumentRecord& document) {
  for (const auto& [key, value] : body.items()) {
    if (key != "metadata") throw bad_request("'" + key + "' cannot be changed: a document's 'metadata' can");
  }
  const auto given = body.find("metadata");
  if (given == body.end() || !given->is_object()) throw bad_request("'metadata' must be a JSON object");
  auto stored = nlohmann::json::parse(document.metadata_json, nullptr, /*allow_exceptions=*/false);
  if (!stored.is_object()) stored = nlohmann::json::object();
  const auto source = stored.find(text::kSourceKey);
  const std::string server_source = source != stored.end() && source->is_string() ? source->get<std::string>() : "";
  if (auto checked = text::check_metadata(*given, "metadata", server_source); !checked)
    throw bad_request(checked.error().message);
  return text::replace_caller_metadata(stored, *given).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// RFC 6266's filename*: the name percent-encoded as UTF-8, so no byte of it can end the header.
std::string attachment_name(const std::string& path) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string name = std::filesystem::path(path).filename().string(), out = "UTF-8''";
  for (unsigned char ch : name) {
    if (std::isalnum(ch) || ch == '.' || ch == '-' || ch == '_') {
      out += static_cast<char>(ch);
    } else {
      out += '%';
      out += kHex[ch >> 4];
      out += kHex[ch & 15];
    }
  }
  return out;
}

}  // namespace

void add_document_routes(Router& router, ServerContext& context) {
  router.add("GET", "/v1/collections/{name}/documents", [&context](Call& call) {
    auto c = value_or_throw(context.collections->get(call.tenant, call.request.path_params.at("name")));
    nlohmann::json data = nlohmann::json::array();
    for (const auto& d : value_or_throw(c->store->documents())) data.push_back(describe(d));
    call.responder->send(json_response(200, {{"object", "list"}, {"data", data}}));
  });

  router.add("GET", "/v1/collections/{name}/documents/{id}", [&context](Call& call) {
    auto c = value_or_throw(context.collections->get(call.tenant, call.request.path_params.at("name")));
    call.responder->send(json_response(200, describe(find_record(*c, document_id(call.request.path_params.at("id"))))));
  });

  router.add("PATCH", "/v1/collections/{name}/documents/{id}",
             [&context](Call& call) {
               const auto body = parse_json_object(call.request);
               auto c = value_or_throw(context.collections->get(call.tenant, call.request.path_params.at("name")));
               auto document = find_record(*c, document_id(call.request.path_params.at("id")));
               document.metadata_json = patched_metadata(body, document);
               // A document replaced meanwhile (indexed again) has a new id: this one is gone, 404.
               if (!value_or_throw(c->store->update_document_metadata(document.id, document.metadata_json)))
                 throw ApiError{404, "not_found",
                                "no document " + std::to_string(document.id) + " in collection '" + c->name + "'"};
               c->generation++;  // cached answers show documents' metadata: they are stale now
               call.responder->send(json_response(200, describe(document)));
             },
             {.needs = Role::editor, .audit = "document.update"});

  router.add("GET", "/v1/collections/{name}/documents/{id}/text", [&context](Call& call) {
    auto found = find_document(context, call);
    auto json = describe(found.document);
    json["object"] = "document.text";
    json["text"] = std::move(found.document.text);
    call.responder->send(json_response(200, json));
  });

  router.add("GET", "/v1/collections/{name}/documents/{id}/file", [&context](Call& call) {
    auto found = find_document(context, call);
    auto file = value_or_throw(context.document_files->read(*found.collection, found.document));
    if (!file.bytes) {
      throw ApiError{404, "no_file",
                     "document " + std::to_string(found.document.id) + " has no file to show (" + file.missing_because +
                         "); its text is at …/documents/" + std::to_string(found.document.id) + "/text"};
    }
    const std::string etag = "\"" + found.document.sha256 + "\"";
    HttpResponse response;
    response.headers = {{"ETag", etag},
                        {"Cache-Control", "private, no-cache"},
                        {"X-Content-Type-Options", "nosniff"},
                        {"Content-Security-Policy", "sandbox; default-src 'none'"}};
    if (call.request.header("if-none-match") == etag) {
      response.status = 304;
      response.content_type.clear();
      return call.responder->send(std::move(response));
    }
    const auto shown = inline_content_type(found.document.format);
    response.content_type = shown.empty() ? "application/octet-stream" : shown;
    response.headers.emplace_back("Content-Disposition", std::string(shown.empty() ? "attachment" : "inline") +
                                                             "; filename*=" + attachment_name(found.document.path));
    response.body = std::move(*file.bytes);
    call.responder->send(std::move(response));
  });

  router.add(
      "DELETE", "/v1/collections/{name}/documents/{id}",
      [&context](Call& call) {
        auto c = value_or_throw(context.collections->get(call.tenant, call.request.path_params.at("name")));
        const auto id = document_id(call.request.path_params.at("id"));
        std::lock_guard writing(c->writer);
        auto document = value_or_throw(c->store->document(id));
        if (!document)
          throw ApiError{404, "not_found", "no document " + std::to_string(id) + " in collection '" + c->name + "'"};
        value_or_throw(c->store->remove_document(document->path));
        ok_or_throw(c->store->save_vector_index());
        c->generation++;
        if (auto forgotten = context.document_files->forget(*c, *document); !forgotten) {
          log_event("kept_file_not_removed", {{"document", id}, {"reason", forgotten.error().message}}, LogLevel::warn);
        }
        call.responder->send(json_response(200, {{"id", id}, {"object", "document"}, {"deleted", true}}));
      },
      {.needs = Role::editor, .audit = "document.delete"});
}

}  // namespace kotae::server
