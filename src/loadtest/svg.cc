#include "loadtest/svg.h"

#include <cstdio>

namespace tessera::loadtest {
namespace {

std::string Num(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f", v);
  return buffer;
}

std::string StrokeAttributes(const SvgDocument::Stroke& s) {
  std::string out = " stroke=\"" + XmlEscape(s.color) + "\" stroke-width=\"" +
                    Num(s.width) + "\"";
  if (!s.dash.empty()) out += " stroke-dasharray=\"" + XmlEscape(s.dash) + "\"";
  return out;
}

}  // namespace

std::string XmlEscape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

SvgDocument::SvgDocument(double width, double height)
    : width_(width), height_(height) {}

void SvgDocument::Rect(double x, double y, double w, double h,
                       std::string_view fill, const Stroke* stroke) {
  body_ += "  <rect x=\"" + Num(x) + "\" y=\"" + Num(y) + "\" width=\"" +
           Num(w) + "\" height=\"" + Num(h) + "\" fill=\"" + XmlEscape(fill) +
           "\"" + (stroke ? StrokeAttributes(*stroke) : "") + "/>\n";
}

void SvgDocument::Line(double x1, double y1, double x2, double y2,
                       const Stroke& stroke) {
  body_ += "  <line x1=\"" + Num(x1) + "\" y1=\"" + Num(y1) + "\" x2=\"" +
           Num(x2) + "\" y2=\"" + Num(y2) + "\"" + StrokeAttributes(stroke) +
           "/>\n";
}

void SvgDocument::Polyline(const std::vector<std::pair<double, double>>& points,
                           const Stroke& stroke) {
  std::string list;
  for (const auto& [x, y] : points) {
    if (!list.empty()) list += ' ';
    list += Num(x) + "," + Num(y);
  }
  body_ += "  <polyline fill=\"none\" stroke-linejoin=\"round\" points=\"" +
           list + "\"" + StrokeAttributes(stroke) + "/>\n";
}

void SvgDocument::Text(double x, double y, std::string_view text,
                       const Font& font) {
  const char* anchor = font.anchor == Anchor::kMiddle ? "middle"
                       : font.anchor == Anchor::kEnd  ? "end"
                                                      : "start";
  std::string attributes = " x=\"" + Num(x) + "\" y=\"" + Num(y) +
                           "\" font-size=\"" + Num(font.size) +
                           "\" text-anchor=\"" + anchor + "\" fill=\"" +
                           XmlEscape(font.color) + "\"";
  if (font.bold) attributes += " font-weight=\"bold\"";
  if (font.rotate != 0) {
    attributes += " transform=\"rotate(" + Num(font.rotate) + " " + Num(x) +
                  " " + Num(y) + ")\"";
  }
  body_ += "  <text" + attributes + ">" + XmlEscape(text) + "</text>\n";
}

std::string SvgDocument::Finish() const {
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
         "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
         Num(width_) + "\" height=\"" + Num(height_) + "\" viewBox=\"0 0 " +
         Num(width_) + " " + Num(height_) + "\" font-family=\"sans-serif\">\n" +
         body_ + "</svg>\n";
}

}  // namespace tessera::loadtest
