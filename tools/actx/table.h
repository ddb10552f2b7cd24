/* table.h — terminal tables and CSV files for the tool's results.
 *
 * A table is a header row plus rows of strings; printing pads every column to its widest cell
 * (text left-aligned, cells starting with a digit, sign or '(' right-aligned) and can separate
 * groups of rows with a blank line. A CSV writer quotes cells as RFC 4180 asks. */
#ifndef ACTX_TOOLS_TABLE_H
#define ACTX_TOOLS_TABLE_H

#include <stddef.h>
#include <stdio.h>

#define ACTX_TABLE_MAX_COLUMNS 32

typedef struct actx_table actx_table;

/* NULL if out of memory. */
actx_table *actx_table_create(size_t n_columns, const char *const *headers);
void actx_table_free(actx_table *table);
/* Copies n_columns cells (NULL is an empty cell). 0, or -1 if out of memory. */
int actx_table_add_row(actx_table *table, const char *const *cells);
/* A blank line before the next row added. */
void actx_table_add_break(actx_table *table);
size_t actx_table_rows(const actx_table *table);
void actx_table_print(const actx_table *table, FILE *out);

/* ---- CSV ----------------------------------------------------------------------------------- */

/* Writes one row of n cells to out, quoting where needed. */
void actx_csv_write_row(FILE *out, size_t n, const char *const *cells);

#endif /* ACTX_TOOLS_TABLE_H */
