#pragma once
// The frame of a server store's tests that run alike on SQLite and PostgreSQL (parameter "sqlite" or
// "postgres"): two tenants and a folder of the test's own (the PostgreSQL fixture's server is shared by
// every test), and the fixture's database migrated to every component's tables.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "core/random_id.h"
#include "store/postgres_connection.h"
#include "store/postgres_schema.h"
#include "support/fixture_url.h"

namespace kotae::testing {

class StoreBackendTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const std::string unique = std::to_string(::getpid()) + "-" + random_id("");
    acme_ = "acme-" + unique;
    globex_ = "globex-" + unique;
    folder_ = std::filesystem::temp_directory_path() / ("kotae-store-" + unique);
    std::filesystem::create_directories(folder_);
  }
  void TearDown() override { std::filesystem::remove_all(folder_); }

  bool sqlite() const { return GetParam() == "sqlite"; }
  // The PostgreSQL fixture's URL, its tables migrated; empty, with the test failed, when it is missing.
  std::string postgres_url(const char* url_file) {
    const std::string url = fixture_url(url_file);
    EXPECT_FALSE(url.empty()) << "no PostgreSQL server: " << url_file;
    if (url.empty()) return url;
    auto connection = store::PgConnection::connect(url);
    EXPECT_TRUE(connection.ok()) << connection.error().message;
    if (!connection.ok()) return "";
    auto migrated = store::migrate_postgres_schema(**connection);
    EXPECT_TRUE(migrated.ok()) << migrated.error().message;
    return migrated.ok() ? url : "";
  }

  std::string acme_, globex_;
  std::filesystem::path folder_;
};

inline std::string backend_name(const ::testing::TestParamInfo<std::string>& p) {
  return p.param;
}

}  // namespace kotae::testing
