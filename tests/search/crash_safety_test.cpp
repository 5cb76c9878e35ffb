// Crash safety of ingestion, with the real binary: a `kotae index` child is killed with SIGKILL at
// random moments again and again; after each kill the collection must pass SQLite's and FTS5's
// integrity checks, the vector index and the chunks table must agree, and every document the child
// reported as indexed must be there, whole and searchable. Then a child runs out of disk
// (RLIMIT_FSIZE) mid-ingestion: it must fail with a clear error and leave the collection consistent.
// The same over PostgreSQL (the server CTest starts), with two children writing the collection at once
// each round, as two replicas would: no chunk lost, none duplicated, every acknowledged document whole.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/sha256.h"
#include "store/catalog.h"
#include "store/collection.h"
#include "support/test_data.h"

namespace kotae {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> faq_paragraphs() {
  std::vector<std::string> paragraphs;
  FILE* pipe = popen("gzip -dc /usr/share/doc/debian/FAQ/debian-faq.en.txt.gz", "r");
  if (!pipe) return paragraphs;
  std::string text;
  std::array<char, 65536> buffer;
  while (std::size_t n = fread(buffer.data(), 1, buffer.size(), pipe)) text.append(buffer.data(), n);
  pclose(pipe);
  std::string current;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.find_first_not_of(" \t") == std::string::npos) {
      if (current.size() > 200) paragraphs.push_back(current);
      current.clear();
    } else {
      current += line + "\n";
    }
  }
  return paragraphs;
}

// A word no real text contains, unique to file `i`, so BM25 can find exactly that document.
std::string marker(std::size_t i) {
  std::string word = "kmark";
  for (std::size_t n = i + 26 * 26; n; n /= 26) word += char('a' + n % 26);
  return word;
}

struct Child {
  pid_t pid = -1;
  fs::path out, err;
};

