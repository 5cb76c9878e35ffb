# Loaders (text/loaders): every format built for real in the tests (a hand-written PDF, DOCX zipped
# with libzip, an encrypted copy by the qpdf CLI), plus the Debian Reference (package
# debian-reference-en) as real documentation and examples/docs' PDF against poppler's own pdftotext;
# cases that need a missing tool or package are skipped.
kotae_test(loader_tests SOURCES text/loaders_test.cpp text/pdf_layout_test.cpp text/zip_loaders_test.cpp
           text/table_loaders_test.cpp text/mail_loader_test.cpp text/document_metadata_test.cpp
           LIBS kotae_loaders kotae_text kotae_core PkgConfig::LIBZIP)
target_compile_definitions(loader_tests PRIVATE KOTAE_EXAMPLES_DIR="${PROJECT_SOURCE_DIR}/examples/docs")

# OCR (text/loaders/ocr, image_loader, the PDF loader's scanned pages): pages of examples/docs' PDF
# rendered by poppler, written as images and image-only PDFs by Leptonica, read back by Tesseract.
kotae_test(ocr_tests SOURCES text/ocr_test.cpp
           LIBS kotae_loaders kotae_text kotae_core PkgConfig::POPPLER_CPP PkgConfig::LEPTONICA
           PROPERTIES TIMEOUT 600 ENVIRONMENT OMP_THREAD_LIMIT=1)  # as the kotae binary runs (platform/openmp_limit.h)
target_compile_definitions(ocr_tests PRIVATE KOTAE_EXAMPLES_DIR="${PROJECT_SOURCE_DIR}/examples/docs")
