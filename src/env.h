/* The library's environment switches (ACTX_ISA, ACTX_ORT_RULE): one name out of a list. */
#ifndef ACTX_ENV_H
#define ACTX_ENV_H

/* The index among names[0..count) of the environment variable var's value; fallback when var is
 * unset or empty, and, said on stderr, when its value is none of the names. */
int actx_env_choice(const char *var, const char *const *names, int count, int fallback);

#endif /* ACTX_ENV_H */