// Starts `kotae ARGS` with stdout/stderr in files; `file_size_limit` > 0 sets RLIMIT_FSIZE.
Child start_kotae(const std::vector<std::string>& args, const fs::path& out, const fs::path& err,
                  rlim_t file_size_limit = 0) {
  Child child{-1, out, err};
  child.pid = fork();
  if (child.pid == 0) {
    const int o = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(o, STDOUT_FILENO);
    dup2(e, STDERR_FILENO);
    if (file_size_limit) {
      signal(SIGXFSZ, SIG_IGN);  // writes past the limit fail with EFBIG instead of killing us
      rlimit limit{file_size_limit, file_size_limit};
      setrlimit(RLIMIT_FSIZE, &limit);
    }
    std::vector<char*> argv{const_cast<char*>(KOTAE_BINARY)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(KOTAE_BINARY, argv.data());
    _exit(127);
  }
  return child;
}

int wait_for(const Child& child) {
  int status = 0;
  waitpid(child.pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string read_all(const fs::path& file) {
  std::ifstream in(file);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Paths the child reported as indexed (complete lines only: a line cut by the kill is not a report).
std::vector<std::string> reported_indexed(const fs::path& out) {
  std::vector<std::string> paths;
  std::istringstream lines(read_all(out));
  for (std::string line; std::getline(lines, line);) {
    if (lines.eof() && !read_all(out).ends_with("\n")) break;
    auto event = nlohmann::json::parse(line, nullptr, false);
    if (event.is_object() && event.value("event", "") == "file" && event.value("status", "") == "indexed")
      paths.push_back(event["path"]);
  }
  return paths;
}

class CrashSafetyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = testing::fresh_temp_dir("kotae-crash");
    fs::create_directories(root_ / "data");
    fs::create_directory_symlink(models_dir(default_data_dir()), root_ / "data" / "models");
    paragraphs_ = faq_paragraphs();
    ASSERT_GT(paragraphs_.size(), 100u) << "debian-faq's text is missing (scripts/setup installs it)";
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(root_);
  }

  // Writes file i with a few FAQ paragraphs chosen by `variant`; returns its SHA-256.
  std::string write_document(const fs::path& dir, std::size_t i, std::size_t variant) {
    std::string text = "Document " + marker(i) + ".\n\n";
    for (std::size_t p = 0; p < 3; ++p) text += paragraphs_[(i * 7 + variant * 13 + p) % paragraphs_.size()] + "\n";
    fs::create_directories(dir);
    const fs::path path = dir / ("doc-" + std::to_string(i) + ".txt");
    std::ofstream(path, std::ios::binary) << text;
    return sha256_hex(text);
  }

  // Rewrites `count` files picked at random as `version`: the new contents are what the collection
  // must hold once acknowledged (`current`), or may hold if committed without a report (`newer`).
  void change_files(const fs::path& docs, std::size_t count, std::size_t version, std::mt19937& rng,
                    std::uniform_int_distribution<std::size_t>& pick, std::map<std::string, std::string>& current,
                    std::map<std::string, std::set<std::string>>& newer) {
    for (std::size_t n = 0; n < count; ++n) {
      const std::size_t i = pick(rng);
      const std::string path = (docs / ("doc-" + std::to_string(i) + ".txt")).string();
      current[path] = write_document(docs, i, version);
      newer[path].insert(current[path]);
    }
  }

  // Empty: the embedded SQLite store in DATA.
  std::string store_url_;
  std::string collection_ = "crash";

  // `replica`: which index cache a PostgreSQL child uses (each replica has its own, and its own writer
  // lock: two children with different ones write at the same time).
  std::vector<std::string> index_args(const fs::path& docs, int replica = 0) const {
    std::vector<std::string> args{"index",     docs.string(), "--collection",
                                  collection_, "--data",      (root_ / "data").string(),
                                  "--json",    "--model",     "all-minilm-l6-v2-int8"};
    if (!store_url_.empty()) {
      for (const std::string& more : {std::string("--store"), store_url_, std::string("--index-cache"),
                                      (root_ / ("cache-" + std::to_string(replica))).string()}) {
        args.push_back(more);
      }
    }
    return args;
  }

  Result<std::unique_ptr<store::Collection>> open_collection() const {
    auto catalog = store::Catalog::open({store_url_, root_ / "data", root_ / "checker-cache"});
    if (!catalog) return catalog.error();
    return (*catalog)->open(store::kLocalTenant, collection_, nullptr);
  }

  // The collection is consistent and every acknowledged document is whole and searchable: the version
  // acknowledged, or a newer one written to disk since (committed, but killed before it could say so).
  void expect_consistent(const std::map<std::string, std::string>& acknowledged, const std::string& when,
                         const std::map<std::string, std::set<std::string>>& newer = {}) {
    auto collection = open_collection();
    // Killed before it created the collection: nothing was promised.
    if (!collection && collection.error().code == ErrorCode::not_found && acknowledged.empty()) return;
    ASSERT_TRUE(collection) << when << ": " << collection.error().message;
    auto report = (*collection)->check();
    ASSERT_TRUE(report) << when << ": " << report.error().message;
    EXPECT_TRUE(report->integrity_ok) << when << ": " << report->details;
    EXPECT_TRUE(report->fts_ok) << when << ": " << report->details;
    EXPECT_EQ(report->chunks, report->vectors) << when;
    EXPECT_EQ(report->chunks_without_vector, 0u) << when;
    EXPECT_EQ(report->vectors_without_chunk, 0u) << when;
    // Every document, acknowledged or not, is whole: as many chunks as it says it has.
    auto documents = (*collection)->documents();
    ASSERT_TRUE(documents) << when << ": " << documents.error().message;
    for (const auto& document : *documents) {
      auto chunks = (*collection)->document_chunks(document.id);
      ASSERT_TRUE(chunks);
      EXPECT_EQ(static_cast<std::int64_t>(chunks->size()), document.chunk_count)
          << when << ": " << document.path << " is not whole";
    }
    for (const auto& [path, sha] : acknowledged) {
      auto document = (*collection)->find_document(path);
      ASSERT_TRUE(document && *document) << when << ": acknowledged " << path << " is missing";
      const bool newer_version = newer.contains(path) && newer.at(path).contains((*document)->sha256);
      EXPECT_TRUE((*document)->sha256 == sha || newer_version)
          << when << ": " << path << " is not the acknowledged version";
      auto chunks = (*collection)->document_chunks((*document)->id);
      ASSERT_TRUE(chunks);
      EXPECT_GT(chunks->size(), 0u);
      EXPECT_EQ(static_cast<std::int64_t>(chunks->size()), (*document)->chunk_count) << when << ": " << path;
      const std::size_t i = std::stoul(fs::path(path).stem().string().substr(4));
      auto hits = (*collection)->search_bm25(marker(i), 3);
      ASSERT_TRUE(hits);
      ASSERT_FALSE(hits->empty()) << when << ": " << path << " is not searchable";
      EXPECT_EQ((*hits)[0].document_id, (*document)->id) << when << ": " << path;
    }
  }

  fs::path root_;
  std::vector<std::string> paragraphs_;
};

TEST_F(CrashSafetyTest, SurvivesSigkillAtRandomMomentsAndDiskFull) {
  constexpr std::size_t kFiles = 48, kKills = 24, kChangedPerRound = 12;
  const fs::path docs = root_ / "docs";
  std::map<std::string, std::string> current;          // path -> sha of the file on disk now
  std::map<std::string, std::string> acknowledged;     // path -> sha the collection must hold
  std::map<std::string, std::set<std::string>> newer;  // path -> versions written since
  for (std::size_t i = 0; i < kFiles; ++i)
    current[(docs / ("doc-" + std::to_string(i) + ".txt")).string()] = write_document(docs, i, 0);

  std::mt19937 rng(20261202);
  std::uniform_int_distribution<int> delay_ms(50, 1500);
  std::uniform_int_distribution<std::size_t> pick(0, kFiles - 1);
  std::size_t killed_mid_run = 0;
  for (std::size_t round = 0; round < kKills; ++round) {
    // Change a few files so every round has work: new documents and replacements.
    change_files(docs, kChangedPerRound, round + 1, rng, pick, current, newer);
    const Child child = start_kotae(index_args(docs), root_ / "out.jsonl", root_ / "err.txt");
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms(rng)));
    kill(child.pid, SIGKILL);
    const int code = wait_for(child);
    if (code == 128 + SIGKILL) ++killed_mid_run;
    for (const auto& path : reported_indexed(child.out)) {
      acknowledged[path] = current.at(path);
      newer.erase(path);
    }
    expect_consistent(acknowledged, "after kill " + std::to_string(round + 1), newer);
    if (HasFatalFailure()) return;
  }
  EXPECT_GE(killed_mid_run, kKills / 2) << "most kills should land while the child is still working";
  std::printf("%zu kills, %zu while the child was still indexing; %zu documents acknowledged\n", kKills, killed_mid_run,
              acknowledged.size());

  // A run to the end indexes everything.
  const Child finish = start_kotae(index_args(docs), root_ / "out.jsonl", root_ / "err.txt");
  ASSERT_EQ(wait_for(finish), 0) << read_all(finish.err);
  acknowledged = current;
  newer.clear();
  expect_consistent(acknowledged, "after a complete run");

  // Disk full: new files, and no file may grow more than a little past the collection's size now.
  const fs::path more = root_ / "more";
  for (std::size_t i = kFiles; i < kFiles + 40; ++i)
    current[(more / ("doc-" + std::to_string(i) + ".txt")).string()] = write_document(more, i, 0);
  const fs::path db = root_ / "data" / "collections" / "crash" / "kotae.db";
  std::uintmax_t largest = fs::file_size(db);
  for (const auto& entry : fs::directory_iterator(db.parent_path())) largest = std::max(largest, entry.file_size());
  auto args = index_args(more);
  const Child full = start_kotae(args, root_ / "out.jsonl", root_ / "err.txt", largest + 64 * 1024);
  const int code = wait_for(full);
  const std::string err = read_all(full.err);
  EXPECT_NE(code, 0) << "the run should have hit the file size limit";
  EXPECT_TRUE(err.find("disk full") != std::string::npos || err.find("too large") != std::string::npos)
      << "unclear error: " << err;
  const auto indexed_before_full = reported_indexed(full.out);
  for (const auto& path : indexed_before_full) acknowledged[path] = current.at(path);
  std::printf("disk full after %zu of 40 new documents: %s", indexed_before_full.size(), err.c_str());
  expect_consistent(acknowledged, "after disk full");
}

