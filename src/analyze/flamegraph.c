// SPDX-License-Identifier: MIT
/*
 * flamegraph.c - folded stacks drawn as an SVG flame graph
 * (tracebuf/offcpu.h, tb_flamegraph_svg).
 *
 * The lines become a tree of frames (children merged by name under their
 * parent, values summed up the tree); the root spans the whole width and
 * each child a share of its parent's width equal to its share of the
 * parent's value, drawn above it.  Children are laid out in name order,
 * as flamegraph.pl does, so two graphs of similar data look alike.  Boxes
 * narrower than a tenth of a pixel are left out (their time still counts
 * in their parent); names are shown where they fit, cut with "..", and
 * every box has a <title> with the full name, its value and its share.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "svg.h"
#include "tracebuf/offcpu.h"

#define FRAME_H 17
#define PAD_X 10
#define TOP 62
#define BOTTOM 28
#define FONT_W 6.6 /* average glyph width of 12 px Verdana */
#define MIN_W 0.1

struct node {
	char *name;
	uint64_t value;
	struct node *child, *next; /* first child; next sibling, name order */
	struct node *last;	   /* last child: sorted lines mostly add after it */
};

struct layout {
	FILE *out;
	const struct tb_flame_opts *o;
	double px_per_value;
	uint64_t total;
	int depth_max;
	int height;
};

static void free_tree(struct node *n)
{
	while (n) {
		struct node *next = n->next;
		free_tree(n->child);
		free(n->name);
		free(n);
		n = next;
	}
}

/* The child of parent called name[0..len), made (in name order) if new; NULL when out of memory. */
/* strcmp of a node's name with name[0..len). */
static int cmp_name(const struct node *n, const char *name, size_t len)
{
	int c = strncmp(n->name, name, len);

	return c ? c : n->name[len] != '\0';
}

static struct node *child_of(struct node *parent, const char *name, size_t len)
{
	struct node **at = &parent->child;
	int c = parent->last ? cmp_name(parent->last, name, len) : 1;

	if (c == 0)
		return parent->last;
	if (c < 0) /* after every child: the common case, as lines come sorted */
		at = &parent->last->next;
	for (; *at && (c = cmp_name(*at, name, len)) <= 0; at = &(*at)->next)
		if (c == 0)
			return *at;
	struct node *n = calloc(1, sizeof(*n));
	if (!n || !(n->name = strndup(name, len))) {
		free(n);
		return NULL;
	}
	n->next = *at;
	*at = n;
	if (!n->next)
		parent->last = n;
	return n;
}

static int add_line(struct node *root, const struct tb_folded *line, int *depth_max)
{
	struct node *at = root;
	const char *p = line->stack;
	int depth = 0;

	root->value += line->value;
	while (*p) {
		const char *end = strchr(p, ';');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (!(at = child_of(at, p, len)))
			return -ENOMEM;
		at->value += line->value;
		depth++;
		p += len + (end != NULL);
	}
	if (depth > *depth_max)
		*depth_max = depth;
	return 0;
}

static void put_colour(struct layout *l, const char *name)
{
	uint32_t h = svg_name_hash(name);
	unsigned a = h & 0xff, b = (h >> 8) & 0xff, c = (h >> 16) & 0xff;

	if (l->o->cold) /* blues and greens: time spent waiting */
		fprintf(l->out, "rgb(%u,%u,%u)", 40 + a % 60, 110 + b % 100, 190 + c % 60);
	else /* reds and oranges: time spent running */
		fprintf(l->out, "rgb(%u,%u,%u)", 205 + a % 50, 80 + b % 150, 30 + c % 50);
}

