// A small SVG writer: shapes and text appended to one document. Coordinates
// are in pixels, y down. Text is escaped.
#ifndef TESSERA_LOADTEST_SVG_H_
#define TESSERA_LOADTEST_SVG_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tessera::loadtest {

class SvgDocument {
 public:
  SvgDocument(double width, double height);

  struct Stroke {
    std::string color = "#000";
    double width = 1;
    std::string dash;  // e.g. "4 3"; empty: solid
  };
  enum class Anchor { kStart, kMiddle, kEnd };
  struct Font {
    double size = 12;
    Anchor anchor = Anchor::kStart;
    std::string color = "#222";
    bool bold = false;
    double rotate = 0;  // degrees, around the text's position
  };

  void Rect(double x, double y, double w, double h, std::string_view fill,
            const Stroke* stroke = nullptr);
  void Line(double x1, double y1, double x2, double y2, const Stroke& stroke);
  void Polyline(const std::vector<std::pair<double, double>>& points,
                const Stroke& stroke);
  void Text(double x, double y, std::string_view text, const Font& font);

  // The complete document.
  std::string Finish() const;

 private:
  double width_, height_;
  std::string body_;
};

// "a<b" -> "a&lt;b" (also & > " ').
std::string XmlEscape(std::string_view text);

}  // namespace tessera::loadtest

#endif  // TESSERA_LOADTEST_SVG_H_
