#include "queue/queue_metrics.h"

#include <cstdio>
#include <functional>

namespace kotae::queue {

namespace {

// Stream keys and queue names are ours (prefix, band, tenant name), but a label value is escaped anyway.
std::string label(const std::string& value) {
  std::string out;
  for (const char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

}  // namespace

void append_metric_header(std::string& out, const char* name, const char* type, const char* help) {
  out += "# HELP ";
  out += name;
  out += ' ';
  out += help;
  out += "\n# TYPE ";
  out += name;
  out += ' ';
  out += type;
  out += '\n';
}

std::string queue_metrics_text(const std::vector<NamedQueueStats>& queues) {
  std::string out;
  if (queues.empty()) return out;
  auto queue = [](const NamedQueueStats& q) { return "queue=\"" + label(q.queue) + "\""; };
  auto gauge = [&](const char* name, const char* help, const std::function<double(const StreamStats&)>& value) {
    append_metric_header(out, name, "gauge", help);
    for (const auto& q : queues) {
      for (const auto& s : q.stats.streams) {
        out += name;
        out += '{' + queue(q) + ",stream=\"" + label(s.stream) + "\"} " + number(value(s)) + '\n';
      }
    }
  };
  gauge("kotae_queue_waiting", "Entries no worker has taken yet.",
        [](const StreamStats& s) { return double(s.waiting); });
  gauge("kotae_queue_pending", "Entries taken by a worker and not acknowledged.",
        [](const StreamStats& s) { return double(s.pending); });
  gauge("kotae_queue_retrying", "Pending entries delivered more than once.",
        [](const StreamStats& s) { return double(s.retrying); });
  gauge("kotae_queue_oldest_age_seconds", "Age of the oldest entry still in the stream.",
        [](const StreamStats& s) { return s.oldest_age_s; });
  append_metric_header(out, "kotae_queue_dead_letters", "gauge",
                       "Entries given up after their attempts, in the dead-letter stream.");
  for (const auto& q : queues)
    out += "kotae_queue_dead_letters{" + queue(q) + "} " + number(double(q.stats.dead_letters)) + '\n';
  return out;
}

}  // namespace kotae::queue
