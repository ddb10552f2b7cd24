/* Checks ep/ort_abi.h against the layout compiled from ORT 1.30's own headers.
 *
 * usage: test_ort_abi_layout <ort-1.30-abi-layout.tsv> <ort_abi.h>
 *
 * 1. Every member in the header's layout tables (ACTX_ORT_*_SLOTS, ACTX_ORT_DATA_FIELDS) is
 *    looked up by struct and name in the TSV; its offsetof and slot must match.
 * 2. Every struct's sizeof must not exceed ORT's; the ones we fill and hand to ORT must equal it.
 * 3. Every member the header declares inside those structs (read from its text, padding aside)
 *    must be in the tables, so a member cannot escape the check by being left out of them.
 * 4. The comparison is run on deliberately corrupted copies of the TSV and must fail there.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ort_abi.h"

#define MAX_ROWS 2048
#define NAME_LEN 96

typedef struct tsv_row {
  char structure[48];
  char member[NAME_LEN];
  long offset;
  long slot;
} tsv_row;

typedef struct tsv_struct {
  char name[48];
  long size;
} tsv_struct;

typedef struct layout {
  tsv_row rows[MAX_ROWS];
  size_t n_rows;
  tsv_struct structs[32];
  size_t n_structs;
} layout;

/* What the header declares, as the compiler sees it. */
typedef struct declared_member {
  const char *structure;
  const char *member;
  size_t offset;
  long slot; /* -1 for data members (compared by byte offset only) */
} declared_member;

typedef struct declared_size {
  const char *structure;
  size_t size;
  bool filled_by_us; /* ORT reads the whole struct from us: sizes must be equal */
} declared_size;

#define SLOT_ROW(S, m, slot) {#S, #m, offsetof(S, m), slot},
#define FIELD_ROW(S, m, off) {#S, #m, offsetof(S, m), -1},
static const declared_member k_members[] = {ACTX_ORT_ALL_SLOTS(SLOT_ROW)
                                                ACTX_ORT_DATA_FIELDS(FIELD_ROW)};

