/* The EP's errors and log lines: an OrtStatus whose message says it is ours, and a log line
 * through ORT's logger, formatted only when the logger's level lets it through. */
#include <stdarg.h>
#include <stdio.h>

#include "actx_ep.h"

OrtStatus *actx_ep_error(const OrtApi *api, OrtErrorCode code, const char *fmt, ...) {
  char msg[512];
  int len = snprintf(msg, sizeof msg, "actx EP: ");
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg + len, sizeof msg - (size_t)len, fmt, ap);
  va_end(ap);
  return api->CreateStatus(code, msg);
}

void actx_ep_ignore(const OrtApi *api, OrtStatus *status, const char **text) {
  if (status == NULL) return;
  api->ReleaseStatus(status);
  *text = NULL;
}

void actx_ep_log(const OrtApi *api, const OrtLogger *logger, OrtLoggingLevel level, const char *fmt,
                 ...) {
  if (logger == NULL) return;
  OrtLoggingLevel current = ORT_LOGGING_LEVEL_FATAL;
  OrtStatus *st = api->Logger_GetLoggingSeverityLevel(logger, &current);
  if (st != NULL) {
    api->ReleaseStatus(st);
    return;
  }
  if (level < current) return; /* skip the formatting */
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  st = api->Logger_LogMessage(logger, level, msg, __FILE__, __LINE__, "actx_ep");
  if (st != NULL) api->ReleaseStatus(st);
}
