// Writes the Chrome trace event format (JSON; Perfetto and chrome://tracing open it) as events
// come, so that a trace of any length is exported without holding its timeline in memory.
//
// Knows tracks and events, nothing of pygraph: the exporter decides what goes where. Tracks are
// (process, thread) pairs declared with a name up front; a track's name is written just before
// its first event, so tracks that end up empty (or beyond the limit) do not show.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <string_view>
#include <unordered_map>

namespace pygraph::analyze {

struct Track {
  int64_t pid = 0, tid = 0;
};

struct TimelineEvent {
  Track track;
  std::string_view name;
  std::string_view cat;    // comma-separated categories, which the viewers filter by
  int64_t ts_ns = 0;       // from the writer's origin
  int64_t dur_ns = 0;      // complete events only
  const char* cname = "";  // a colour name of the format, "" for the viewer's choice
  const nlohmann::json* args = nullptr;
};

class ChromeTraceWriter {
 public:
  // `limit`: most events written (metadata not counted), 0 for no limit.
  ChromeTraceWriter(std::ostream& out, uint64_t limit);

  // Names shown for a process and for a thread track, and the order they are listed in.
  void declare_process(int64_t pid, std::string name, int sort_index);
  void declare_track(Track track, std::string name, int sort_index);

  // A slice with a duration ("X") / a point in time on one track ("i"). Return false when the
  // limit was reached: the event is not written, and nor is anything after it.
  bool complete(const TimelineEvent& e);
  bool instant(const TimelineEvent& e);
  // Values over time ("C"): `args` holds one number per series, drawn as a chart on its process.
  bool counter(const TimelineEvent& e);

  // Closes the document; `other` goes into its "otherData" (shown as metadata by the viewers).
  // When the limit cut the output, a last instant at the first left-out event's time says so.
  void finish(nlohmann::json other);

  uint64_t events() const { return events_; }      // written, metadata not included
  uint64_t metadata() const { return metadata_; }  // process and thread names and orders
  bool capped() const { return capped_; }
  bool ok() const { return out_.good(); }

 private:
  struct Name {
    std::string name;
    int sort_index;
    bool written = false;
  };
  bool admit(const TimelineEvent& e);
  // phase 'X', 'i' or 'C'; an instant's scope: 't' its track, 'g' the whole timeline.
  void write_event(const TimelineEvent& e, char phase, char scope);
  void write_metadata(int64_t pid, int64_t tid, const char* what, const nlohmann::json& args);
  void begin_record();

  std::ostream& out_;
  uint64_t limit_;
  uint64_t events_ = 0, metadata_ = 0;
  bool capped_ = false, first_record_ = true;
  int64_t capped_at_ns_ = 0;
  std::unordered_map<int64_t, Name> processes_;
  std::unordered_map<int64_t, std::unordered_map<int64_t, Name>> tracks_;
};

}  // namespace pygraph::analyze
