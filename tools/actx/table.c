/* table.c — terminal tables and CSV rows (see table.h). */
#include "table.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef struct table_row {
  char **cells;
  bool break_before;
} table_row;

struct actx_table {
  size_t n_columns;
  char **headers;
  table_row *rows;
  size_t n_rows, capacity;
  bool pending_break;
};

static char *copy_string(const char *s) {
  if (s == NULL)
    s = "";
  size_t len = strlen(s) + 1;
  char *copy = malloc(len);
  if (copy != NULL)
    memcpy(copy, s, len);
  return copy;
}

static void free_cells(char **cells, size_t n) {
  if (cells == NULL)
    return;
  for (size_t i = 0; i < n; i++)
    free(cells[i]);
  free(cells);
}

static char **copy_cells(size_t n, const char *const *cells) {
  char **copy = calloc(n, sizeof *copy);
  if (copy == NULL)
    return NULL;
  for (size_t i = 0; i < n; i++) {
    copy[i] = copy_string(cells[i]);
    if (copy[i] == NULL) {
      free_cells(copy, n);
      return NULL;
    }
  }
  return copy;
}

actx_table *actx_table_create(size_t n_columns, const char *const *headers) {
  if (n_columns == 0 || n_columns > ACTX_TABLE_MAX_COLUMNS)
    return NULL;
  actx_table *t = calloc(1, sizeof *t);
  if (t == NULL)
    return NULL;
  t->n_columns = n_columns;
  t->headers = copy_cells(n_columns, headers);
  if (t->headers == NULL) {
    free(t);
    return NULL;
  }
  return t;
}

void actx_table_free(actx_table *t) {
  if (t == NULL)
    return;
  for (size_t r = 0; r < t->n_rows; r++)
    free_cells(t->rows[r].cells, t->n_columns);
  free(t->rows);
  free_cells(t->headers, t->n_columns);
  free(t);
}

int actx_table_add_row(actx_table *t, const char *const *cells) {
  if (t->n_rows == t->capacity) {
    size_t capacity = t->capacity ? t->capacity * 2 : 64;
    table_row *grown = realloc(t->rows, capacity * sizeof *grown);
    if (grown == NULL)
      return -1;
    t->rows = grown;
    t->capacity = capacity;
  }
  char **copy = copy_cells(t->n_columns, cells);
  if (copy == NULL)
    return -1;
  t->rows[t->n_rows].cells = copy;
  t->rows[t->n_rows].break_before = t->pending_break && t->n_rows > 0;
  t->pending_break = false;
  t->n_rows++;
  return 0;
}

void actx_table_add_break(actx_table *t) { t->pending_break = true; }

size_t actx_table_rows(const actx_table *t) { return t->n_rows; }

/* Numbers read best right-aligned so their digits line up. */
static bool right_aligned(const char *cell) {
  unsigned char c = (unsigned char)cell[0];
  return isdigit(c) || c == '-' || c == '+' || c == '(' || c == '.';
}

static void print_cells(const actx_table *t, char *const *cells, const size_t *width,
                        FILE *out) {
  for (size_t c = 0; c < t->n_columns; c++) {
    const char *cell = cells[c];
    int w = (int)width[c];
    bool last = c + 1 == t->n_columns;
    if (right_aligned(cell))
      fprintf(out, "%*s", w, cell);
    else if (last)
      fputs(cell, out);
    else
      fprintf(out, "%-*s", w, cell);
    if (!last)
      fputs("  ", out);
  }
  fputc('\n', out);
}

void actx_table_print(const actx_table *t, FILE *out) {
  size_t width[ACTX_TABLE_MAX_COLUMNS] = {0};
  for (size_t c = 0; c < t->n_columns; c++) {
    width[c] = strlen(t->headers[c]);
    for (size_t r = 0; r < t->n_rows; r++) {
      size_t len = strlen(t->rows[r].cells[c]);
      if (len > width[c])
        width[c] = len;
    }
  }
  print_cells(t, t->headers, width, out);
  size_t total = 0;
  for (size_t c = 0; c < t->n_columns; c++)
    total += width[c] + (c + 1 < t->n_columns ? 2 : 0);
  for (size_t i = 0; i < total; i++)
    fputc('-', out);
  fputc('\n', out);
  for (size_t r = 0; r < t->n_rows; r++) {
    if (t->rows[r].break_before)
      fputc('\n', out);
    print_cells(t, t->rows[r].cells, width, out);
  }
}

void actx_csv_write_row(FILE *out, size_t n, const char *const *cells) {
  for (size_t i = 0; i < n; i++) {
    const char *cell = cells[i] != NULL ? cells[i] : "";
    bool quote = strpbrk(cell, ",\"\n\r") != NULL;
    if (quote) {
      fputc('"', out);
      for (const char *p = cell; *p; p++) {
        if (*p == '"')
          fputc('"', out);
        fputc(*p, out);
      }
      fputc('"', out);
    } else {
      fputs(cell, out);
    }
    fputc(i + 1 < n ? ',' : '\n', out);
  }
}
