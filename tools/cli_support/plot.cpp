#include "plot.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

#include "ziggurat/base/error.hpp"
#include "ziggurat/base/files.hpp"

#ifdef ZIGGURAT_HAVE_PLPLOT
#include <plstream.h>
#endif

namespace ziggurat::cli {

#ifdef ZIGGURAT_HAVE_PLPLOT

void plot_lines(const std::filesystem::path& png, const std::string& title, const std::string& x_label,
                const std::string& y_label, const std::vector<Series>& series) {
  double x0 = std::numeric_limits<double>::infinity(), x1 = -x0, y1 = -x0;
  for (const auto& s : series) {
    for (const double x : s.x) x0 = std::min(x0, x), x1 = std::max(x1, x);
    for (const double y : s.y) y1 = std::max(y1, y);
  }
  if (series.empty() || !(x1 > x0) || !(y1 > 0)) throw InvalidArgument("nothing to plot: the series are empty or flat");

  // PLplot writes to the file as it goes, and ends the whole process when it cannot open it: it
  // draws into a temporary file made here first, which is then published.
  const std::filesystem::path temporary = temporary_beside(png);
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) throw IoError("cannot write the plot '" + png.string() + "': " + std::strerror(errno));
  ::close(fd);
  {
    plstream pls;
    pls.sdev("pngcairo");
    pls.sfnam(temporary.c_str());
    pls.spage(0, 0, 1200, 800, 0, 0);
    pls.scolbg(255, 255, 255);
    pls.init();
    pls.scol0(1, 0, 0, 0);  // axes and text in black
    pls.col0(1);
    pls.env(x0, x1, 0, 1.08 * y1, 0, 2);
    pls.lab(x_label.c_str(), y_label.c_str(), title.c_str());
    // A palette that tells lines apart; dashed lines reuse the colour of the line before them.
    const int palette[][3] = {{31, 119, 180}, {214, 39, 40}, {44, 160, 44}, {148, 103, 189}, {255, 127, 14}, {140, 86, 75}};
    std::vector<PLINT> colours, styles, lines;
    std::vector<PLFLT> widths;
    std::vector<const char*> labels;
    int colour = 1;
    for (const auto& s : series) {
      if (!s.dashed || colour == 1) ++colour;
      const auto& rgb = palette[(colour - 2) % 6];
      pls.scol0(colour, rgb[0], rgb[1], rgb[2]);
      pls.col0(colour);
      pls.lsty(s.dashed ? 2 : 1);
      pls.width(2);
      pls.line(static_cast<PLINT>(s.x.size()), const_cast<PLFLT*>(s.x.data()), const_cast<PLFLT*>(s.y.data()));
      colours.push_back(colour);
      styles.push_back(s.dashed ? 2 : 1);
      lines.push_back(PL_LEGEND_LINE);
      widths.push_back(2);
      labels.push_back(s.label.c_str());
    }
    pls.lsty(1);
    PLFLT legend_width = 0, legend_height = 0;
    const PLINT n = static_cast<PLINT>(series.size());
    std::vector<PLINT> zero(series.size(), 0), text_colours(series.size(), 1);
    std::vector<PLFLT> scales(series.size(), 1.0);
    pls.legend(&legend_width, &legend_height, PL_LEGEND_BACKGROUND | PL_LEGEND_BOUNDING_BOX, PL_POSITION_TOP | PL_POSITION_LEFT,
               0.02, 0.02, 0.1, 0, 1, 1, 0, 0, n, lines.data(), 1.0, 1.0, 2.0, 1.0, text_colours.data(), labels.data(),
               nullptr, nullptr, nullptr, nullptr, colours.data(), styles.data(), widths.data(), nullptr, nullptr, nullptr,
               nullptr);
  }  // the stream closes the file here
  publish_file(temporary, png);
}

#else

void plot_lines(const std::filesystem::path&, const std::string&, const std::string&, const std::string&,
                const std::vector<Series>&) {
  throw UnsupportedFeature("this ziggurat was built without PLplot, so it cannot draw --plot: install libplplot-dev "
                           "and plplot-driver-cairo (scripts/setup.sh does) and rebuild; --json gives the numbers");
}

#endif

}  // namespace ziggurat::cli
