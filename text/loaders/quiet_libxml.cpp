#include "text/loaders/quiet_libxml.h"

#include <libxml/parser.h>
#include <libxml/xmlerror.h>

#include <mutex>

namespace kotae::text {
namespace {

void ignore_generic_error(void*, const char*, ...) {}
void ignore_structured_error(void*, xmlErrorPtr) {}

}  // namespace

QuietLibxml::QuietLibxml()
    : generic_handler_(reinterpret_cast<void*>(xmlGenericError)),
      generic_context_(xmlGenericErrorContext),
      structured_handler_(reinterpret_cast<void*>(xmlStructuredError)),
      structured_context_(xmlStructuredErrorContext) {
  static std::once_flag initialised;
  std::call_once(initialised, [] { xmlInitParser(); });
  xmlSetGenericErrorFunc(nullptr, ignore_generic_error);
  xmlSetStructuredErrorFunc(nullptr, ignore_structured_error);
}

QuietLibxml::~QuietLibxml() {
  xmlSetGenericErrorFunc(generic_context_, reinterpret_cast<xmlGenericErrorFunc>(generic_handler_));
  xmlSetStructuredErrorFunc(structured_context_, reinterpret_cast<xmlStructuredErrorFunc>(structured_handler_));
}

}  // namespace kotae::text
