#include "chrome_trace_writer.h"

#include <cinttypes>
#include <cstdio>

#include "json_text.h"

namespace pygraph::analyze {
namespace {

// The format's times are microseconds; three decimals keep the trace's nanoseconds.
void write_us(std::ostream& out, int64_t ns) {
  char buf[32];
  const uint64_t magnitude = ns < 0 ? uint64_t(0) - uint64_t(ns) : uint64_t(ns);
  std::snprintf(buf, sizeof buf, "%s%" PRIu64 ".%03" PRIu64, ns < 0 ? "-" : "", magnitude / 1000,
                magnitude % 1000);
  out << buf;
}

}  // namespace

ChromeTraceWriter::ChromeTraceWriter(std::ostream& out, uint64_t limit) : out_(out), limit_(limit) {
  out_ << "{\"traceEvents\":[";
}

void ChromeTraceWriter::declare_process(int64_t pid, std::string name, int sort_index) {
  processes_[pid] = Name{std::move(name), sort_index};
}

void ChromeTraceWriter::declare_track(Track track, std::string name, int sort_index) {
  tracks_[track.pid][track.tid] = Name{std::move(name), sort_index};
}

void ChromeTraceWriter::begin_record() {
  out_ << (first_record_ ? "\n" : ",\n");
  first_record_ = false;
}

void ChromeTraceWriter::write_metadata(int64_t pid, int64_t tid, const char* what,
                                       const nlohmann::json& args) {
  begin_record();
  out_ << "{\"ph\":\"M\",\"pid\":" << pid << ",\"tid\":" << tid << ",\"name\":\"" << what
       << "\",\"args\":" << json_text(args) << "}";
  ++metadata_;
}

bool ChromeTraceWriter::admit(const TimelineEvent& e) {
  if (capped_) return false;
  if (limit_ && events_ >= limit_) {
    capped_ = true;
    capped_at_ns_ = e.ts_ns;
    return false;
  }
  auto p = processes_.find(e.track.pid);
  if (p != processes_.end() && !p->second.written) {
    write_metadata(e.track.pid, 0, "process_name", {{"name", p->second.name}});
    write_metadata(e.track.pid, 0, "process_sort_index", {{"sort_index", p->second.sort_index}});
    p->second.written = true;
  }
  auto process = tracks_.find(e.track.pid);
  if (process != tracks_.end()) {
    auto t = process->second.find(e.track.tid);
    if (t != process->second.end() && !t->second.written) {
      write_metadata(e.track.pid, e.track.tid, "thread_name", {{"name", t->second.name}});
      write_metadata(e.track.pid, e.track.tid, "thread_sort_index",
                     {{"sort_index", t->second.sort_index}});
      t->second.written = true;
    }
  }
  ++events_;
  return true;
}

void ChromeTraceWriter::write_event(const TimelineEvent& e, char phase, char scope) {
  begin_record();
  out_ << "{\"ph\":\"" << phase << "\",\"pid\":" << e.track.pid << ",\"tid\":" << e.track.tid
       << ",\"ts\":";
  write_us(out_, e.ts_ns);
  if (phase == 'X') {
    out_ << ",\"dur\":";
    write_us(out_, e.dur_ns);
  } else if (phase == 'i') {
    out_ << ",\"s\":\"" << scope << "\"";
  }
  out_ << ",\"name\":" << json_text(nlohmann::json(e.name))
       << ",\"cat\":" << json_text(nlohmann::json(e.cat));
  if (*e.cname) out_ << ",\"cname\":\"" << e.cname << "\"";
  if (e.args) out_ << ",\"args\":" << json_text(*e.args);
  out_ << "}";
}

bool ChromeTraceWriter::complete(const TimelineEvent& e) {
  if (!admit(e)) return false;
  write_event(e, 'X', 0);
  return true;
}

bool ChromeTraceWriter::instant(const TimelineEvent& e) {
  if (!admit(e)) return false;
  write_event(e, 'i', 't');
  return true;
}

bool ChromeTraceWriter::counter(const TimelineEvent& e) {
  if (!admit(e)) return false;
  write_event(e, 'C', 0);
  return true;
}

void ChromeTraceWriter::finish(nlohmann::json other) {
  if (capped_) {
    // Global scope ('g'): the viewers draw it across every track, where the output stops.
    const std::string note = "output capped at " + std::to_string(limit_) +
                             " events (--limit): later events are not shown";
    write_event({{}, note, "pygraph", capped_at_ns_, 0, "", nullptr}, 'i', 'g');
    other["note"] = note;
  }
  out_ << "\n],\n\"otherData\":" << json_text(other) << "}\n";
  out_.flush();
}

}  // namespace pygraph::analyze
