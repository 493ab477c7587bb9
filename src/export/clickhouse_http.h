/* SPDX-License-Identifier: MIT */
/*
 * clickhouse_http.h - one statement to a ClickHouse server over its HTTP
 * interface (the server's own, port 8123 by default): a POST of the query
 * in the URL and the rows (RowBinary) as the body.  HTTP/1.0 and one
 * connection per statement: the server closes it after the answer, so no
 * chunked encoding or keep-alive to follow.  A statement costs a connect
 * on loopback, where a clickhouse-client child costs 0.3 s to start.
 *
 * Ownership: *answer is malloc'd (the response body: the result, or the
 * server's message), the caller frees it.
 */
#ifndef TRACEBUF_EXPORT_CLICKHOUSE_HTTP_H
#define TRACEBUF_EXPORT_CLICKHOUSE_HTTP_H

/*
 * Run query at addr ("HOST:PORT"), body_fd's bytes (to its end) as the
 * data when body_fd >= 0.  0 when the server answered 200; -EIO when it
 * answered otherwise (its message in *answer); a negative errno when it
 * could not be reached (-ECONNREFUSED, -EHOSTUNREACH, -EINVAL for a bad
 * address; *answer says which).
 */
int ch_http(const char *addr, const char *query, int body_fd, char **answer);

#endif
