# Loaders (text/loaders): every format built for real in the tests (a hand-written PDF, DOCX zipped
# with libzip, an encrypted copy by the qpdf CLI), plus the Debian Reference (package
# debian-reference-en) as real documentation; cases that need a missing tool or package are skipped.
kotae_test(loader_tests SOURCES text/loaders_test.cpp LIBS kotae_loaders kotae_text kotae_core PkgConfig::LIBZIP)
