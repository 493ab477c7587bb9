// SPDX-License-Identifier: MIT
/*
 * clickhouse_http.c - one statement over ClickHouse's HTTP interface
 * (clickhouse_http.h).
 */
#include "clickhouse_http.h"

#include <errno.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

/* 18.16 keeps LowCardinality behind this setting; newer servers take it and ignore it. */
#define SETTINGS "&allow_experimental_low_cardinality_type=1"

/* *answer = the reason (what the caller prints after the address); returns rc. */
__attribute__((format(printf, 3, 4))) static int say(char **answer, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(answer, fmt, ap) < 0)
		*answer = NULL;
	va_end(ap);
	return rc;
}

/* A connected TCP socket to host:port, or a negative errno (the last address's). */
static int connect_to(const char *host, const char *port)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res, *ai;
	int fd = -1, err = EHOSTUNREACH;

	if (getaddrinfo(host, port, &hints, &res) != 0)
		return -EHOSTUNREACH;
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		err = errno;
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	return fd >= 0 ? fd : -err;
}

/* The query, percent-encoded for the URL; NULL when out of memory. */
static char *url_encoded(const char *query)
{
	size_t n = strlen(query);
	char *out = malloc(3 * n + 1), *o = out;

	if (!out)
		return NULL;
	for (const unsigned char *p = (const unsigned char *)query; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		    strchr("-_.~", *p))
			*o++ = (char)*p;
		else
			o += sprintf(o, "%%%02X", *p);
	}
	*o = '\0';
	return out;
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -errno;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* body_fd's bytes to the socket, to its end. */
static int send_body(int fd, int body_fd)
{
	char buf[1 << 16];
	ssize_t r;
	int rc = 0;

	while (rc == 0 && (r = read(body_fd, buf, sizeof(buf))) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		rc = r < 0 ? -errno : write_all(fd, buf, (size_t)r);
	}
	return rc;
}

/* The whole response (the server closes the connection after it). */
static char *read_response(int fd, size_t *len)
{
	char *text = NULL;
	FILE *m = open_memstream(&text, len);
	char buf[1 << 14];
	ssize_t r;

	if (!m)
		return NULL;
	while ((r = recv(fd, buf, sizeof(buf), 0)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		fwrite(buf, 1, (size_t)r, m);
	}
	fclose(m);
	return text;
}

int ch_http(const char *addr, const char *query, int body_fd, char **answer)
{
	const char *colon = strrchr(addr, ':');
	char host[256];
	struct stat st;
	int fd, rc;

	*answer = NULL;
	if (!colon || colon == addr || !colon[1] || (size_t)(colon - addr) >= sizeof(host))
		return say(answer, -EINVAL, "not HOST:PORT");
	snprintf(host, sizeof(host), "%.*s", (int)(colon - addr), addr);
	if ((fd = connect_to(host, colon + 1)) < 0)
		return say(answer, fd, "cannot connect: %s", strerror(-fd));
	char *url = url_encoded(query);
	long long length = body_fd >= 0 && fstat(body_fd, &st) == 0 ? (long long)st.st_size : 0;
	char *request = NULL;
	rc = url && asprintf(&request, "POST /?query=%s" SETTINGS " HTTP/1.0\r\nHost: %s\r\nContent-Length: %lld\r\n\r\n",
			     url, host, length) >= 0
		 ? 0
		 : -ENOMEM;
	if (rc == 0 && (rc = write_all(fd, request, strlen(request))) == 0 && body_fd >= 0)
		rc = send_body(fd, body_fd);
	free(request);
	free(url);
	size_t len = 0;
	char *resp = rc == 0 ? read_response(fd, &len) : NULL;
	close(fd);
	if (rc < 0)
		return say(answer, rc, "sending the statement: %s", strerror(-rc));
	if (!resp)
		return say(answer, -EIO, "no answer");
	int status = 0;
	char *body = strstr(resp, "\r\n\r\n");
	sscanf(resp, "HTTP/%*d.%*d %d", &status);
	*answer = strdup(body ? body + 4 : "");
	free(resp);
	return status == 200 ? 0 : -EIO;
}
