#include "picture.hpp"

#include <png.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>

#include "ziggurat/base/error.hpp"
#include "ziggurat/base/files.hpp"

namespace ziggurat::cli {
namespace {

constexpr std::size_t kMessageSize = 256;

void on_png_error(png_structp png, png_const_charp message) {
  // errno tells why a write failed ("No space left on device"); encode_png clears it first.
  auto* out = static_cast<char*>(png_get_error_ptr(png));
  if (errno != 0) {
    std::snprintf(out, kMessageSize, "%s: %s", message, std::strerror(errno));
  } else {
    std::snprintf(out, kMessageSize, "%s", message);
  }
  png_longjmp(png, 1);
}

void on_png_warning(png_structp, png_const_charp) {}

// Encodes 8-bit RGB rows, top row first, into `file`. Returns false with libpng's message in `error`
// (kMessageSize chars). Holds no C++ objects, so libpng's longjmp on error skips no destructors.
bool encode_png(std::FILE* file, const unsigned char* rgb, png_uint_32 width, png_uint_32 height, char* error) {
  errno = 0;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, error, on_png_error, on_png_warning);
  if (png == nullptr) {
    std::snprintf(error, kMessageSize, "libpng could not start (out of memory?)");
    return false;
  }
  png_infop info = png_create_info_struct(png);
  if (info == nullptr) {
    png_destroy_write_struct(&png, nullptr);
    std::snprintf(error, kMessageSize, "libpng could not start (out of memory?)");
    return false;
  }
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    return false;
  }
  png_init_io(png, file);
  png_set_IHDR(png, info, width, height, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  for (png_uint_32 y = 0; y < height; ++y) png_write_row(png, rgb + std::size_t{y} * width * 3);
  png_write_end(png, info);
  png_destroy_write_struct(&png, &info);
  return true;
}

// Viridis (matplotlib's table, every 17th of its 256 entries), interpolated linearly between anchors.
constexpr unsigned char kViridis[16][3] = {
    {68, 1, 84},    {72, 26, 108},  {71, 47, 125},  {65, 68, 135},  {57, 86, 140},   {49, 104, 142},
    {42, 120, 142}, {35, 136, 142}, {31, 152, 139}, {34, 168, 132}, {53, 183, 121},  {84, 197, 104},
    {122, 209, 81}, {165, 219, 54}, {210, 226, 27}, {253, 231, 37}};

void viridis(double t, unsigned char* rgb) {
  const double s = std::clamp(t, 0.0, 1.0) * 15;
  const int k = std::min(static_cast<int>(s), 14);
  const double f = s - k;
  for (int c = 0; c < 3; ++c) {
    rgb[c] = static_cast<unsigned char>(std::lround(kViridis[k][c] + f * (kViridis[k + 1][c] - kViridis[k][c])));
  }
}

// A 5 x 7 bitmap font of the characters printf's %g writes (and nan, inf): each row 5 bits, the
// leftmost pixel the highest bit.
struct Glyph {
  char c;
  unsigned char rows[7];
};
constexpr Glyph kFont[] = {
    {'0', {14, 17, 19, 21, 25, 17, 14}}, {'1', {4, 12, 4, 4, 4, 4, 14}},    {'2', {14, 17, 1, 2, 4, 8, 31}},
    {'3', {31, 2, 4, 2, 1, 17, 14}},     {'4', {2, 6, 10, 18, 31, 2, 2}},   {'5', {31, 16, 30, 1, 1, 17, 14}},
    {'6', {6, 8, 16, 30, 17, 17, 14}},   {'7', {31, 1, 2, 4, 8, 8, 8}},     {'8', {14, 17, 17, 14, 17, 17, 14}},
    {'9', {14, 17, 17, 15, 1, 2, 12}},   {'-', {0, 0, 0, 31, 0, 0, 0}},     {'+', {0, 4, 4, 31, 4, 4, 0}},
    {'.', {0, 0, 0, 0, 0, 12, 12}},      {'e', {0, 0, 14, 17, 31, 16, 14}}, {'n', {0, 0, 22, 25, 17, 17, 17}},
    {'a', {0, 0, 14, 1, 15, 17, 15}},    {'i', {4, 0, 12, 4, 4, 4, 14}},    {'f', {6, 9, 8, 28, 8, 8, 8}}};

// The colour bar beside a field's picture: the map from its minimum (bottom) to its maximum (top),
// each printed at its end in the bitmap font, `scale` pixels a font pixel.
struct ColourBar {
  // The longest %.4g text is 11 characters: "-1.234e-100".
  static constexpr std::size_t kGap = 8, kWidth = 16, kTextGap = 6, kLabelChars = 11, kMargin = 4;
  std::size_t scale = 1;
  std::size_t panel() const { return kGap + kWidth + kTextGap + kLabelChars * 6 * scale + kMargin; }
  std::size_t least_height() const { return 2 * 7 * scale + 3 * kMargin + 12; }
};

// Prints `text` with its top-left corner at (x, y) in an RGB image `width` pixels wide, in black.
void print_text(std::vector<unsigned char>& rgb, std::size_t width, std::size_t x, std::size_t y,
                const std::string& text, std::size_t scale) {
  for (std::size_t k = 0; k < text.size(); ++k) {
    const Glyph* glyph = std::find_if(std::begin(kFont), std::end(kFont), [&](const Glyph& g) { return g.c == text[k]; });
    if (glyph == std::end(kFont) || x + (k * 6 + 5) * scale > width) continue;  // unknown: a blank
    for (std::size_t row = 0; row < 7 * scale; ++row)
      for (std::size_t column = 0; column < 5 * scale; ++column)
        if (glyph->rows[row / scale] & (16 >> (column / scale)))
          std::fill_n(&rgb[((y + row) * width + x + k * 6 * scale + column) * 3], 3, 0);
  }
}

// The value range as the bar's labels print it: 4 significant digits, "nan" where there is none.
std::string label(double value) {
  if (!std::isfinite(value)) return "nan";
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", value);
  return text;
}

// Draws the bar of [lo, hi] at the right of an RGB image `width` x `height`, in its last
// bar.panel() columns.
void draw_colour_bar(std::vector<unsigned char>& rgb, std::size_t width, std::size_t height, const ColourBar& bar,
                     double lo, double hi) {
  const std::size_t x0 = width - bar.panel() + ColourBar::kGap, top = ColourBar::kMargin,
                    bottom = height - 1 - ColourBar::kMargin;
  for (std::size_t y = top; y <= bottom; ++y)
    for (std::size_t x = x0; x < x0 + ColourBar::kWidth; ++x)
      viridis(double(bottom - y) / double(bottom - top), &rgb[(y * width + x) * 3]);
  const std::size_t text_x = x0 + ColourBar::kWidth + ColourBar::kTextGap;
  print_text(rgb, width, text_x, top, label(hi), bar.scale);
  print_text(rgb, width, text_x, bottom + 1 - 7 * bar.scale, label(lo), bar.scale);
}

// Writes 8-bit RGB rows, top row first, as a PNG file, atomically (publish_file's rules).
void write_rgb_png(const std::filesystem::path& path, const std::vector<unsigned char>& rgb, std::size_t width,
                   std::size_t height) {
  const std::filesystem::path temporary = temporary_beside(path);
  const std::string what = "cannot write the picture '" + path.string() + "': ";
  std::FILE* file = std::fopen(temporary.c_str(), "wbx");
  if (file == nullptr) throw IoError(what + std::strerror(errno));
  char error[kMessageSize] = "";
  const bool encoded =
      encode_png(file, rgb.data(), static_cast<png_uint_32>(width), static_cast<png_uint_32>(height), error);
  const bool closed = std::fclose(file) == 0;  // may be the first to see a full disk
  const int close_errno = errno;
  if (!encoded || !closed) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    throw IoError(what + (encoded ? std::strerror(close_errno) : error));
  }
  publish_file(temporary, path);
}

}  // namespace