static void put_box(struct layout *l, const struct node *n, double x, int depth)
{
	double w = (double)n->value * l->px_per_value;
	double y = l->height - BOTTOM - (depth + 1) * FRAME_H;
	double shown = (double)n->value * (l->o->scale ? l->o->scale : 1e-3);
	FILE *f = l->out;

	fputs("<g><title>", f);
	svg_escape(f, n->name, strlen(n->name));
	fprintf(f, " (%.0f %s, %.2f%%)</title><rect x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" height=\"%d\" fill=\"",
		shown, l->o->unit ? l->o->unit : "us", 100.0 * (double)n->value / (double)l->total, x, y, w,
		FRAME_H - 1);
	put_colour(l, n->name);
	fputs("\" rx=\"2\" ry=\"2\"/>", f);
	size_t fits = w > 3 * FONT_W ? (size_t)((w - 6) / FONT_W) : 0;
	if (fits >= 3) {
		size_t len = strlen(n->name);
		fprintf(f, "<text x=\"%.1f\" y=\"%.0f\">", x + 3, y + FRAME_H - 5);
		svg_escape(f, n->name, len <= fits ? len : fits - 2);
		fputs(len <= fits ? "</text>" : "..</text>", f);
	}
	fputs("</g>\n", f);
}

static void draw(struct layout *l, const struct node *n, double x, int depth)
{
	double cx = x;

	put_box(l, n, x, depth);
	for (const struct node *c = n->child; c; c = c->next) {
		double w = (double)c->value * l->px_per_value;
		if (w >= MIN_W)
			draw(l, c, cx, depth + 1);
		cx += w;
	}
}

static void put_header(struct layout *l, int width)
{
	FILE *f = l->out;
	const struct tb_flame_opts *o = l->o;

	fprintf(f,
		"<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		"xmlns=\"http://www.w3.org/2000/svg\">\n"
		"<style>text { font-family: Verdana, sans-serif; font-size: 12px; fill: #000; }\n"
		"g:hover rect { stroke: #000; stroke-width: 1; }\n"
		".title { font-size: 17px; text-anchor: middle; }\n.sub { fill: #555; text-anchor: middle; }</style>\n"
		"<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#f8f8f4\"/>\n"
		"<text class=\"title\" x=\"%d\" y=\"24\">",
		width, l->height, width, l->height, width, l->height, width / 2);
	svg_escape(f, o->title ? o->title : "Flame Graph", SIZE_MAX);
	fputs("</text>\n", f);
	if (o->subtitle) {
		fprintf(f, "<text class=\"sub\" x=\"%d\" y=\"44\">", width / 2);
		svg_escape(f, o->subtitle, SIZE_MAX);
		fputs("</text>\n", f);
	}
	fprintf(f, "<text x=\"%d\" y=\"%d\">Hover over a box for its frame, time and share. Wider = more time; "
		   "a box's parent is below it.</text>\n",
		PAD_X, l->height - 8);
}

int tb_flamegraph_svg(const struct tb_folded *lines, size_t n, const struct tb_flame_opts *opts, FILE *out)
{
	static const struct tb_flame_opts defaults;
	struct node root = {.name = "all"};
	struct layout l = {.out = out, .o = opts ? opts : &defaults};
	int width = l.o->width > 2 * PAD_X + 100 ? l.o->width : 1200, rc = 0;

	if (!out || (!lines && n))
		return -EINVAL;
	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = add_line(&root, &lines[i], &l.depth_max);
	if (rc == 0) {
		l.total = root.value ? root.value : 1;
		l.px_per_value = (double)(width - 2 * PAD_X) / (double)l.total;
		l.height = TOP + (l.depth_max + 1) * FRAME_H + BOTTOM;
		put_header(&l, width);
		if (root.value)
			draw(&l, &root, PAD_X, 0);
		else
			fprintf(out, "<text x=\"%d\" y=\"%d\">(no samples)</text>\n", PAD_X, TOP + FRAME_H);
		fputs("</svg>\n", out);
		rc = ferror(out) || fflush(out) ? -EIO : 0;
	}
	free_tree(root.child);
	return rc;
}
