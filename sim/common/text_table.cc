#include "sim/common/text_table.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace trainsim {
namespace {

// Columns a cell takes: its UTF-8 code points (every byte but continuation bytes).
size_t display_width(const std::string& text) {
  return static_cast<size_t>(std::count_if(
      text.begin(), text.end(), [](char ch) { return (static_cast<unsigned char>(ch) & 0xC0) != 0x80; }));
}

}  // namespace

TextTable::TextTable(std::vector<Column> columns) : columns_(std::move(columns)) {}

void TextTable::add_column(Column column) {
  if (!lines_.empty()) throw std::logic_error("TextTable: a column added after the rows");
  columns_.push_back(std::move(column));
}

void TextTable::add_row(std::vector<std::string> cells) {
  if (cells.size() != columns_.size()) {
    throw std::invalid_argument("TextTable: a row of " + std::to_string(cells.size()) +
                                " cells in a table of " + std::to_string(columns_.size()) + " columns");
  }
  lines_.push_back({std::move(cells), {}});
}

void TextTable::add_line(std::string text) { lines_.push_back({{}, std::move(text)}); }

std::string TextTable::render_cells(const std::vector<std::string>& cells,
                                    const std::vector<size_t>& widths) const {
  std::string out;
  for (size_t c = 0; c < cells.size(); ++c) {
    if (c > 0) out += ' ';
    const std::string pad(widths[c] - display_width(cells[c]), ' ');
    out += columns_[c].align == Align::kLeft ? cells[c] + pad : pad + cells[c];
  }
  out.erase(out.find_last_not_of(' ') + 1);
  return out + '\n';
}

std::string TextTable::render() const {
  std::vector<size_t> widths;
  std::vector<std::string> headers;
  for (const Column& c : columns_) {
    widths.push_back(std::max(c.min_width, display_width(c.header)));
    headers.push_back(c.header);
  }
  for (const Line& line : lines_) {
    for (size_t c = 0; c < line.cells.size(); ++c) {
      widths[c] = std::max(widths[c], display_width(line.cells[c]));
    }
  }
  std::string out = render_cells(headers, widths);
  for (const Line& line : lines_) {
    out += line.cells.empty() ? line.text + '\n' : render_cells(line.cells, widths);
  }
  return out;
}

}  // namespace trainsim
