# Porter stemmer (text/porter_stemmer): the classic pairs, and term parity with SQLite FTS5's
# porter tokenizer over the Debian FAQ (package doc-debian).
kotae_test(porter_stemmer_tests SOURCES text/porter_stemmer_test.cpp LIBS kotae_store kotae_text SQLite::SQLite3)