// Two `kotae index` children over the same files and the same PostgreSQL collection at once, both
// killed at random moments, round after round.
TEST_F(CrashSafetyTest, TwoWritersKilledAtRandomMomentsOverPostgres) {
  std::ifstream url_file(KOTAE_TEST_POSTGRES_URL_FILE);
  std::getline(url_file, store_url_);
  ASSERT_FALSE(store_url_.empty()) << "no PostgreSQL server: " << KOTAE_TEST_POSTGRES_URL_FILE;
  collection_ = "crash-" + std::to_string(::getpid());
  constexpr std::size_t kFiles = 32, kKills = 12, kChangedPerRound = 16;
  const fs::path docs = root_ / "docs";
  std::map<std::string, std::string> current, acknowledged;
  std::map<std::string, std::set<std::string>> newer;
  for (std::size_t i = 0; i < kFiles; ++i)
    current[(docs / ("doc-" + std::to_string(i) + ".txt")).string()] = write_document(docs, i, 0);

  std::mt19937 rng(20261205);
  std::uniform_int_distribution<int> delay_ms(50, 1200);
  std::uniform_int_distribution<std::size_t> pick(0, kFiles - 1);
  std::size_t killed_mid_run = 0, both_wrote = 0;
  for (std::size_t round = 0; round < kKills; ++round) {
    // Change a few files so every round has work: new documents and replacements.
    change_files(docs, kChangedPerRound, round + 1, rng, pick, current, newer);
    const Child first = start_kotae(index_args(docs, 1), root_ / "out-1.jsonl", root_ / "err-1.txt");
    const Child second = start_kotae(index_args(docs, 2), root_ / "out-2.jsonl", root_ / "err-2.txt");
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms(rng)));
    kill(first.pid, SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms(rng) / 4));
    kill(second.pid, SIGKILL);
    killed_mid_run += (wait_for(first) == 128 + SIGKILL) + (wait_for(second) == 128 + SIGKILL);
    std::size_t writers = 0;
    for (const Child* child : {&first, &second}) {
      const auto indexed = reported_indexed(child->out);
      writers += !indexed.empty();
      for (const auto& path : indexed) {
        acknowledged[path] = current.at(path);
        newer.erase(path);
      }
    }
    both_wrote += writers == 2;
    expect_consistent(acknowledged, "after kill " + std::to_string(round + 1), newer);
    if (HasFatalFailure()) return;
  }
  std::printf(
      "%zu rounds of two writers: %zu of %zu kills while indexing, %zu rounds where both stored documents; "
      "%zu documents acknowledged\n",
      kKills, killed_mid_run, 2 * kKills, both_wrote, acknowledged.size());
  EXPECT_GE(killed_mid_run, kKills) << "most kills should land while the children are still working";
  EXPECT_GE(both_wrote, 2u) << "the two writers should have stored documents at the same time in some rounds";
  const Child finish = start_kotae(index_args(docs), root_ / "out.jsonl", root_ / "err.txt");
  ASSERT_EQ(wait_for(finish), 0) << read_all(finish.err);
  expect_consistent(current, "after a complete run");
  auto collection = open_collection();
  ASSERT_TRUE(collection) << collection.error().message;
  EXPECT_EQ((*collection)->document_count(), kFiles);  // one per path: none duplicated
}

}  // namespace
}  // namespace kotae
