// A text table as the commands print them: a header row, then rows of cells the caller has formatted,
// each column as wide as its widest cell or header (at least its minimum), one space between columns,
// every line ending in '\n' without trailing blanks. Lines of free text (a note under a row) can sit
// between the rows without moving the columns. Columns grow with their contents, so a long source or
// plan name shifts the columns of its table rather than the rest of its own row.
#ifndef TRAINSIM_SIM_COMMON_TEXT_TABLE_H_
#define TRAINSIM_SIM_COMMON_TEXT_TABLE_H_

#include <string>
#include <vector>

namespace trainsim {

class TextTable {
 public:
  enum class Align { kLeft, kRight };
  struct Column {
    std::string header;
    Align align = Align::kRight;
    size_t min_width = 0;
  };

  explicit TextTable(std::vector<Column> columns = {});

  // Adds a column after the others (before any row is added).
  void add_column(Column column);
  // Appends a row of one cell per column; throws std::invalid_argument otherwise.
  void add_row(std::vector<std::string> cells);
  // Appends a line of free text (without its '\n') after the rows so far.
  void add_line(std::string text);
  bool empty() const { return lines_.empty(); }

  // The header line, then the rows and lines in the order added.
  std::string render() const;

 private:
  struct Line {
    std::vector<std::string> cells;  // a row; empty for free text
    std::string text;
  };
  std::string render_cells(const std::vector<std::string>& cells, const std::vector<size_t>& widths) const;

  std::vector<Column> columns_;
  std::vector<Line> lines_;
};

}  // namespace trainsim

#endif  // TRAINSIM_SIM_COMMON_TEXT_TABLE_H_
