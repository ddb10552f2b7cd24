/* cli.h — what the actx tool's files share: subcommands, exit codes, option parsing.
 *
 * Every subcommand is `int cmd(int argc, char **argv)` with argv[0] its own name, and returns
 * an exit code below. Errors are printed to stderr as "actx <cmd>: <what was wrong>". */
#ifndef ACTX_TOOLS_CLI_H
#define ACTX_TOOLS_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Exit codes of every subcommand. */
#define ACTX_EXIT_OK 0
#define ACTX_EXIT_FAILURE 1 /* ORT failed, a check failed, a file could not be written */
#define ACTX_EXIT_USAGE 2   /* bad command line: unknown option, bad path, bad value */

/* Where results go unless --out says otherwise (relative to the working directory). */
#define ACTX_DEFAULT_RESULTS_DIR "results"

int actx_cmd_bench(int argc, char **argv);         /* bench kernels */
int actx_cmd_bench_kernels(int argc, char **argv); /* bench_kernels.c */
int actx_cmd_ab(int argc, char **argv);            /* ab.c */
int actx_cmd_conform(int argc, char **argv);       /* conform.c */
int actx_cmd_run(int argc, char **argv);           /* run.c */

/* ---- args.c: option values ----------------------------------------------------------------- */

/* Whether argv[*i] is `name` and takes a value: then *value is the next argument and *i moves
 * past it. A missing value is reported (as "<cmd>: option X needs a value") and *bad is set. */
bool actx_arg_value(int argc, char **argv, int *i, const char *name, const char **value,
                    bool *bad, const char *cmd);

/* Parses a whole decimal number in [min, max]; 0 on success, -1 (message printed) otherwise. */
int actx_parse_long(const char *cmd, const char *option, const char *text, long min, long max,
                    long *out);
int actx_parse_double(const char *cmd, const char *option, const char *text, double min,
                      double max, double *out);
/* A comma-separated list of numbers in [min, max], at most max_n of them. */
int actx_parse_long_list(const char *cmd, const char *option, const char *text, long min,
                         long max, long *out, size_t max_n, size_t *n);
/* Whether name is one of a comma-separated list (case-insensitive). An empty list matches. */
bool actx_list_contains(const char *list, const char *name);

/* Creates a directory and its parents (like mkdir -p); 0 or -1 with errno. */
int actx_make_dirs(const char *path);
/* Seconds since the epoch formatted "YYYY-MM-DD HH:MM:SS" (local time) into buf. */
void actx_format_timestamp(char *buf, size_t size);

/* ---- ep_path.c: where libactx_ep.so is --------------------------------------------------- */

/* The EP library's absolute path: override (made absolute) when not NULL, else lib/libactx_ep.so
 * next to the bin/ directory this executable is in. 0, or -1 with a message in err. */
int actx_find_ep_library(const char *override, char *path, size_t size, char *err,
                         size_t err_size);

/* Lowers ORT's log level to errors only (its warnings about node placement would interleave with
 * the tables), unless verbose. Creates the ORT environment. 0, or -1 with a message printed. */
int actx_quiet_ort(bool verbose, const char *cmd);

#endif /* ACTX_TOOLS_CLI_H */
