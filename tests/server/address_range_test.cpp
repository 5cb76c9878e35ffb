// server/address_range: which peers are the trusted proxy (--trusted-proxy CIDR).

#include <gtest/gtest.h>

#include "server/address_range.h"

namespace kotae::server {
namespace {

TEST(AddressRangeTest, MatchesIpv4AndIpv6RangesAndIpv4MappedPeers) {
  const auto v4 = AddressRange::parse("10.1.0.0/16");
  ASSERT_TRUE(v4);
  EXPECT_TRUE(v4->contains("10.1.200.7"));
  EXPECT_TRUE(v4->contains("::ffff:10.1.0.1"));  // how a dual-stack socket reports an IPv4 peer
  EXPECT_FALSE(v4->contains("10.2.0.1"));
  EXPECT_FALSE(v4->contains("::1"));
  const auto one = AddressRange::parse("127.0.0.1");
  ASSERT_TRUE(one);
  EXPECT_TRUE(one->contains("127.0.0.1"));
  EXPECT_FALSE(one->contains("127.0.0.2"));
  const auto v6 = AddressRange::parse("fd00::/8");
  ASSERT_TRUE(v6);
  EXPECT_TRUE(v6->contains("fd12:3456::1"));
  EXPECT_FALSE(v6->contains("fe80::1"));
  EXPECT_FALSE(v6->contains("not an address"));
  const auto all = AddressRange::parse("0.0.0.0/0");
  ASSERT_TRUE(all);
  EXPECT_TRUE(all->contains("203.0.113.9"));
  EXPECT_FALSE(all->contains("2001:db8::1"));  // all of IPv4, none of IPv6
}

TEST(AddressRangeTest, RefusesWhatIsNotACidr) {
  for (const char* bad :
       {"", "10.0.0.0/33", "::/129", "10.0.0/8", "10.0.0.0/-1", "10.0.0.0/8x", "host.example/8", "10.0.0.0/"}) {
    EXPECT_FALSE(AddressRange::parse(bad)) << bad;
  }
}

}  // namespace
}  // namespace kotae::server