template <class T>
void write_field_png(const std::filesystem::path& path, const T* values, const std::vector<std::size_t>& extents,
                     std::size_t max_side) {
  if (extents.size() != 2 && extents.size() != 3) {
    throw InvalidArgument("a picture needs a 2D or 3D grid, not a " + std::to_string(extents.size()) + "D one");
  }
  const std::size_t width = extents[0], height = extents[1];
  if (width == 0 || height == 0 || (extents.size() == 3 && extents[2] == 0)) {
    throw InvalidArgument("cannot draw a picture of an empty grid");
  }
  if (max_side == 0) throw InvalidArgument("a picture needs at least 1 pixel a side (max_side is 0)");
  const T* slice = values + (extents.size() == 3 ? extents[2] / 2 * width * height : 0);

  // The longer side becomes max_side; the shorter one keeps the aspect ratio, rounded to nearest.
  const std::size_t longer = std::max(width, height);
  const auto reduced = [&](std::size_t side) {
    return longer <= max_side ? side : std::max<std::size_t>(1, (side * max_side + longer / 2) / longer);
  };
  const std::size_t out_width = reduced(width), out_height = reduced(height);
  if (out_width > PNG_UINT_31_MAX || out_height > PNG_UINT_31_MAX) {
    throw InvalidArgument("a picture cannot be that large: lower max_side");
  }

  // Pixel (i, j) averages the cells [i W / out_width, (i + 1) W / out_width) x (the same for rows).
  std::vector<double> shown(out_width * out_height);
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (std::size_t j = 0; j < out_height; ++j) {
    const std::size_t y0 = j * height / out_height, y1 = (j + 1) * height / out_height;
    for (std::size_t i = 0; i < out_width; ++i) {
      const std::size_t x0 = i * width / out_width, x1 = (i + 1) * width / out_width;
      double sum = 0;
      for (std::size_t y = y0; y < y1; ++y) {
        for (std::size_t x = x0; x < x1; ++x) sum += static_cast<double>(slice[y * width + x]);
      }
      const double mean = sum / static_cast<double>((y1 - y0) * (x1 - x0));
      shown[j * out_width + i] = mean;
      if (std::isfinite(mean)) lo = std::min(lo, mean), hi = std::max(hi, mean);
    }
  }

  // The field at the top left, the colour bar at the right, white elsewhere.
  ColourBar bar;
  bar.scale = out_height >= 160 ? 2 : 1;
  const std::size_t picture_width = out_width + bar.panel(), picture_height = std::max(out_height, bar.least_height());
  std::vector<unsigned char> rgb(picture_width * picture_height * 3, 255);
  for (std::size_t j = 0; j < out_height; ++j) {
    for (std::size_t i = 0; i < out_width; ++i) {
      const double v = shown[j * out_width + i];
      unsigned char* pixel = &rgb[((out_height - 1 - j) * picture_width + i) * 3];  // PNG rows run top-down
      if (!std::isfinite(v)) {
        std::fill(pixel, pixel + 3, 128);  // NaN or infinity (a diverged run): grey, outside the map
      } else {
        viridis(hi > lo ? (v - lo) / (hi - lo) : 0.5, pixel);
      }
    }
  }

  draw_colour_bar(rgb, picture_width, picture_height, bar, lo, hi);
  write_rgb_png(path, rgb, picture_width, picture_height);
}

