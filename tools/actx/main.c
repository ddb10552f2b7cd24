/* main.c — the actx command-line tool: a table of subcommands.
 *
 *   actx bench kernels   libactx's kernels against memcpy, SLEEF, libm and ORT, ns/element
 *   actx ab              ORT alone vs ORT + actx, session by session (`make bench`)
 *   actx conform         ONNX's node tests (and generated ones) through ORT + actx
 *   actx run             one model, once, with the EP assignment of every node */
#include <stdio.h>
#include <string.h>

#include "actx.h"
#include "cli.h"
#include "host.h"

typedef struct subcommand {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *summary;
} subcommand;

static const subcommand k_subcommands[] = {
    {"bench", actx_cmd_bench, "bench kernels: libactx kernels vs memcpy, SLEEF, libm, ORT"},
    {"ab", actx_cmd_ab, "ORT alone vs ORT + actx on every op, dtype and size (or a model)"},
    {"conform", actx_cmd_conform, "ONNX's node tests through ORT + actx, checked"},
    {"run", actx_cmd_run, "run one model once; node -> EP assignment, latency, outputs"},
};
#define N_SUBCOMMANDS (sizeof k_subcommands / sizeof k_subcommands[0])

static void usage(FILE *out) {
  fprintf(out, "usage: actx <command> [options]   (actx <command> --help for its options)\n\n");
  for (size_t i = 0; i < N_SUBCOMMANDS; i++)
    fprintf(out, "  %-8s %s\n", k_subcommands[i].name, k_subcommands[i].summary);
  fprintf(out, "  %-8s %s\n", "version", "print versions");
}

int actx_cmd_bench(int argc, char **argv) {
  if (argc >= 2 && strcmp(argv[1], "kernels") == 0)
    return actx_cmd_bench_kernels(argc - 1, argv + 1);
  if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
    printf("usage: actx bench kernels [options]   (actx bench kernels --help)\n");
    return ACTX_EXIT_OK;
  }
  fprintf(stderr, "actx bench: expected 'kernels' (actx bench kernels --help); the session A/B "
                  "benchmark is 'actx ab'\n");
  return ACTX_EXIT_USAGE;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return ACTX_EXIT_USAGE;
  }
  const char *name = argv[1];
  if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
    usage(stdout);
    return ACTX_EXIT_OK;
  }
  if (strcmp(name, "version") == 0 || strcmp(name, "--version") == 0) {
    printf("actx %s (ISA %s, ORT rule %s)\n", actx_version_string(), actx_isa_name(actx_get_isa()),
           actx_ort_rule_name(actx_get_ort_rule()));
    return ACTX_EXIT_OK;
  }
  for (size_t i = 0; i < N_SUBCOMMANDS; i++) {
    if (strcmp(name, k_subcommands[i].name) == 0) {
      int rc = k_subcommands[i].run(argc - 1, argv + 1);
      actx_ort_shutdown(); /* every session is gone: release ORT's env for leak checkers */
      return rc;
    }
  }
  fprintf(stderr, "actx: unknown command '%s'\n\n", name);
  usage(stderr);
  return ACTX_EXIT_USAGE;
}
