#include <gtest/gtest.h>

#include "rag/standalone_sentence.h"

namespace kotae::rag {
namespace {

TEST(StandaloneSentence, FragmentsStartWhereNoSentenceStarts) {
  for (const char* fragment : {"(which is to say, most websites).", "which is why it works.", "and so on.",
                               "But it fails.", ") and more.", "of the package.", "\u201D he said."}) {
    EXPECT_TRUE(is_fragment(fragment)) << fragment;
  }
  for (const char* sentence :
       {"SQLite works great.", "15 packages were built.", "\"Quoted\" words start it.", "(Dictionaries disagree.)",
        "apt-get installs packages.", "/etc/fstab lists mounts.", "`dpkg -i` installs a file."}) {
    EXPECT_FALSE(is_fragment(sentence)) << sentence;
  }
}

TEST(StandaloneSentence, CompleteSentencesEndWithAFinalMarkAndBalanceTheirBrackets) {
  EXPECT_TRUE(is_complete_sentence("It works (mostly)."));
  EXPECT_TRUE(is_complete_sentence("He said \"no.\""));
  EXPECT_TRUE(is_complete_sentence("Really?"));
  EXPECT_FALSE(is_complete_sentence("The following packages:"));
  EXPECT_FALSE(is_complete_sentence("A heading"));
  EXPECT_FALSE(is_complete_sentence("It works (mostly."));
}

TEST(StandaloneSentence, PointersElsewhereAndRestatementsAreRecognised) {
  for (const char* pointer : {"See section 12.5, \"Reporting bugs\".", "see also the manual.",
                              "For more information, see the Debian Reference.", "Please refer to the wiki.",
                              "If you have found a bug in Debian, please read the instructions for reporting a bug."}) {
    EXPECT_TRUE(points_elsewhere(pointer)) << pointer;
  }
  EXPECT_FALSE(points_elsewhere("You can use the package reportbug that will guide you through the process."));
  EXPECT_FALSE(points_elsewhere("Seeing is believing."));
  EXPECT_TRUE(restates_question("This is how you report bugs in Debian.", "How do I report a bug in Debian?"));
  EXPECT_FALSE(restates_question("The reportbug program mails your bug report to the right address.",
                                 "How do I report a bug in Debian?"));
}

TEST(StandaloneSentence, ContinuationsAndAnaphoraLeanOnTheSentenceBefore) {
  EXPECT_TRUE(continues_previous("However, it is slow."));
  EXPECT_TRUE(continues_previous("In addition, it is slow."));
  EXPECT_FALSE(continues_previous("Howard wrote it."));
  EXPECT_TRUE(starts_with_anaphor("It also upgrades the system."));
  EXPECT_TRUE(starts_with_anaphor("This setup runs on one VM."));
  EXPECT_FALSE(starts_with_anaphor("Items are listed."));
}

}  // namespace
}  // namespace kotae::rag