template void write_field_png<float>(const std::filesystem::path&, const float*, const std::vector<std::size_t>&,
                                     std::size_t);
template void write_field_png<double>(const std::filesystem::path&, const double*, const std::vector<std::size_t>&,
                                      std::size_t);

void write_lines_png(const std::filesystem::path& path, const std::vector<Segment>& segments, std::size_t width,
                     std::size_t height) {
  if (width == 0 || height == 0 || width > PNG_UINT_31_MAX || height > PNG_UINT_31_MAX)
    throw InvalidArgument("a picture needs a size of 1 to 2^31 - 1 pixels a side");
  std::vector<unsigned char> rgb(width * height * 3, 255);
  const auto plot = [&](long x, long y, const std::array<unsigned char, 3>& colour) {
    if (x < 0 || y < 0 || x >= long(width) || y >= long(height)) return;
    std::copy(colour.begin(), colour.end(), &rgb[((height - 1 - std::size_t(y)) * width + std::size_t(x)) * 3]);
  };
  for (const Segment& s : segments) {
    const double dx = s.x1 - s.x0, dy = s.y1 - s.y0;
    const long steps = std::max(1L, std::lround(std::max(std::abs(dx), std::abs(dy))));
    for (long i = 0; i <= steps; ++i) {
      const double t = double(i) / double(steps);
      plot(std::lround(s.x0 + t * dx), std::lround(s.y0 + t * dy), s.colour);
    }
  }
  write_rgb_png(path, rgb, width, height);
}

}  // namespace ziggurat::cli
