/*
 * log.h - the layer's messages.
 *
 * Errors always print (one line, naming what was wrong).  Everything else is
 * switched on by JVMPI_LAYER_OPTIONS=log=info|debug and costs one predictable
 * branch when off: the arguments are not evaluated.
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

#define LOG_AT(lvl, ...) do { if ((int)(lvl) <= log_level) log_write((lvl), __VA_ARGS__); } while (0)
#define LOG_ERROR(...) log_write(LOG_LEVEL_ERROR, __VA_ARGS__)
#define LOG_WARN(...)  LOG_AT(LOG_LEVEL_WARN, __VA_ARGS__)
#define LOG_INFO(...)  LOG_AT(LOG_LEVEL_INFO, __VA_ARGS__)
#define LOG_DEBUG(...) LOG_AT(LOG_LEVEL_DEBUG, __VA_ARGS__)

#endif