static const declared_size k_sizes[] = {
    {"OrtApiBase", sizeof(OrtApiBase), false},
    {"OrtApi", sizeof(OrtApi), false},
    {"OrtEpApi", sizeof(OrtEpApi), false},
    {"OrtEp", sizeof(OrtEp), true},
    {"OrtEpFactory", sizeof(OrtEpFactory), true},
    {"OrtNodeComputeInfo", sizeof(OrtNodeComputeInfo), true},
    {"OrtNodeFusionOptions", sizeof(OrtNodeFusionOptions), true},
    {"OrtKernelImpl", sizeof(OrtKernelImpl), true},
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static int read_layout(const char *path, layout *out) {
  FILE *f = fopen(path, "r");
  if (f == NULL) {
    fprintf(stderr, "cannot open %s\n", path);
    return -1;
  }
  char line[512];
  out->n_rows = out->n_structs = 0;
  while (fgets(line, sizeof line, f) != NULL) {
    if (strncmp(line, "== struct ", 10) == 0) {
      tsv_struct *s = &out->structs[out->n_structs];
      if (out->n_structs == COUNT(out->structs) ||
          sscanf(line, "== struct %47[^:]: sizeof=%ld", s->name, &s->size) != 2) {
        fprintf(stderr, "bad struct line: %s", line);
        fclose(f);
        return -1;
      }
      out->n_structs++;
      continue;
    }
    tsv_row *r = &out->rows[out->n_rows];
    if (out->n_rows == MAX_ROWS || sscanf(line, "%47[^\t]\t%ld\t%ld\t%95s", r->structure,
                                          &r->offset, &r->slot, r->member) != 4) {
      fprintf(stderr, "bad row: %s", line);
      fclose(f);
      return -1;
    }
    out->n_rows++;
  }
  fclose(f);
  return 0;
}

static const tsv_row *find_row(const layout *l, const char *structure, const char *member) {
  for (size_t i = 0; i < l->n_rows; i++)
    if (strcmp(l->rows[i].structure, structure) == 0 && strcmp(l->rows[i].member, member) == 0)
      return &l->rows[i];
  return NULL;
}

static const tsv_struct *find_struct(const layout *l, const char *name) {
  for (size_t i = 0; i < l->n_structs; i++)
    if (strcmp(l->structs[i].name, name) == 0)
      return &l->structs[i];
  return NULL;
}

/* Checks 1 and 2; returns the number of problems (printed when verbose). */
static int compare(const layout *l, bool verbose) {
  int problems = 0;
  for (size_t i = 0; i < COUNT(k_members); i++) {
    const declared_member *m = &k_members[i];
    const tsv_row *r = find_row(l, m->structure, m->member);
    if (r == NULL) {
      if (verbose)
        printf("FAIL %s.%s: not in ORT's layout\n", m->structure, m->member);
      problems++;
      continue;
    }
    long our_slot = m->slot >= 0 ? m->slot : (long)(m->offset / sizeof(void *));
    if ((long)m->offset != r->offset || our_slot != r->slot) {
      if (verbose)
        printf("FAIL %s.%s: ours at byte %zu slot %ld, ORT's at byte %ld slot %ld\n", m->structure,
               m->member, m->offset, our_slot, r->offset, r->slot);
      problems++;
    }
  }
  for (size_t i = 0; i < COUNT(k_sizes); i++) {
    const declared_size *s = &k_sizes[i];
    const tsv_struct *t = find_struct(l, s->structure);
    if (t == NULL || (long)s->size > t->size || (s->filled_by_us && (long)s->size != t->size)) {
      if (verbose)
        printf("FAIL sizeof %s: ours %zu, ORT's %ld%s\n", s->structure, s->size,
               t != NULL ? t->size : -1L, s->filled_by_us ? " (must be equal)" : "");
      problems++;
    }
  }
  return problems;
}

static bool is_declared(const char *structure, const char *member) {
  for (size_t i = 0; i < COUNT(k_members); i++)
    if (strcmp(k_members[i].structure, structure) == 0 && strcmp(k_members[i].member, member) == 0)
      return true;
  return false;
}

/* The member name of one declaration: the first "(*name)" for a function pointer, else the last
 * identifier (before any array brackets). Empty for padding. */
static void member_name(const char *decl, char *name, size_t size) {
  name[0] = '\0';
  const char *fp = strstr(decl, "(*");
  const char *start, *end;
  if (fp != NULL) {
    start = fp + 2;
    while (*start == ' ')
      start++;
    end = start;
    while (*end == '_' || (*end >= 'a' && *end <= 'z') || (*end >= 'A' && *end <= 'Z') ||
           (*end >= '0' && *end <= '9'))
      end++;
  } else {
    end = decl + strlen(decl);
    const char *bracket = strchr(decl, '[');
    if (bracket != NULL)
      end = bracket;
    while (end > decl && (end[-1] == ' ' || end[-1] == '\n'))
      end--;
    start = end;
    while (start > decl &&
           (start[-1] == '_' || (start[-1] >= 'a' && start[-1] <= 'z') ||
            (start[-1] >= 'A' && start[-1] <= 'Z') || (start[-1] >= '0' && start[-1] <= '9')))
      start--;
  }
  size_t len = (size_t)(end - start);
  if (len >= size || strncmp(start, "unused_", 7) == 0)
    return;
  memcpy(name, start, len);
  name[len] = '\0';
}

/* Check 3: reads each struct body of the header and checks every member is in the tables.
 * Returns the number of problems, or -1 if the header could not be read. */
static int check_header_members(const char *path, const layout *l, size_t *n_seen) {
  FILE *f = fopen(path, "r");
  if (f == NULL) {
    fprintf(stderr, "cannot open %s\n", path);
    return -1;
  }
  static char text[1 << 20];
  size_t len = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[len] = '\0';
  int problems = 0;
  *n_seen = 0;
  for (size_t s = 0; s < l->n_structs; s++) {
    char opening[80];
    snprintf(opening, sizeof opening, "struct %s {", l->structs[s].name);
    const char *body = strstr(text, opening);
    if (body == NULL) {
      printf("FAIL struct %s: not declared in the header\n", l->structs[s].name);
      problems++;
      continue;
    }
    body += strlen(opening);
    const char *close = strstr(body, "\n}");
    if (close == NULL) {
      printf("FAIL struct %s: no closing brace\n", l->structs[s].name);
      problems++;
      continue;
    }
    /* Split the body into declarations at ';' outside parentheses, skipping comments. */
    char decl[1024];
    size_t used = 0;
    int depth = 0;
    for (const char *p = body; p < close; p++) {
      if (p[0] == '/' && p[1] == '*') {
        const char *end = strstr(p + 2, "*/");
        p = end != NULL ? end + 1 : close;
        continue;
      }
      if (*p == '(')
        depth++;
      if (*p == ')')
        depth--;
      if (*p == ';' && depth == 0) {
        decl[used] = '\0';
        char name[NAME_LEN];
        member_name(decl, name, sizeof name);
        if (name[0] != '\0') {
          (*n_seen)++;
          if (!is_declared(l->structs[s].name, name)) {
            printf("FAIL %s.%s: declared but missing from the layout tables\n", l->structs[s].name,
                   name);
            problems++;
          }
        }
        used = 0;
        continue;
      }
      if (used + 1 < sizeof decl)
        decl[used++] = *p;
    }
  }
  return problems;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s <ort-abi-layout.tsv> <ort_abi.h>\n", argv[0]);
    return 2;
  }
  static layout ort;
  if (read_layout(argv[1], &ort) != 0)
    return 1;
  int failures = 0;

  int problems = compare(&ort, true);
  printf("%zu declared members and %zu struct sizes compared with %zu ORT members: %d problems\n",
         COUNT(k_members), COUNT(k_sizes), ort.n_rows, problems);
  failures += problems;

  size_t seen = 0;
  problems = check_header_members(argv[2], &ort, &seen);
  printf("%zu members read from the header's struct bodies: %d not in the tables\n", seen,
         problems);
  failures += problems != 0;
  if (seen != COUNT(k_members)) {
    printf("FAIL the header declares %zu members, the tables list %zu\n", seen, COUNT(k_members));
    failures++;
  }

  /* The check must be able to fail: move one member of each struct by a slot, and shrink each
   * struct ORT reads from us, and expect compare() to notice every time. */
  static layout corrupt;
  int undetected = 0;
  for (size_t i = 0; i < COUNT(k_members); i++) {
    corrupt = ort;
    tsv_row *r = (tsv_row *)find_row(&corrupt, k_members[i].structure, k_members[i].member);
    if (r == NULL)
      continue;
    r->offset += sizeof(void *);
    r->slot += 1;
    if (compare(&corrupt, false) == 0) {
      printf("FAIL moving %s.%s did not fail the comparison\n", r->structure, r->member);
      undetected++;
    }
  }
  for (size_t i = 0; i < COUNT(k_sizes); i++) {
    corrupt = ort;
    tsv_struct *t = (tsv_struct *)find_struct(&corrupt, k_sizes[i].structure);
    if (t == NULL)
      continue;
    t->size -= sizeof(void *);
    if (compare(&corrupt, false) == 0) {
      printf("FAIL shrinking %s did not fail the comparison\n", t->name);
      undetected++;
    }
  }
  printf("self-check: %d corruptions of ORT's layout went unnoticed\n", undetected);
  failures += undetected;

  printf(failures == 0 ? "PASS\n" : "FAILED\n");
  return failures == 0 ? 0 : 1;
}
