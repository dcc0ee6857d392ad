#include "sim/common/text_table.h"

#include <stdexcept>

#include <gtest/gtest.h>

namespace trainsim {
namespace {

using Align = TextTable::Align;

TEST(TextTable, ColumnsTakeTheirWidestCellAndNotesSitBetweenRows) {
  TextTable table({{"# case", Align::kLeft}, {"time", Align::kRight, 6}, {"note", Align::kLeft}});
  table.add_row({"short", "1.5", "a"});
  table.add_line("    note: under the first row");
  table.add_row({"a longer name", "12.25", ""});
  EXPECT_EQ(table.render(),
            "# case          time note\n"
            "short            1.5 a\n"
            "    note: under the first row\n"
            "a longer name  12.25\n");
}

TEST(TextTable, WidthCountsCharactersNotBytes) {
  TextTable table({{"x", Align::kRight}});
  table.add_row({"≥1"});
  table.add_row({"100"});
  EXPECT_EQ(table.render(), "  x\n ≥1\n100\n");
}

TEST(TextTable, RowsMustFillEveryColumn) {
  TextTable table({{"a"}, {"b"}});
  EXPECT_THROW(table.add_row({"1"}), std::invalid_argument);
  table.add_row({"1", "2"});
  EXPECT_THROW(table.add_column({"c"}), std::logic_error);
}

}  // namespace
}  // namespace trainsim
