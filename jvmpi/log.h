/*
 * log.h - the layer's messages.
 *
 * Errors always print (one line, naming what was wrong).  Everything else is
 * switched on by JVMPI_LAYER_OPTIONS=log=info|debug and costs one predictable
 * branch when off: the arguments are not evaluated.
 *
 * A call the layer refuses (log_refused) is an error too, but an agent may
 * make the same mistake in a loop, tens of thousands of times: those lines
 * are printed the first LOG_REFUSALS_SHOWN times for each kind, then only
 * counted, and the counts are printed once, when the layer stops.
 */
#ifndef JVMPI_LOG_H_
#define JVMPI_LOG_H_

#include <stdio.h>

typedef enum { LOG_LEVEL_ERROR = 0, LOG_LEVEL_WARN, LOG_LEVEL_INFO, LOG_LEVEL_DEBUG } log_level_t;

extern int log_level;

void log_set_level(log_level_t level);
/* Redirects messages to a file (append); NULL or "" keeps stderr.  Returns 0 on success. */
int log_set_file(const char *path);
void log_write(log_level_t level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* What a user typed, quoted in an error line: as it is, or when longer than
 * LOG_SHORT_MAX its start and its length in buf (LOG_SHORT_BUF bytes), so
 * that the reason after it is never lost in it. */
#define LOG_SHORT_MAX 120
#define LOG_SHORT_BUF 160
const char *log_shorten(const char *text, char *buf, size_t size);
/* log_shorten in a buffer of its own, for an argument of a LOG_ line. */
#define LOG_SHOWN(text) log_shorten((text), (char[LOG_SHORT_BUF]){0}, LOG_SHORT_BUF)

/* A call of the JVMPI interface the layer refused, as the error line
 * "<call>: <reason>".  Its kind is call and fmt together, by their text:
 * each kind is printed LOG_REFUSALS_SHOWN times, then one line says the
 * rest are counted.  call and fmt must be static strings (literals), as
 * they are named again at the end.  No lock and no allocation beyond what
 * log_write does, and none at all for a refusal that is only counted. */
#define LOG_REFUSALS_SHOWN 5
void log_refused(const char *call, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* One line for each kind with refusals that were only counted, giving
 * their exact number; the refusals after it are printed again, as nothing
 * would report them.  Called once, where the layer stops. */
void log_refusals_summary(void);
/* Forgets every kind and count (tests start each layer afresh). */
void log_refusals_reset(void);

#define LOG_AT(lvl, ...) do { if ((int)(lvl) <= log_level) log_write((lvl), __VA_ARGS__); } while (0)
#define LOG_ERROR(...) log_write(LOG_LEVEL_ERROR, __VA_ARGS__)
#define LOG_WARN(...)  LOG_AT(LOG_LEVEL_WARN, __VA_ARGS__)
#define LOG_INFO(...)  LOG_AT(LOG_LEVEL_INFO, __VA_ARGS__)
#define LOG_DEBUG(...) LOG_AT(LOG_LEVEL_DEBUG, __VA_ARGS__)

#endif
