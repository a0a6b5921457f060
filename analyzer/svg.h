// A hand-written SVG document, element by element, so that charts need no library: numbers
// with one decimal (stable output for golden files), text escaped.
#pragma once

#include <sstream>
#include <string>
#include <string_view>

namespace pygraph::analyze {

class Svg {
 public:
  Svg(double width, double height);

  // `attrs`: further attributes as written, e.g. "class=\"eager\"". `tooltip`: a <title>
  // child, which browsers show on hover ("" for none).
  void rect(double x, double y, double w, double h, std::string_view fill, std::string_view attrs,
            std::string_view tooltip = "");
  void line(double x1, double y1, double x2, double y2, std::string_view stroke,
            std::string_view attrs);
  // anchor: start, middle or end.
  void text(double x, double y, std::string_view content, std::string_view attrs,
            std::string_view anchor = "start");
  void open_group(std::string_view attrs);
  void close_group();

  std::string finish();  // the document, closed

  static std::string escape(std::string_view text);
  static std::string num(double v);  // one decimal, "-0.0" never

 private:
  std::ostringstream out_;
};

}  // namespace pygraph::analyze
