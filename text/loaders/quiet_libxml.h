#pragma once
// libxml2 for the HTML and DOCX loaders: initialised once per process, and kept from printing parse
// errors on stderr. Hostile or sloppy input is expected here; its problems are ours to report as a
// Result, not libxml2's to print.

namespace kotae::text {

// While alive, libxml2's generic and structured error handlers of this thread (libxml2 keeps them per
// thread) are no-ops; the previous handlers come back on destruction. Also makes sure xmlInitParser
// ran once, as libxml2 requires before parsing from several threads.
class QuietLibxml {
 public:
  QuietLibxml();
  ~QuietLibxml();
  QuietLibxml(const QuietLibxml&) = delete;
  QuietLibxml& operator=(const QuietLibxml&) = delete;

 private:
  void* generic_handler_;
  void* generic_context_;
  void* structured_handler_;
  void* structured_context_;
};

}  // namespace kotae::text
