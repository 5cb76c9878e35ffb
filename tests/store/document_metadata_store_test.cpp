// A document's metadata changed in place (Collection::update_document_metadata, PATCH's store call) on
// both record stores, SQLite and PostgreSQL (the CTest fixture's server): the record changes and nothing
// else does, the change-log position moves on (what cached answers are keyed by), another process's or
// replica's copy of the collection catches up without losing or doubling a chunk, and an unknown id, or
// another collection's, changes nothing.

#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>

#include "store/collection.h"
#include "store/postgres_connection.h"
#include "store/postgres_record_store.h"
#include "support/store_backend_test.h"
#include "tests/store/store_test_support.h"

namespace kotae::store {
namespace {

#define ASSERT_OK(result) ASSERT_TRUE((result).ok()) << (result).error().message

constexpr std::size_t kDim = 16;

class DocumentMetadataStore : public kotae::testing::StoreBackendTest {
 protected:
  // A copy of the collection `name` as one process or replica holds it (created by the first).
  std::unique_ptr<Collection> open(const std::string& name, const std::string& snapshot) {
    const CollectionInfo info{"test-embedder/fp32", kDim, 256, 32};
    Result<std::unique_ptr<Collection>> opened = make_error(ErrorCode::internal, "not opened");
    if (sqlite()) {
      opened = Collection::open_or_create(folder_ / name, info);
    } else {
      if (url_.empty()) url_ = postgres_url(KOTAE_TEST_POSTGRES_URL_FILE);
      if (url_.empty()) return nullptr;
      auto records = PostgresRecordStore::open(std::make_shared<PgPool>(url_), acme_, name, &info);
      EXPECT_TRUE(records.ok()) << records.error().message;
      if (!records) return nullptr;
      opened = Collection::open(std::move(*records), folder_ / snapshot);
    }
    EXPECT_TRUE(opened.ok()) << opened.error().message;
    return opened ? std::move(*opened) : nullptr;
  }
  std::string url_;
};

std::string metadata_of(const Collection& collection, std::int64_t id) {
  auto record = collection.document(id);
  return record.ok() && record->has_value() ? (*record)->metadata_json : "<none>";
}

TEST_P(DocumentMetadataStore, MetadataChangesInPlaceAndEveryCopyCatchesUp) {
  auto writer = open("notes", "writer.index");
  ASSERT_TRUE(writer);
  std::mt19937 rng(11);
  auto guide =
      testing::make_document("guide.md", "md", {"Rotate the keys monthly.", "Backups run nightly."}, kDim, rng);
  guide.document.metadata_json = R"({"source":"upload","dept":"hr","title":"Guide"})";
  const auto faq = testing::make_document("faq.md", "md", {"A virtual package names a capability."}, kDim, rng);
  auto guide_id = testing::put(*writer, guide);
  ASSERT_OK(guide_id);
  ASSERT_OK(testing::put(*writer, faq));
  auto reader = open("notes", "reader.index");  // another process, or replica, with its own indexes
  ASSERT_TRUE(reader);
  ASSERT_EQ(reader->chunk_count(), 3u);

  const std::int64_t before = writer->change_position();
  const std::string updated = R"({"source":"upload","dept":"legal","title":"Guide","tags":["keys"]})";
  auto changed = writer->update_document_metadata(*guide_id, updated);
  ASSERT_OK(changed);
  EXPECT_TRUE(*changed);
  EXPECT_GT(writer->change_position(), before);  // cached answers keyed by the position are stale now
  EXPECT_EQ(metadata_of(*writer, *guide_id), updated);
  const std::int64_t ids[] = {*guide_id};
  auto listed = writer->documents(ids);
  ASSERT_OK(listed);
  EXPECT_EQ(listed->front().metadata_json, updated);
  auto found = writer->find_document("guide.md");
  ASSERT_OK(found);
  EXPECT_EQ((*found)->metadata_json, updated);
  EXPECT_EQ((*found)->id, *guide_id);  // the same document: nothing else of it changed
  EXPECT_EQ((*found)->sha256, guide.document.sha256);
  EXPECT_EQ(writer->chunk_count(), 3u);
  auto nearest = writer->search_vector(guide.embedding(1), 1);
  ASSERT_OK(nearest);
  ASSERT_EQ(nearest->size(), 1u);
  EXPECT_EQ(nearest->front().document_id, *guide_id);

  // An unknown id changes nothing, and the position stays.
  const std::int64_t after = writer->change_position();
  auto missing = writer->update_document_metadata(*guide_id + 1000, R"({"dept":"x"})");
  ASSERT_OK(missing);
  EXPECT_FALSE(*missing);
  EXPECT_EQ(writer->change_position(), after);

  // The other copy learns of the change from the change log: same position, every chunk once, found.
  ASSERT_OK(reader->catch_up());
  EXPECT_EQ(reader->change_position(), writer->change_position());
  EXPECT_EQ(reader->chunk_count(), 3u);
  EXPECT_EQ(metadata_of(*reader, *guide_id), updated);
  auto seen = reader->search_vector(guide.embedding(0), 1);
  ASSERT_OK(seen);
  ASSERT_EQ(seen->size(), 1u);
  EXPECT_EQ(seen->front().document_id, *guide_id);
  auto words = reader->search_bm25("backups nightly", 5);
  ASSERT_OK(words);
  ASSERT_EQ(words->size(), 1u);
  auto report = reader->check();
  ASSERT_OK(report);
  EXPECT_TRUE(report->ok()) << report->details;

  // Opened afresh (the vector snapshot replayed over the change's log entries): all there, once.
  ASSERT_OK(writer->save_vector_index());
  writer.reset();
  reader.reset();
  auto reopened = open("notes", "writer.index");
  ASSERT_TRUE(reopened);
  EXPECT_EQ(reopened->chunk_count(), 3u);
  EXPECT_EQ(metadata_of(*reopened, *guide_id), updated);
  auto checked = reopened->check();
  ASSERT_OK(checked);
  EXPECT_TRUE(checked->ok()) << checked->details;
}

TEST_P(DocumentMetadataStore, AnotherCollectionsDocumentIsNotChanged) {
  auto notes = open("notes", "notes.index");
  auto other = open("other", "other.index");
  ASSERT_TRUE(notes && other);
  std::mt19937 rng(5);
  auto doc = testing::make_document("a.md", "md", {"Alpha."}, kDim, rng);
  ASSERT_OK(testing::put(*notes, doc));
  auto other_doc = testing::make_document("b.md", "md", {"Beta.", "Gamma."}, kDim, rng);
  other_doc.document.metadata_json = R"({"dept":"hr"})";
  auto other_id = testing::put(*other, other_doc);
  ASSERT_OK(other_id);
  if (!sqlite()) {  // one database, ids shared by every collection: the other's id is not this one's
    auto changed = notes->update_document_metadata(*other_id, R"({"dept":"spoofed"})");
    ASSERT_OK(changed);
    EXPECT_FALSE(*changed);
  }
  EXPECT_EQ(metadata_of(*other, *other_id), R"({"dept":"hr"})");
}

INSTANTIATE_TEST_SUITE_P(Stores, DocumentMetadataStore, ::testing::Values("sqlite", "postgres"),
                         kotae::testing::backend_name);

}  // namespace
}  // namespace kotae::store
