#include "svg.h"

#include <cmath>
#include <cstdio>

namespace pygraph::analyze {

Svg::Svg(double width, double height) {
  out_ << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
       << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << num(width) << "\" height=\""
       << num(height) << "\" viewBox=\"0 0 " << num(width) << " " << num(height)
       << "\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n";
}

std::string Svg::num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", std::round(v * 10) / 10 + 0.0);  // +0.0: no "-0.0"
  return buf;
}

namespace {

// Length of the well-formed UTF-8 sequence at text[i], 0 if it is not one (names and frames come
// from the traced program, and an XML reader refuses malformed text).
size_t utf8_length(std::string_view text, size_t i) {
  const unsigned char c = text[i];
  const size_t n = c < 0x80           ? 1
                   : (c >> 5) == 0x6  ? 2
                   : (c >> 4) == 0xe  ? 3
                   : (c >> 3) == 0x1e ? 4
                                      : 0;
  if (n == 0 || i + n > text.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((static_cast<unsigned char>(text[i + k]) >> 6) != 0x2) return 0;
  }
  return n;
}

}  // namespace

std::string Svg::escape(std::string_view text) {
  std::string s;
  for (size_t i = 0; i < text.size();) {
    const size_t n = utf8_length(text, i);
    if (n == 0) {
      s += '?';
      ++i;
      continue;
    }
    if (n > 1) {
      s.append(text.substr(i, n));
      i += n;
      continue;
    }
    const char c = text[i++];
    switch (c) {
      case '&':
        s += "&amp;";
        break;
      case '<':
        s += "&lt;";
        break;
      case '>':
        s += "&gt;";
        break;
      case '"':
        s += "&quot;";
        break;
      default:
        // Control characters are not allowed in XML 1.0 text.
        s += static_cast<unsigned char>(c) < 0x20 ? '?' : c;
    }
  }
  return s;
}

void Svg::rect(double x, double y, double w, double h, std::string_view fill,
               std::string_view attrs, std::string_view tooltip) {
  out_ << "<rect x=\"" << num(x) << "\" y=\"" << num(y) << "\" width=\"" << num(w) << "\" height=\""
       << num(h) << "\" fill=\"" << fill << "\"";
  if (!attrs.empty()) out_ << " " << attrs;
  if (tooltip.empty()) {
    out_ << "/>\n";
  } else {
    out_ << "><title>" << escape(tooltip) << "</title></rect>\n";
  }
}

void Svg::line(double x1, double y1, double x2, double y2, std::string_view stroke,
               std::string_view attrs) {
  out_ << "<line x1=\"" << num(x1) << "\" y1=\"" << num(y1) << "\" x2=\"" << num(x2) << "\" y2=\""
       << num(y2) << "\" stroke=\"" << stroke << "\"";
  if (!attrs.empty()) out_ << " " << attrs;
  out_ << "/>\n";
}

void Svg::text(double x, double y, std::string_view content, std::string_view attrs,
               std::string_view anchor) {
  out_ << "<text x=\"" << num(x) << "\" y=\"" << num(y) << "\"";
  if (anchor != "start") out_ << " text-anchor=\"" << anchor << "\"";
  if (!attrs.empty()) out_ << " " << attrs;
  out_ << ">" << escape(content) << "</text>\n";
}

void Svg::open_group(std::string_view attrs) {
  out_ << "<g " << attrs << ">\n";
}
void Svg::close_group() {
  out_ << "</g>\n";
}

std::string Svg::finish() {
  out_ << "</svg>\n";
  return out_.str();
}

}  // namespace pygraph::analyze
